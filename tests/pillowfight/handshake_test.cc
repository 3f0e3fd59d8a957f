// The Couchbase bootstrap against the server's own SASL and cluster map:
// HELLO features, PLAIN and SCRAM logins, bucket selection, and clear
// failures.
#include <gtest/gtest.h>

#include "pillowfight/handshake.h"
#include "protocol/auth/sasl_server.h"
#include "protocol/binary_request.h"
#include "protocol/binary_response.h"
#include "protocol/cluster_map.h"

namespace kvexec::pillowfight {
namespace {

using protocol::Feature;
using protocol::Opcode;
using protocol::Status;

// Plays the server's side for one Handshake, answering with the server's
// own SASL session and cluster map.
class FakeServer {
  public:
    explicit FakeServer(const protocol::auth::Users& users) : sasl_(users) {}

    bool acceptSyncReplication = true;
    std::string bucket = "default";
    std::vector<Opcode> seen;
    bool helloCollections = false;  // the client asked for HELLO Collections
    bool helloMapPushes = false;    // ... for ClustermapChangeNotification
    bool helloDuplex = false;       // ... and for Duplex, which pushes need

    // The answer to `requestBytes` (one request).
    std::string answer(const std::string& requestBytes) {
        const auto parsed = protocol::parseRequest(requestBytes, protocol::RequestLimits{});
        EXPECT_EQ(parsed.outcome, protocol::ParseOutcome::Ok);
        const auto& r = parsed.request;
        seen.push_back(r.opcode);
        std::string out;
        const auto respond = [&](Status status, std::string_view value = {}) {
            protocol::appendResponse(out, {r.opcode, status, r.opaque, 0, 0}, {}, {}, value);
        };
        switch (r.opcode) {
            case Opcode::Hello: {
                std::string accepted;
                for (std::size_t at = 0; at + 2 <= r.value.size(); at += 2) {
                    const auto f = static_cast<Feature>(protocol::readBe16(r.value, at));
                    helloCollections = helloCollections || f == Feature::Collections;
                    helloMapPushes = helloMapPushes || f == Feature::ClustermapChangeNotification;
                    helloDuplex = helloDuplex || f == Feature::Duplex;
                    if (f != Feature::SyncReplication || acceptSyncReplication) {
                        accepted.append(r.value.substr(at, 2));
                    }
                }
                respond(Status::Success, accepted);
                break;
            }
            case Opcode::SaslAuth:
            case Opcode::SaslStep: {
                const auto reply = r.opcode == Opcode::SaslAuth ? sasl_.start(r.key, r.value)
                                                                : sasl_.step(r.key, r.value);
                respond(reply.outcome == protocol::auth::SaslOutcome::Success ? Status::Success
                        : reply.outcome == protocol::auth::SaslOutcome::Continue
                            ? Status::AuthContinue
                            : Status::AuthError,
                        reply.payload);
                break;
            }
            case Opcode::SelectBucket:
                respond(r.key == bucket ? Status::Success : Status::KeyNotFound);
                break;
            case Opcode::GetClusterConfig: {
                protocol::ClusterMapInfo info;
                info.host = "127.0.0.1";
                info.kvPort = 11210;
                info.vbucketCount = 128;
                respond(Status::Success, protocol::clusterMapJson(info));
                break;
            }
            case Opcode::GetCollectionId: {
                if (r.value != "app.orders") {
                    respond(Status::UnknownCollection);
                    break;
                }
                std::string extras;
                protocol::appendBe64(extras, 3);    // manifest uid
                protocol::appendBe32(extras, 200);  // collection id: 2 LEB128 bytes
                protocol::appendResponse(out, {r.opcode, Status::Success, r.opaque, 0, 0}, extras,
                                         {}, {});
                break;
            }
            default:
                respond(Status::UnknownCommand);
        }
        return out;
    }

  private:
    protocol::auth::SaslSession sasl_;
};

struct Outcome {
    Handshake::State state;
    std::string error;
    std::uint16_t vbuckets;
    std::string keyPrefix;
};

Outcome run(const Options& options, FakeServer& server) {
    Handshake handshake(options);
    std::string next = handshake.start();
    for (int steps = 0; steps < 10; ++steps) {
        const std::string answer = server.answer(next);
        const auto parsed = protocol::parseResponse(answer);
        EXPECT_EQ(parsed.outcome, protocol::ResponseOutcome::Ok);
        const auto step = handshake.onResponse(parsed.response);
        if (step.state == Handshake::State::Done || step.state == Handshake::State::Failed) {
            return {step.state, step.error, handshake.route().vbucketCount(),
                    handshake.keyPrefix()};
        }
        next = step.send;
    }
    return {Handshake::State::Failed, "did not finish", 0, {}};
}

class PillowfightHandshake : public ::testing::Test {
  protected:
    PillowfightHandshake() {
        users_.add({"Administrator", "asdasd", 64}, protocol::auth::Role::Client);
    }
    protocol::auth::Users users_;
    Options options_ = [] {
        Options o;
        o.user = "Administrator";
        o.password = "asdasd";
        o.durability = protocol::DurabilityLevel::PersistToMajority;
        return o;
    }();
};

TEST_F(PillowfightHandshake, ScramLoginSelectsTheBucketAndLearnsTheVbucketCount) {
    for (const char* mechanism : {"SCRAM-SHA512", "SCRAM-SHA256", "SCRAM-SHA1", "PLAIN"}) {
        FakeServer server(users_);
        options_.saslMechanism = mechanism;
        const Outcome o = run(options_, server);
        EXPECT_EQ(o.state, Handshake::State::Done) << mechanism << ": " << o.error;
        EXPECT_EQ(o.vbuckets, 128);
        EXPECT_EQ(server.seen.front(), Opcode::Hello);
        EXPECT_EQ(server.seen.back(), Opcode::GetClusterConfig);
    }
}

TEST_F(PillowfightHandshake, WithoutAUserThereIsNoSasl) {
    FakeServer server(users_);
    options_.user.clear();
    EXPECT_EQ(run(options_, server).state, Handshake::State::Done);
    EXPECT_EQ(server.seen,
              (std::vector<Opcode>{Opcode::Hello, Opcode::SelectBucket, Opcode::GetClusterConfig}));
    EXPECT_TRUE(server.helloMapPushes) << "a failover's map would wait for a config poll";
    EXPECT_TRUE(server.helloDuplex) << "Couchbase refuses map pushes without Duplex";
}

TEST_F(PillowfightHandshake, AWrongPasswordFailsNamingSasl) {
    FakeServer server(users_);
    options_.password = "wrong";
    const Outcome o = run(options_, server);
    EXPECT_EQ(o.state, Handshake::State::Failed);
    EXPECT_NE(o.error.find("SASL"), std::string::npos) << o.error;
}

TEST_F(PillowfightHandshake, DurableWritesNeedSyncReplication) {
    FakeServer server(users_);
    server.acceptSyncReplication = false;
    const Outcome o = run(options_, server);
    EXPECT_EQ(o.state, Handshake::State::Failed);
    EXPECT_NE(o.error.find("sync_replication"), std::string::npos) << o.error;
}

TEST_F(PillowfightHandshake, ACollectionIsResolvedToTheKeyPrefixOfItsId) {
    FakeServer server(users_);
    options_.collection = "app.orders";
    const Outcome o = run(options_, server);
    ASSERT_EQ(o.state, Handshake::State::Done) << o.error;
    EXPECT_TRUE(server.helloCollections);
    EXPECT_EQ(server.seen.back(), Opcode::GetCollectionId);
    EXPECT_EQ(o.keyPrefix, "\xc8\x01");  // 200 in LEB128
}

TEST_F(PillowfightHandshake, WithoutACollectionKeysHaveNoPrefix) {
    FakeServer server(users_);
    const Outcome o = run(options_, server);
    ASSERT_EQ(o.state, Handshake::State::Done) << o.error;
    EXPECT_FALSE(server.helloCollections);
    EXPECT_EQ(o.keyPrefix, "");
}

TEST_F(PillowfightHandshake, AnUnknownCollectionFailsNamingIt) {
    FakeServer server(users_);
    options_.collection = "app.nope";
    const Outcome o = run(options_, server);
    EXPECT_EQ(o.state, Handshake::State::Failed);
    EXPECT_NE(o.error.find("app.nope"), std::string::npos) << o.error;
}

TEST_F(PillowfightHandshake, AnUnknownBucketFailsNamingIt) {
    FakeServer server(users_);
    options_.bucket = "travel";
    const Outcome o = run(options_, server);
    EXPECT_EQ(o.state, Handshake::State::Failed);
    EXPECT_NE(o.error.find("travel"), std::string::npos) << o.error;
}

}  // namespace
}  // namespace kvexec::pillowfight
