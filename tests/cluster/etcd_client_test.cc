// EtcdClient (cluster/etcd_client.h) against a real etcd: keys, prefixes,
// compare-and-swap, leases, and errors that name the endpoint.
#include <gtest/gtest.h>

#include "cluster/etcd_client.h"
#include "etcd_fixture.h"
#include "watch_recorder.h"

namespace kvexec::cluster::test {
namespace {

class EtcdClientTest : public EtcdTest {
  protected:
    EtcdClient& client() {
        if (!client_) {
            client_ = std::make_unique<EtcdClient>(etcd().endpoint());
        }
        return *client_;
    }

  private:
    std::unique_ptr<EtcdClient> client_;
};

TEST_F(EtcdClientTest, PutThenGetReturnsTheValueAndItsRevision) {
    const std::int64_t revision = client().put("k", "v1");
    const auto got = client().get("k");
    ASSERT_TRUE(got);
    EXPECT_EQ(got->value, "v1");
    EXPECT_EQ(got->modRevision, revision);
    EXPECT_GT(client().put("k", "v2"), revision);
    EXPECT_EQ(client().get("k")->value, "v2");
}

TEST_F(EtcdClientTest, GetOfAnAbsentKeyIsNullopt) {
    EXPECT_FALSE(client().get("absent"));
}

TEST_F(EtcdClientTest, BinaryKeysAndValuesSurvive) {
    const std::string key("\x00\xff/k\n", 5);
    const std::string value("\x00\x01\x80\xff", 4);
    client().put(key, value);
    ASSERT_TRUE(client().get(key));
    EXPECT_EQ(client().get(key)->value, value);
    client().put("empty", "");
    EXPECT_EQ(client().get("empty")->value, "");
}

TEST_F(EtcdClientTest, GetPrefixReturnsOnlyThePrefixInKeyOrder) {
    client().put("/r/nodes/b", "2");
    client().put("/r/nodes/a", "1");
    client().put("/r/nodesX", "not under /r/nodes/");
    client().put("/q", "elsewhere");
    const auto kvs = client().getPrefix("/r/nodes/");
    ASSERT_EQ(kvs.size(), 2u);
    EXPECT_EQ(kvs[0].key, "/r/nodes/a");
    EXPECT_EQ(kvs[1].key, "/r/nodes/b");
    EXPECT_TRUE(client().getPrefix("/none/").empty());
}

TEST_F(EtcdClientTest, DeleteRemovesTheKeyAndSaysWhetherItWasThere) {
    client().put("k", "v");
    EXPECT_TRUE(client().del("k"));
    EXPECT_FALSE(client().get("k"));
    EXPECT_FALSE(client().del("k"));
}

TEST_F(EtcdClientTest, CasWithZeroCreatesOnlyWhenAbsent) {
    const CasResult created = client().putIf("k", "first", 0);
    EXPECT_TRUE(created.succeeded);
    EXPECT_EQ(client().get("k")->modRevision, created.revision);
    const CasResult again = client().putIf("k", "second", 0);
    EXPECT_FALSE(again.succeeded);
    ASSERT_TRUE(again.current);
    EXPECT_EQ(again.current->value, "first");
    EXPECT_EQ(client().get("k")->value, "first");
}

TEST_F(EtcdClientTest, CasSucceedsOnTheExpectedRevisionOnly) {
    const std::int64_t first = client().put("k", "v1");
    const CasResult swapped = client().putIf("k", "v2", first);
    ASSERT_TRUE(swapped.succeeded);
    // A writer still holding `first` lost the race: it learns the winner.
    const CasResult stale = client().putIf("k", "v3", first);
    EXPECT_FALSE(stale.succeeded);
    ASSERT_TRUE(stale.current);
    EXPECT_EQ(stale.current->value, "v2");
    EXPECT_EQ(stale.current->modRevision, swapped.revision);
    // Expecting a revision of a key that is absent fails too.
    const CasResult gone = client().putIf("absent", "v", first);
    EXPECT_FALSE(gone.succeeded);
    EXPECT_FALSE(gone.current);
}

TEST_F(EtcdClientTest, FencedPutNeedsEveryCompareToHold) {
    const std::int64_t term = client().put("/r/leader", "n1");
    const CasResult first =
        client().putIfUnchanged("/r/map", "m1", {{"/r/leader", term}, {"/r/map", 0}});
    ASSERT_TRUE(first.succeeded);
    EXPECT_EQ(client().get("/r/map")->value, "m1");
    // A new term: a write fenced by the old one fails, whatever the map's
    // own revision, and says what the key holds.
    client().put("/r/leader", "n2");
    const CasResult stale =
        client().putIfUnchanged("/r/map", "m2", {{"/r/leader", term}, {"/r/map", first.revision}});
    EXPECT_FALSE(stale.succeeded);
    ASSERT_TRUE(stale.current);
    EXPECT_EQ(stale.current->value, "m1");
    EXPECT_EQ(client().get("/r/map")->value, "m1");
}

TEST_F(EtcdClientTest, KeepAliveRenewsALiveLease) {
    const std::int64_t lease = client().grantLease(std::chrono::seconds(10));
    EXPECT_GT(lease, 0);
    const std::int64_t ttl = client().keepAlive(lease);
    EXPECT_GT(ttl, 0);
    EXPECT_LE(ttl, 10);
}

TEST_F(EtcdClientTest, KeyUnderAnExpiredLeaseDisappears) {
    const std::int64_t lease = client().grantLease(std::chrono::seconds(1));
    client().put("leased", "v", lease);
    WatchRecorder recorder;
    const auto watch = client().watchPrefix("leased", 0, recorder.onEvent(), recorder.onEnd());
    ASSERT_TRUE(client().get("leased"));
    // No keepalive: etcd deletes the key when the lease expires.
    EXPECT_TRUE(recorder.waitFor(
        [](const WatchEvent& e) { return e.type == WatchEvent::Type::Delete && e.key == "leased"; },
        kEtcdDeadline));
    EXPECT_FALSE(client().get("leased"));
    EXPECT_EQ(client().keepAlive(lease), 0);
}

TEST_F(EtcdClientTest, RevokeDeletesTheLeasesKeysAtOnce) {
    const std::int64_t lease = client().grantLease(std::chrono::seconds(60));
    client().put("leased", "v", lease);
    EXPECT_TRUE(client().revoke(lease));
    EXPECT_FALSE(client().get("leased"));
    EXPECT_EQ(client().keepAlive(lease), 0);
    EXPECT_FALSE(client().revoke(lease));
}

TEST_F(EtcdClientTest, ErrorsNameTheEndpointAndEtcdsMessage) {
    try {
        client().put("k", "v", /*leaseId=*/12345);
        ADD_FAILURE() << "a put under an unknown lease was accepted";
    } catch (const EtcdError& error) {
        const std::string what = error.what();
        EXPECT_NE(what.find(etcd().url() + "/v3/kv/put"), std::string::npos) << what;
        EXPECT_NE(what.find("lease not found"), std::string::npos) << what;
    }
}

TEST_F(EtcdClientTest, UnreachableEtcdIsAnErrorNotAHang) {
    const EtcdEndpoint endpoint = etcd().endpoint();
    etcd().stop();
    EtcdClient gone(endpoint, std::chrono::milliseconds(2'000));
    try {
        gone.get("k");
        ADD_FAILURE() << "a read from a stopped etcd succeeded";
    } catch (const EtcdError& error) {
        EXPECT_NE(std::string(error.what()).find(endpoint.url()), std::string::npos)
            << error.what();
    }
}

TEST(EtcdFixtureTest, MissingEtcdFailsSayingToRunInstallDeps) {
    try {
        EtcdProcess missing("/nonexistent/etcd");
        ADD_FAILURE() << "started an etcd that does not exist";
    } catch (const std::runtime_error& error) {
        EXPECT_NE(std::string(error.what()).find("tools/install-deps"), std::string::npos)
            << error.what();
    }
}

TEST(EtcdUrlTest, ParsesHttpHostPortOnly) {
    EXPECT_EQ(parseEtcdUrl("http://127.0.0.1:2379").port, 2379);
    EXPECT_EQ(parseEtcdUrl("http://[::1]:2379/").host, "::1");
    EXPECT_EQ(parseEtcdUrl("http://[::1]:2379").url(), "http://[::1]:2379");
    for (const char* bad : {"ftp://h:1", "http://h", "http://:1", "http://h:0", "http://h:x",
                            "http://h:65536", "h:1"}) {
        EXPECT_THROW(parseEtcdUrl(bad), std::invalid_argument) << bad;
    }
}

}  // namespace
}  // namespace kvexec::cluster::test
