// Cluster-map pushes (HELLO ClustermapChangeNotification) with several
// buckets, in process: a real Server with two front ends over two real
// buckets, and FrontEnd::pushClusterMap called as each bucket's ClusterNode
// calls it. A map pushed for one bucket reaches the subscribed connections
// that selected that bucket, on every front end, and no other; a client on
// another bucket would otherwise take a map of the wrong bucket (its
// revisions count apart) and route its keys by it.
#include <event2/thread.h>
#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "engine/engine_test_support.h"
#include "executor/test_support.h"
#include "protocol/binary_response.h"
#include "protocol/binary_types.h"
#include "protocol/client_codec.h"
#include "server/front_end.h"
#include "server/server.h"
#include "server_process.h"

namespace kvexec::server::test {
namespace {

using protocol::Opcode;
using protocol::Status;

// The server's loops are reached from the test thread.
[[maybe_unused]] const int kLibeventThreads = evthread_use_pthreads();

constexpr std::size_t kVBuckets = 4;
constexpr auto kSuccess = static_cast<std::uint16_t>(Status::Success);
constexpr std::uint8_t kClustermapChangeNotification = 0x01;

std::unique_ptr<engine::Bucket> openBucket(ExecutorPool& pool, const engine::test::TempDir& dir,
                                           const std::string& name) {
    engine::BucketConfig config = engine::test::testConfig(dir);
    config.name = name;
    config.numVBuckets = kVBuckets;
    return engine::test::openWarmedUp(pool, config);
}

class MapPushTest : public ::testing::Test {
  protected:
    void SetUp() override {
        pool_ = ExecutorPool::create(Backend::Wheel);
        defaultBucket_ = openBucket(*pool_, defaultDir_, "default");
        travelBucket_ = openBucket(*pool_, travelDir_, "travel");
        context_.config.host = "127.0.0.1";
        context_.config.port = 0;
        context_.config.vbuckets = kVBuckets;
        context_.config.frontendThreads = 2;
        context_.pool = pool_.get();
        context_.buckets.push_back({"default", defaultBucket_.get()});
        context_.buckets.push_back({"travel", travelBucket_.get()});
        server_ = std::make_unique<Server>(context_);
        serverThread_ = std::thread([this] {
            try {
                server_->run(serverOutput_);
            } catch (const std::exception& error) {
                ADD_FAILURE() << "the server stopped: " << error.what();
            }
        });
        ASSERT_TRUE(kvexec::test::waitFor([&] { return context_.boundPort.load() != 0; }));
    }
    void TearDown() override {
        if (serverThread_.joinable()) {
            server_->requestStop();
            serverThread_.join();
        }
        server_.reset();
        travelBucket_.reset();
        defaultBucket_.reset();
    }

    // A connection on `bucket` that asked for map pushes.
    std::unique_ptr<Client> subscribe(const std::string& bucket) {
        auto client = std::make_unique<Client>(context_.boundPort.load());
        std::string features;
        for (const auto feature : {protocol::Feature::Xerror, protocol::Feature::Duplex,
                                   protocol::Feature::ClustermapChangeNotification}) {
            protocol::appendBe16(features, static_cast<std::uint16_t>(feature));
        }
        EXPECT_EQ(statusOf(client->call(request(Opcode::Hello, "push", {}, features))), kSuccess);
        EXPECT_EQ(statusOf(client->call(request(Opcode::SelectBucket, bucket))), kSuccess);
        return client;
    }

    // What a ClusterNode pushes once a map of `revision` is applied
    // everywhere: one node (this one), every vBucket active on it.
    std::shared_ptr<const ClusterTopology> topology(std::uint64_t revision) const {
        auto topology = std::make_shared<ClusterTopology>();
        protocol::ClusterMapNode node;
        node.host = "127.0.0.1";
        node.kvPort = context_.boundPort.load();
        node.thisNode = true;
        topology->nodes.push_back(node);
        topology->chains.assign(kVBuckets, std::vector<int>{0});
        topology->revision = revision;
        return topology;
    }

    void pushToEveryFrontEnd(const ServedBucket& served, std::uint64_t revision) {
        const auto pushed = topology(revision);
        for (FrontEnd* frontEnd : context_.frontEnds) {
            frontEnd->pushClusterMap(served, pushed);
        }
    }

    engine::test::TempDir defaultDir_, travelDir_;
    std::unique_ptr<ExecutorPool> pool_;
    std::unique_ptr<engine::Bucket> defaultBucket_, travelBucket_;
    ServerContext context_;
    std::ostringstream serverOutput_;  // run()'s ready line, unread
    std::unique_ptr<Server> server_;
    std::thread serverThread_;
};

// The next packet `client` gets is a pushed map of `bucket` at `revision`.
void expectPush(Client& client, const std::string& bucket, std::uint64_t revision) {
    const auto packet = client.readResponse();
    ASSERT_TRUE(packet) << bucket << ": no map was pushed";
    ASSERT_EQ(packet->opcode, kClustermapChangeNotification) << bucket;
    EXPECT_EQ(packet->key, bucket);
    EXPECT_EQ(nlohmann::json::parse(packet->value).value("rev", 0), revision) << bucket;
}

// Nothing else was pushed: a NOOP sent now is answered before anything
// else comes (the pushes were handed to its front end before it was sent).
void expectNothingMore(Client& client, const std::string& bucket) {
    const auto answer = client.call(request(Opcode::Noop));
    ASSERT_TRUE(answer) << bucket;
    EXPECT_EQ(answer->opcode, static_cast<std::uint8_t>(Opcode::Noop))
        << bucket << ": got a push of another bucket";
}

TEST_F(MapPushTest, AMapIsPushedOnlyToTheConnectionsOnItsBucket) {
    // Accepted connections go to the front ends in turn: each bucket has a
    // subscriber on each of the two.
    auto default0 = subscribe("default");
    auto default1 = subscribe("default");
    auto travel0 = subscribe("travel");
    auto travel1 = subscribe("travel");
    Client unselected(context_.boundPort.load());  // subscribed, never selected a bucket
    std::string features;
    protocol::appendBe16(
        features, static_cast<std::uint16_t>(protocol::Feature::ClustermapChangeNotification));
    protocol::appendBe16(features, static_cast<std::uint16_t>(protocol::Feature::Duplex));
    ASSERT_EQ(statusOf(unselected.call(request(Opcode::Hello, "push", {}, features))), kSuccess);

    // default's map runs ahead of travel's: taken by a travel client, it
    // would also hide travel's own next maps (an older revision).
    pushToEveryFrontEnd(context_.buckets[0], 5);
    pushToEveryFrontEnd(context_.buckets[1], 3);
    for (Client* client : {default0.get(), default1.get()}) {
        expectPush(*client, "default", 5);
        expectNothingMore(*client, "default");
    }
    for (Client* client : {travel0.get(), travel1.get()}) {
        expectPush(*client, "travel", 3);
        expectNothingMore(*client, "travel");
    }
    expectNothingMore(unselected, "none selected");

    // A connection that moves gets the maps of its new bucket.
    ASSERT_EQ(statusOf(travel0->call(request(Opcode::SelectBucket, "default"))), kSuccess);
    pushToEveryFrontEnd(context_.buckets[1], 4);
    pushToEveryFrontEnd(context_.buckets[0], 6);
    expectPush(*travel0, "default", 6);
    expectNothingMore(*travel0, "default");
    expectPush(*travel1, "travel", 4);
    expectNothingMore(*travel1, "travel");
}

}  // namespace
}  // namespace kvexec::server::test
