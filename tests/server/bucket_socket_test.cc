// Several buckets in one kvexec-server (--bucket, once each), against the
// real binary: a connection starts on the first bucket and SELECT_BUCKET
// moves it; the same key is a different document in each bucket, each
// bucket's STAT figures are its own, each keeps its documents in its own
// directory across a restart, and a data directory laid out for one
// bucket is refused for several (and back) instead of serving an empty
// bucket beside the files of the real one.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include "protocol/binary_response.h"
#include "protocol/client_codec.h"
#include "protocol/dcp.h"
#include "protocol/keys.h"
#include "server_process.h"
#include "server_process_test.h"

namespace kvexec::server::test {
namespace {

using protocol::Opcode;
using protocol::Status;

constexpr auto kSuccess = static_cast<std::uint16_t>(Status::Success);
constexpr auto kNotFound = static_cast<std::uint16_t>(Status::KeyNotFound);
constexpr auto kNoAccess = static_cast<std::uint16_t>(Status::NoAccess);
constexpr std::uint16_t kVBuckets = 16;  // ServerProcess starts every server with --vbuckets 16
const std::vector<std::string> kTwoBuckets = {"--bucket", "default", "--bucket", "travel"};

std::optional<BinaryResponse> set(Client& client, const std::string& key,
                                  const std::string& value) {
    return client.call(request(Opcode::Set, key, std::string(8, '\0'), value));
}

// The value of `key`, "" if it is not found; nullopt if no answer came.
std::optional<std::string> valueOf(Client& client, const std::string& key) {
    const auto got = client.call(request(Opcode::Get, key));
    if (!got || (got->status != kSuccess && got->status != kNotFound)) {
        return std::nullopt;
    }
    return got->status == kSuccess ? got->value : "";
}

// Runs kvexec-server to its exit, which must be a refusal to start: one
// that serves is stopped after 20 s (exit code 124). Its exit code and
// stderr.
std::pair<int, std::string> runToRefusal(const std::string& dataDir,
                                         const std::vector<std::string>& args) {
    const std::string errors = dataDir + ".stderr";
    std::string command = "timeout 20 " + std::string(KVEXEC_SERVER_BINARY) +
                          " --host 127.0.0.1 --port 0 --vbuckets 16 --sync none --data-dir " +
                          dataDir;
    for (const auto& arg : args) {
        command += " " + arg;
    }
    command += " > /dev/null 2> " + errors;
    const int status = std::system(command.c_str());
    std::ostringstream text;
    text << std::ifstream(errors).rdbuf();
    std::filesystem::remove(errors);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text.str()};
}

using BucketSocketTest = ServerProcessTest;

TEST_F(BucketSocketTest, TheSameKeyIsADifferentDocumentInEachBucket) {
    start(kTwoBuckets);
    Client first(server_->port());  // never selects: the first bucket
    ASSERT_EQ(statusOf(set(first, "k", "in-default")), kSuccess);

    Client travel(server_->port());
    ASSERT_EQ(statusOf(travel.call(request(Opcode::SelectBucket, "travel"))), kSuccess);
    EXPECT_EQ(valueOf(travel, "k"), "");
    ASSERT_EQ(statusOf(set(travel, "k", "in-travel")), kSuccess);
    ASSERT_EQ(statusOf(set(travel, "only-travel", "t")), kSuccess);
    EXPECT_EQ(valueOf(travel, "k"), "in-travel");
    EXPECT_EQ(valueOf(first, "k"), "in-default");
    EXPECT_EQ(valueOf(first, "only-travel"), "");

    // Each bucket's figures are its own.
    EXPECT_EQ(binaryStats(first)["curr_items"], "1");
    EXPECT_EQ(binaryStats(travel)["curr_items"], "2");

    // Back and forth on one connection.
    ASSERT_EQ(statusOf(travel.call(request(Opcode::SelectBucket, "default"))), kSuccess);
    EXPECT_EQ(valueOf(travel, "k"), "in-default");
    ASSERT_EQ(statusOf(travel.call(request(Opcode::SelectBucket, "travel"))), kSuccess);
    EXPECT_EQ(valueOf(travel, "k"), "in-travel");

    // An unknown bucket is refused and the connection stays where it was.
    EXPECT_EQ(statusOf(travel.call(request(Opcode::SelectBucket, "nope"))), kNoAccess);
    EXPECT_EQ(valueOf(travel, "k"), "in-travel");

    // The text protocol, which cannot select, serves the first bucket.
    Client text(server_->port());
    ASSERT_TRUE(text.send("get k\r\n"));
    EXPECT_EQ(text.readLine(), "VALUE k 0 10\r\n");
    EXPECT_EQ(text.readLine(), "in-default\r\n");
    EXPECT_EQ(text.readLine(), "END\r\n");
}

// STAT's request counters are the selected bucket's, as Couchbase's are,
// whichever front end or connection counted them.
TEST_F(BucketSocketTest, EachBucketCountsItsOwnRequests) {
    start(kTwoBuckets);
    Client first(server_->port());
    for (const char* key : {"a", "b", "c"}) {
        ASSERT_EQ(statusOf(set(first, key, "v")), kSuccess);
    }
    EXPECT_EQ(valueOf(first, "a"), "v");

    Client travel(server_->port());
    ASSERT_EQ(statusOf(travel.call(request(Opcode::SelectBucket, "travel"))), kSuccess);
    ASSERT_EQ(statusOf(set(travel, "t", "v")), kSuccess);
    EXPECT_EQ(valueOf(travel, "a"), "");
    EXPECT_EQ(valueOf(travel, "b"), "");

    auto firstStats = binaryStats(first);
    EXPECT_EQ(firstStats["cmd_set"], "3");
    EXPECT_EQ(firstStats["cmd_get"], "1");
    EXPECT_EQ(firstStats["get_hits"], "1");
    EXPECT_EQ(firstStats["get_misses"], "0");
    auto travelStats = binaryStats(travel);
    EXPECT_EQ(travelStats["cmd_set"], "1");
    EXPECT_EQ(travelStats["cmd_get"], "2");
    EXPECT_EQ(travelStats["get_hits"], "0");
    EXPECT_EQ(travelStats["get_misses"], "2");

    // A connection that moves counts where it is now.
    ASSERT_EQ(statusOf(first.call(request(Opcode::SelectBucket, "travel"))), kSuccess);
    EXPECT_EQ(valueOf(first, "t"), "v");
    travelStats = binaryStats(travel);
    EXPECT_EQ(travelStats["cmd_get"], "3");
    EXPECT_EQ(travelStats["get_hits"], "1");
    ASSERT_EQ(statusOf(travel.call(request(Opcode::SelectBucket, "default"))), kSuccess);
    EXPECT_EQ(binaryStats(travel)["cmd_get"], "1");
}

std::optional<BinaryResponse> login(Client& client, const std::string& user,
                                    const std::string& password) {
    return client.call(
        request(Opcode::SaslAuth, "PLAIN", "", std::string(1, '\0') + user + '\0' + password));
}

// --users: a user confined to some buckets uses only those, as Couchbase's
// per-bucket roles allow; the first bucket, where every connection starts,
// is no exception. --user's user and one listed without buckets use all.
TEST_F(BucketSocketTest, AUserUsesOnlyTheBucketsItIsGiven) {
    TempDir etc;
    const std::string users = etc.path() + "/users.json";
    std::ofstream(users) << R"({"users": [
        {"name": "app", "password": "app-pw", "buckets": ["travel"]},
        {"name": "ops", "password": "ops-pw"}]})";
    start({"--bucket", "default", "--bucket", "travel", "--users", users, "--user", "admin",
           "--password", "admin-pw"});

    Client app(server_->port());
    ASSERT_EQ(statusOf(login(app, "app", "app-pw")), kSuccess);
    // The SDKs' cluster-wide bootstrap (GCCCP) asks before selecting.
    EXPECT_EQ(statusOf(app.call(request(Opcode::GetClusterConfig))), kSuccess);
    EXPECT_EQ(statusOf(set(app, "k", "app")), kNoAccess);  // on default, not app's
    EXPECT_EQ(statusOf(app.call(request(Opcode::Get, "k"))), kNoAccess);
    EXPECT_EQ(statusOf(app.call(request(Opcode::Stat))), kNoAccess);
    EXPECT_EQ(statusOf(app.call(request(Opcode::SelectBucket, "default"))), kNoAccess);
    // Text commands on the same connection, authenticated over binary,
    // are held to the same buckets.
    EXPECT_EQ(app.ask("set k 0 0 1\r\nx"), "CLIENT_ERROR no access to bucket default\r\n");
    ASSERT_EQ(statusOf(app.call(request(Opcode::SelectBucket, "travel"))), kSuccess);
    ASSERT_EQ(statusOf(set(app, "k", "app-travel")), kSuccess);
    ASSERT_TRUE(app.send("get k\r\n"));
    EXPECT_EQ(app.readLine(), "VALUE k 0 10\r\n");
    EXPECT_EQ(app.readLine(), "app-travel\r\n");
    EXPECT_EQ(app.readLine(), "END\r\n");
    EXPECT_EQ(statusOf(app.call(request(Opcode::SelectBucket, "default"))), kNoAccess);
    EXPECT_EQ(valueOf(app, "k"), "app-travel");  // still on travel

    for (const auto& [user, password] : {std::pair{"ops", "ops-pw"}, {"admin", "admin-pw"}}) {
        Client client(server_->port());
        ASSERT_EQ(statusOf(login(client, user, password)), kSuccess) << user;
        EXPECT_EQ(valueOf(client, "k"), "") << user;  // default
        ASSERT_EQ(statusOf(client.call(request(Opcode::SelectBucket, "travel"))), kSuccess);
        EXPECT_EQ(valueOf(client, "k"), "app-travel") << user;
    }
    Client wrong(server_->port());
    EXPECT_EQ(statusOf(login(wrong, "app", "ops-pw")),
              static_cast<std::uint16_t>(Status::AuthError));
}

// A users file that names a bucket the server does not serve, or is not
// what --users expects, stops the start with the reason.
TEST_F(BucketSocketTest, AUsersFileIsCheckedAtStart) {
    TempDir etc;
    const std::string users = etc.path() + "/users.json";
    std::ofstream(users)
        << R"({"users": [{"name": "app", "password": "pw", "buckets": ["nope"]}]})";
    auto [code, errors] = runToRefusal(dir_.path(), {"--bucket", "default", "--users", users});
    EXPECT_EQ(code, 1);
    EXPECT_NE(errors.find("app: no bucket named nope is served"), std::string::npos) << errors;

    std::tie(code, errors) = runToRefusal(dir_.path(), {"--users", etc.path() + "/missing.json"});
    EXPECT_EQ(code, 1);
    EXPECT_NE(errors.find("missing.json: cannot be read"), std::string::npos) << errors;
}

// A DCP producer streams the bucket its connection was on at DCP_OPEN,
// and the connection stays there.
TEST_F(BucketSocketTest, ADcpConnectionStreamsItsBucketAndStaysOnIt) {
    start(kTwoBuckets);
    Client writer(server_->port());
    ASSERT_EQ(statusOf(set(writer, "k", "in-default")), kSuccess);
    ASSERT_EQ(statusOf(writer.call(request(Opcode::SelectBucket, "travel"))), kSuccess);
    ASSERT_EQ(statusOf(set(writer, "k", "in-travel")), kSuccess);

    Client dcp(server_->port());
    ASSERT_EQ(statusOf(dcp.call(request(Opcode::SelectBucket, "travel"))), kSuccess);
    std::string extras(4, '\0');
    protocol::appendBe32(extras, protocol::dcp::kOpenProducer);
    ASSERT_EQ(statusOf(dcp.call(request(Opcode::DcpOpen, "observer:buckets", extras))), kSuccess);
    EXPECT_EQ(statusOf(dcp.call(request(Opcode::SelectBucket, "default"))),
              static_cast<std::uint16_t>(Status::NotSupported));
    EXPECT_EQ(statusOf(dcp.call(request(Opcode::SelectBucket, "travel"))), kSuccess);

    std::string streamRequest;
    protocol::dcp::encodeStreamRequest(streamRequest, {protocol::vbucketOfKey("k", kVBuckets), 1, 0,
                                                       0, ~std::uint64_t{0}, 0, 0, 0});
    ASSERT_TRUE(dcp.send(streamRequest));
    std::optional<std::string> streamed;
    while (const auto message = dcp.readResponse()) {
        if (message->opcode == static_cast<std::uint8_t>(Opcode::DcpMutation)) {
            streamed = message->value;
            break;
        }
    }
    EXPECT_EQ(streamed, "in-travel");
}

TEST_F(BucketSocketTest, EachBucketKeepsItsDocumentsInItsOwnDirectoryAcrossARestart) {
    start(kTwoBuckets);
    {
        Client client(server_->port());
        ASSERT_EQ(statusOf(set(client, "k", "in-default")), kSuccess);
        ASSERT_EQ(statusOf(client.call(request(Opcode::SelectBucket, "travel"))), kSuccess);
        ASSERT_EQ(statusOf(set(client, "k", "in-travel")), kSuccess);
    }
    stop();
    EXPECT_TRUE(std::filesystem::exists(dir_.path() + "/default/vbuckets.json"));
    EXPECT_TRUE(std::filesystem::exists(dir_.path() + "/travel/vbuckets.json"));

    start(kTwoBuckets);
    Client client(server_->port());
    EXPECT_EQ(valueOf(client, "k"), "in-default");
    ASSERT_EQ(statusOf(client.call(request(Opcode::SelectBucket, "travel"))), kSuccess);
    EXPECT_EQ(valueOf(client, "k"), "in-travel");
}

TEST_F(BucketSocketTest, EachBucketHasItsOwnMemoryQuota) {
    auto args = kTwoBuckets;
    args.insert(args.end(), {"--memory-quota", "1"});
    start(args);
    Client first(server_->port());
    Client travel(server_->port());
    ASSERT_EQ(statusOf(travel.call(request(Opcode::SelectBucket, "travel"))), kSuccess);
    for (Client* client : {&first, &travel}) {
        EXPECT_EQ(binaryStats(*client)["limit_maxbytes"], "1048576");
    }
    // 64 KiB values fill the first bucket's MiB (each counts twice until
    // persisted) within a few dozen writes; the next is refused.
    const std::string value(64 * 1024, 'v');
    std::uint16_t status = kSuccess;
    int stored = 0;
    while (status == kSuccess && stored < 64) {
        status = statusOf(set(first, "fill-" + std::to_string(stored), value));
        stored += status == kSuccess ? 1 : 0;
    }
    EXPECT_EQ(status, static_cast<std::uint16_t>(Status::TemporaryFailure));
    EXPECT_LT(stored, 64);
    // The other bucket's quota is untouched.
    EXPECT_EQ(statusOf(set(travel, "fill-0", value)), kSuccess);
}

TEST_F(BucketSocketTest, ADataDirOfOneBucketIsRefusedForSeveralAndBack) {
    start({});
    {
        Client client(server_->port());
        ASSERT_EQ(statusOf(set(client, "k", "kept")), kSuccess);
    }
    stop();
    const auto [code, errors] = runToRefusal(dir_.path(), kTwoBuckets);
    EXPECT_EQ(code, 1);
    EXPECT_NE(errors.find("holds the files of a single bucket"), std::string::npos) << errors;
    start({});  // the files were left alone
    {
        Client client(server_->port());
        EXPECT_EQ(valueOf(client, "k"), "kept");
    }
    stop();

    TempDir several;
    ServerProcess twoBuckets(several.path(),
                             {"--sync", "none", "--bucket", "travel", "--bucket", "beer"});
    ASSERT_EQ(twoBuckets.stop(SIGTERM), 0);
    const auto [back, backErrors] = runToRefusal(several.path(), {"--bucket", "travel"});
    EXPECT_EQ(back, 1);
    EXPECT_NE(backErrors.find("holds the files of "), std::string::npos) << backErrors;
    EXPECT_NE(backErrors.find("travel"), std::string::npos) << backErrors;
    // Nor may another single bucket start beside them.
    const auto [other, otherErrors] = runToRefusal(several.path(), {"--bucket", "fresh"});
    EXPECT_EQ(other, 1) << otherErrors;
}

}  // namespace
}  // namespace kvexec::server::test
