// kvexec-pillowfight against a real kvexec-server (started on --port 0 in a
// fresh directory): every operation is answered and counted once, durable
// writes reach the server's sync_write_commit histogram, and the JSON says
// so.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "child_process.h"

namespace kvexec::pillowfight {
namespace {

using namespace std::chrono_literals;
using test::ChildProcess;

// Generous: a loaded 2-core machine under a sanitizer is slow.
constexpr auto kDeadline = 120s;

class PillowfightEndToEnd : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = std::filesystem::temp_directory_path() /
               ("pillowfight-e2e-" + std::to_string(getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::remove_all(dir_);
        std::filesystem::create_directories(dir_ / "data");
        startServer();
    }

    // Stops the server, gives its bucket `manifest` (collections.json, as
    // the bucket writes it) and starts it again.
    void restartWithManifest(const std::string& manifest) {
        server_->terminate();
        ASSERT_EQ(server_->wait(kDeadline), 0) << server_->output();
        std::ofstream(dir_ / "data" / "collections.json") << manifest;
        startServer();
    }

    void startServer() {
        server_ = std::make_unique<ChildProcess>(std::vector<std::string>{
            KVEXEC_SERVER_BIN, "--port", "0", "--data-dir", (dir_ / "data").string(), "--vbuckets",
            "64", "--user", "Administrator", "--password", "asdasd"});
        const auto ready = server_->waitForLine("kvexec-server: ready on ", kDeadline);
        ASSERT_TRUE(ready) << server_->output();
        port_ = ready->substr(ready->rfind(':') + 1);
    }

    void TearDown() override {
        if (server_) {
            server_->terminate();
            EXPECT_EQ(server_->wait(kDeadline), 0) << server_->output();
        }
        std::filesystem::remove_all(dir_);
    }

    // Runs kvexec-pillowfight with `args` and returns its JSON.
    nlohmann::json pillowfight(std::vector<std::string> args, int expectedExit = 0) {
        const std::string json = (dir_ / "result.json").string();
        std::vector<std::string> argv{KVEXEC_PILLOWFIGHT_BIN, "--json", json};
        argv.insert(argv.end(), args.begin(), args.end());
        ChildProcess run(argv);
        EXPECT_EQ(run.wait(kDeadline), expectedExit) << run.output();
        std::ifstream in(json);
        return nlohmann::json::parse(in, nullptr, false);
    }

    std::string spec() const { return "couchbase://127.0.0.1:" + port_ + "/default"; }

    std::filesystem::path dir_;
    std::unique_ptr<ChildProcess> server_;
    std::string port_;
};

TEST_F(PillowfightEndToEnd, DurableWritesAreAllAnsweredAndCommitted) {
    const auto r = pillowfight({"-U",
                                spec(),
                                "-u",
                                "Administrator",
                                "-P",
                                "asdasd",
                                "-t",
                                "2",
                                "--connections",
                                "20",
                                "-B",
                                "2",
                                "-I",
                                "400",
                                "-m",
                                "512",
                                "-M",
                                "512",
                                "-R",
                                "-r",
                                "100",
                                "-c",
                                "5",
                                "--sequential",
                                "-d",
                                "persist_to_majority",
                                "-q"});
    ASSERT_FALSE(r.is_discarded());
    EXPECT_EQ(r["vbuckets"], 64);
    EXPECT_EQ(r["population"]["ops"], 400);
    EXPECT_EQ(r["population"]["errorCount"], 0);
    const auto& load = r["load"];
    EXPECT_EQ(load["ops"], 20 * 5 * 2);
    EXPECT_EQ(load["errorCount"], 0) << load["errors"].dump();
    EXPECT_EQ(load["histograms"]["SET"]["count"], 200);
    EXPECT_EQ(load["histograms"]["GET"]["count"], 0);
    const auto& server = r["server"];
    EXPECT_EQ(server["error"], "");
    EXPECT_EQ(server["histograms"]["sync_write_commit_persist_to_majority"]["count"], 200);
    EXPECT_EQ(server["stats"]["durable_writes"], "200");
    EXPECT_EQ(server["stats"]["curr_items"], "400");
}

TEST_F(PillowfightEndToEnd, GetsAfterPopulationAllHitAndMemcachedProtocolNeedsNoHandshake) {
    // The server has credentials: the plain binary client must log in...
    auto refused = pillowfight(
        {"-U", spec(), "--protocol", "memcached", "-I", "50", "-n", "-c", "1", "-B", "1", "-q"}, 3);
    EXPECT_GT(refused["load"]["errorCount"], 0);  // counted, not dropped
    // ...while a Couchbase client with the same load gets every key it stored.
    const auto r =
        pillowfight({"-U", spec(), "-u", "Administrator", "-P", "asdasd", "--sasl-mech", "PLAIN",
                     "--connections", "4", "-I", "100", "-r", "0", "-c", "10", "-B", "5", "-q"});
    EXPECT_EQ(r["population"]["ops"], 100);
    EXPECT_EQ(r["load"]["ops"], 4 * 10 * 5);
    EXPECT_EQ(r["load"]["histograms"]["GET"]["count"], 200);
    EXPECT_EQ(r["load"]["getMisses"], 0);
    EXPECT_EQ(r["load"]["errorCount"], 0);
}

TEST_F(PillowfightEndToEnd, SubdocLookupsAndUpsertsOfPopulatedJsonDocumentsAllSucceed) {
    const auto r = pillowfight({"-U",       spec(),        "-u",          "Administrator",
                                "-P",       "asdasd",      "--sasl-mech", "PLAIN",
                                "--subdoc", "--pathcount", "2",           "--connections",
                                "2",        "-I",          "40",          "-m",
                                "256",      "-M",          "256",         "-r",
                                "50",       "-c",          "5",           "-B",
                                "10",       "-q"});
    ASSERT_FALSE(r.is_discarded());
    EXPECT_TRUE(r["options"]["subdoc"]);
    EXPECT_EQ(r["population"]["ops"], 40);
    EXPECT_EQ(r["population"]["errorCount"], 0) << r["population"]["errors"].dump();
    const auto& load = r["load"];
    EXPECT_EQ(load["ops"], 2 * 5 * 10);
    EXPECT_EQ(load["errorCount"], 0) << load["errors"].dump();  // every path exists
    EXPECT_EQ(load["getMisses"], 0);
    EXPECT_EQ(load["histograms"]["SET"]["count"].get<int>() +
                  load["histograms"]["GET"]["count"].get<int>(),
              100);
}

TEST_F(PillowfightEndToEnd, ACollectionsLoadStaysInItsCollection) {
    restartWithManifest(R"({"uid":"1","next_scope_uid":"9","next_collection_uid":"9","scopes":[
        {"name":"_default","uid":"0","collections":[{"name":"_default","uid":"0"}]},
        {"name":"app","uid":"8","collections":[{"name":"orders","uid":"8"}]}]})");
    const std::vector<std::string> common{"-U", spec(),   "-u",          "Administrator",
                                          "-P", "asdasd", "--sasl-mech", "PLAIN",
                                          "-I", "50",     "-r",          "0",
                                          "-c", "5",      "-B",          "10",
                                          "-q"};
    auto args = common;
    args.insert(args.end(), {"--collection", "app.orders"});
    const auto r = pillowfight(args);
    ASSERT_FALSE(r.is_discarded());
    EXPECT_EQ(r["options"]["collection"], "app.orders");
    EXPECT_EQ(r["population"]["ops"], 50);
    EXPECT_EQ(r["load"]["errorCount"], 0) << r["load"]["errors"].dump();
    EXPECT_EQ(r["load"]["getMisses"], 0);
    // The same keys in the default collection were never written.
    args = common;
    args.push_back("-n");
    const auto plain = pillowfight(args);
    EXPECT_EQ(plain["load"]["ops"], 50);
    EXPECT_EQ(plain["load"]["getMisses"], 50);
    // An unknown collection stops at the handshake, naming it.
    args = common;
    args.insert(args.end(), {"--collection", "app.nope"});
    const auto unknown = pillowfight(args, 3);
    EXPECT_NE(unknown["load"]["errors"].dump().find("app.nope"), std::string::npos)
        << unknown.dump();
}

TEST_F(PillowfightEndToEnd, AWrongPasswordIsReportedAsAnError) {
    const auto r =
        pillowfight({"-U", spec(), "-u", "Administrator", "-P", "wrong", "-n", "-c", "1", "-q"}, 3);
    ASSERT_FALSE(r.is_discarded());
    const auto errors = r["load"]["errors"].dump();
    EXPECT_NE(errors.find("SASL"), std::string::npos) << errors;
}

// A server that accepts connections but never answers: every client's
// bootstrap times out, and each is counted as an error.
TEST(PillowfightTimeouts, AnUnansweredHandshakeIsCountedAsATimeout) {
    const int listener = socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(listener, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&address), length), 0);
    ASSERT_EQ(listen(listener, 16), 0);  // the kernel completes the connects; nobody reads
    ASSERT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length), 0);
    const std::string json = std::filesystem::temp_directory_path() /
                             ("pillowfight-timeout-" + std::to_string(getpid()) + ".json");
    ChildProcess run({KVEXEC_PILLOWFIGHT_BIN, "--json", json, "-q", "-U",
                      "couchbase://127.0.0.1:" + std::to_string(ntohs(address.sin_port)),
                      "--connections", "3", "-n", "-c", "1", "--timeout", "0.2"});
    EXPECT_EQ(run.wait(kDeadline), 3) << run.output();
    close(listener);
    std::ifstream in(json);
    const auto r = nlohmann::json::parse(in, nullptr, false);
    std::filesystem::remove(json);
    ASSERT_FALSE(r.is_discarded()) << run.output();
    EXPECT_EQ(r["load"]["errors"]["timeout (connect or handshake)"], 3) << r["load"].dump();
    EXPECT_NE(run.output().find("timeout (connect or handshake)"), std::string::npos);
}

}  // namespace
}  // namespace kvexec::pillowfight
