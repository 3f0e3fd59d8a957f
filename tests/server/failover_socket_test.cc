// Failover between kvexec-server processes (issue 27): three nodes with
// one replica per vBucket over a private etcd. A node killed is failed over
// once its lease expires: its vBuckets are led by their replicas, every
// write acknowledged at Majority is there, and new ones succeed; restarted,
// it comes back as a replica that holds what the new actives hold. A hard
// failover by hand (kvexec-cluster failover NODE) does the same at once.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <set>
#include <thread>

#include "protocol/keys.h"
#include "server/cluster_processes.h"

namespace kvexec::server::test {
namespace {

using protocol::DurabilityLevel;
using Clock = std::chrono::steady_clock;

constexpr std::uint16_t kVBuckets = 16;
constexpr auto kSuccess = static_cast<std::uint16_t>(protocol::Status::Success);

struct Acknowledged {
    std::string value;
    std::uint64_t cas = 0;
};

// Majority writes to `count` keys, each acknowledged (or the test fails).
std::map<std::string, Acknowledged> writeKeys(ClusterProcesses& cluster, int count,
                                              const std::string& value) {
    std::map<std::string, Acknowledged> written;
    for (int i = 0; i < count; ++i) {
        const std::string key = "key-" + std::to_string(i);
        const auto answer = cluster.writeOnceReplicated(key, value, DurabilityLevel::Majority);
        EXPECT_TRUE(answer && answer->status == kSuccess) << key;
        if (answer && answer->status == kSuccess) {
            written[key] = {value, answer->cas};
        }
    }
    return written;
}

// Every acknowledged write reads back from its key's active as written.
void expectEveryWriteOnItsActive(ClusterProcesses& cluster,
                                 const std::map<std::string, Acknowledged>& written) {
    for (const auto& [key, acknowledged] : written) {
        const auto copy = cluster.readWhenItHolds(key, 0, acknowledged.value);
        ASSERT_TRUE(copy.has_value()) << key;
        EXPECT_EQ(copy->status, kSuccess) << key;
        EXPECT_EQ(copy->value, acknowledged.value) << key;
        EXPECT_EQ(copy->cas, acknowledged.cas) << key << ": not the acknowledged write";
    }
}

// The keys whose vBucket node `port` leads in the map last seen.
std::vector<std::string> keysLedBy(const ClusterProcesses& cluster, std::uint16_t port,
                                   const std::map<std::string, Acknowledged>& written) {
    std::vector<std::string> keys;
    for (const auto& [key, acknowledged] : written) {
        if (cluster.portOf(key, 0) == port) {
            keys.push_back(key);
        }
    }
    return keys;
}

TEST(FailoverSocketTest, AKilledNodesVBucketsArePromotedWithEveryAcknowledgedWrite) {
    ClusterProcesses cluster(3, 1, kVBuckets, {"--failover-timeout", "2"});
    ASSERT_TRUE(cluster.waitForMap());
    const auto written = writeKeys(cluster, 64, "one");
    const std::uint16_t victimPort = cluster.node(0).port();
    const auto ledByVictim = keysLedBy(cluster, victimPort, written);
    ASSERT_FALSE(ledByVictim.empty());

    cluster.kill(0);
    ASSERT_TRUE(cluster.waitForMap()) << "no map without the killed node";
    expectEveryWriteOnItsActive(cluster, written);
    // Its vBuckets take writes again, replicated to the replicas the new
    // map gave them.
    for (const auto& key : ledByVictim) {
        const auto answer = cluster.writeOnceReplicated(key, "two", DurabilityLevel::Majority);
        ASSERT_TRUE(answer && answer->status == kSuccess) << key;
    }

    // Back on its data directory, it leads nothing it holds data for: it
    // is a replica again and catches up with what it missed.
    cluster.restart(0);
    ASSERT_TRUE(cluster.waitForMap());
    const std::uint16_t returned = cluster.node(0).port();
    for (const auto& key : ledByVictim) {
        EXPECT_NE(cluster.portOf(key, 0), returned) << key << " moved back without a rebalance";
        if (cluster.portOf(key, 1) == returned) {
            const auto copy = cluster.readWhenItHolds(key, 1, "two");
            ASSERT_TRUE(copy.has_value()) << key;
            EXPECT_EQ(copy->value, "two") << key << " did not catch up";
        }
    }
    EXPECT_TRUE(cluster.stopAll());
}

// Waits until node `observer` serves a map in which the node on `port`
// leads none of `vbuckets`.
bool waitUntilNoneLedBy(ClusterProcesses& cluster, std::size_t observer, std::uint16_t port,
                        const std::set<std::uint16_t>& vbuckets) {
    std::string server = ":";
    server += std::to_string(port);
    const auto deadline = Clock::now() + kSocketDeadline;
    while (Clock::now() < deadline) {
        const auto config = cluster.config(cluster.node(observer).port());
        if (config.is_object()) {
            const auto& map = config["vBucketServerMap"];
            bool promoted = true;
            for (const auto vb : vbuckets) {
                const int active = map["vBucketMap"][vb][0].get<int>();
                promoted =
                    promoted &&
                    (active < 0 || !map["serverList"][active].get<std::string>().ends_with(server));
            }
            if (promoted) {
                return true;
            }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
}

// The vBuckets of the keys node `port` leads in the map last seen.
std::set<std::uint16_t> vbucketsLedBy(const ClusterProcesses& cluster, std::uint16_t port,
                                      const std::map<std::string, Acknowledged>& written) {
    std::set<std::uint16_t> vbuckets;
    for (const auto& key : keysLedBy(cluster, port, written)) {
        vbuckets.insert(protocol::vbucketOfKey(key, kVBuckets));
    }
    return vbuckets;
}

// Three nodes whose lease (the failover timeout) is long enough that only
// something else than its expiry fails n0 over in time; 64 Majority
// writes, and the vBuckets n0 leads.
class LongLeaseFailoverTest : public ::testing::Test {
  protected:
    static constexpr std::chrono::seconds kFailoverTimeout{15};

    void SetUp() override {
        ASSERT_TRUE(cluster.waitForMap());
        written = writeKeys(cluster, 64, "one");
        victimPort = cluster.node(0).port();
        victimVBuckets = vbucketsLedBy(cluster, victimPort, written);
        ASSERT_FALSE(victimVBuckets.empty());
    }

    ClusterProcesses cluster{
        3, 1, kVBuckets, {"--failover-timeout", std::to_string(kFailoverTimeout.count())}};
    std::map<std::string, Acknowledged> written;
    std::uint16_t victimPort = 0;
    std::set<std::uint16_t> victimVBuckets;
};

// A node killed and restarted at once, well before its lease expires,
// joins under a new lease. Its old place in the map is failed over: what
// it led may have acknowledged writes its disk never saw, and its replicas
// hold them. It must not lead again from the map made for its old lease.
TEST_F(LongLeaseFailoverTest, ANodeBackBeforeItsLeaseExpiresIsFailedOverNotReinstated) {
    const auto killedAt = Clock::now();
    cluster.kill(0);
    cluster.restart(0);
    EXPECT_TRUE(waitUntilNoneLedBy(cluster, 1, cluster.node(0).port(), victimVBuckets))
        << "n0 leads its vBuckets again under its new lease";
    // n0 led the cluster too (the first node does): its restart ends that
    // term as well rather than leave the cluster leaderless until then.
    EXPECT_LT(Clock::now() - killedAt, kFailoverTimeout / 2)
        << "failed over only as its lease ran out";
    ASSERT_TRUE(cluster.waitForMap());
    expectEveryWriteOnItsActive(cluster, written);
    for (const auto& [key, acknowledged] : written) {
        if (victimVBuckets.contains(protocol::vbucketOfKey(key, kVBuckets))) {
            const auto answer = cluster.writeOnceReplicated(key, "two", DurabilityLevel::Majority);
            ASSERT_TRUE(answer && answer->status == kSuccess) << key;
        }
    }
    EXPECT_TRUE(cluster.stopAll());
}

// With a long failover timeout, only the command fails the node over in
// time; the node, still alive, stops leading once its keep-alive finds its
// lease gone (a third of the timeout) and joins again as a replica.
TEST_F(LongLeaseFailoverTest, AFailoverByHandPromotesTheReplicasAtOnce) {
    EXPECT_EQ(runClusterTool(cluster.etcdUrl(), "failover nope"), 1);
    const auto failedOverAt = Clock::now();
    ASSERT_EQ(runClusterTool(cluster.etcdUrl(), "failover n0"), 0);
    // Well before its lease could have expired, n1 serves a map in which
    // n0 leads none of those vBuckets.
    const bool promoted = waitUntilNoneLedBy(cluster, 1, victimPort, victimVBuckets);
    ASSERT_TRUE(promoted) << "n0's vBuckets were not promoted";
    EXPECT_LT(Clock::now() - failedOverAt, kFailoverTimeout) << "promoted only at its lease's end";
    ASSERT_TRUE(cluster.waitForMap());  // n0 back in it, as a replica
    expectEveryWriteOnItsActive(cluster, written);
    EXPECT_TRUE(cluster.stopAll());
}

// The vBuckets each server of the config leads, by port.
std::map<std::uint16_t, int> activesByPort(const nlohmann::json& map) {
    std::map<std::uint16_t, int> actives;
    for (const auto& chain : map["vBucketMap"]) {
        const auto server = map["serverList"][chain[0].get<int>()].get<std::string>();
        ++actives[static_cast<std::uint16_t>(std::stoi(server.substr(server.rfind(':') + 1)))];
    }
    return actives;
}

// A node joins a cluster that holds data: it leads nothing until
// `kvexec-cluster rebalance`, which moves its share to it (copied by DCP,
// then handed over) and keeps every acknowledged write where the map says.
TEST(RebalanceSocketTest, ARebalanceGivesAJoiningNodeItsShareAndKeepsEveryWrite) {
    ClusterProcesses cluster(2, 1, kVBuckets);
    ASSERT_TRUE(cluster.waitForMap());
    const auto written = writeKeys(cluster, 64, "one");
    const std::size_t joined = cluster.addNode();
    ASSERT_TRUE(cluster.waitForMap());
    const std::uint16_t joinedPort = cluster.node(joined).port();
    EXPECT_EQ(activesByPort(cluster.map())[joinedPort], 0);

    ASSERT_EQ(runClusterTool(cluster.etcdUrl(), "rebalance"), 0);
    ASSERT_TRUE(cluster.waitForMap());
    const auto actives = activesByPort(cluster.map());
    for (std::size_t i = 0; i < cluster.size(); ++i) {
        const int led =
            actives.contains(cluster.node(i).port()) ? actives.at(cluster.node(i).port()) : 0;
        EXPECT_GE(led, kVBuckets / 3) << "n" << i;
        EXPECT_LE(led, kVBuckets / 3 + 1) << "n" << i;
    }
    expectEveryWriteOnItsActive(cluster, written);
    for (const auto& [key, acknowledged] : written) {
        const auto copy = cluster.readWhenItHolds(key, 1, acknowledged.value);
        ASSERT_TRUE(copy.has_value()) << key;
        EXPECT_EQ(copy->cas, acknowledged.cas) << key << ": the replica's copy";
    }
    for (const auto& key : keysLedBy(cluster, joinedPort, written)) {
        const auto answer = cluster.writeOnceReplicated(key, "two", DurabilityLevel::Majority);
        ASSERT_TRUE(answer && answer->status == kSuccess) << key;
    }
    EXPECT_EQ(runClusterTool(cluster.etcdUrl(), "rebalance"), 0);  // balanced already
    EXPECT_TRUE(cluster.stopAll());
}

// A node rebalanced out hands its vBuckets over (every write stays, on
// the active and the replica), then no map names it; added back and
// rebalanced, it takes its share again.
TEST(RebalanceSocketTest, ARemovedNodeHandsItsVBucketsOverAndLeavesTheMap) {
    ClusterProcesses cluster(3, 1, kVBuckets);
    ASSERT_TRUE(cluster.waitForMap());
    const auto written = writeKeys(cluster, 64, "one");
    EXPECT_EQ(runClusterTool(cluster.etcdUrl(), "remove nope"), 1);
    ASSERT_EQ(runClusterTool(cluster.etcdUrl(), "remove n2"), 0);
    ASSERT_TRUE(cluster.waitForMap(std::vector<std::size_t>{0, 1})) << "n2 is still in the map";
    expectEveryWriteOnItsActive(cluster, written);
    for (const auto& [key, acknowledged] : written) {
        const auto copy = cluster.readWhenItHolds(key, 1, acknowledged.value);
        ASSERT_TRUE(copy.has_value()) << key;
        EXPECT_EQ(copy->cas, acknowledged.cas) << key << ": the replica's copy";
    }
    // n2 serves nothing: its config sends clients elsewhere.
    Client removed(cluster.node(2).port());
    RawRequest get = request(protocol::Opcode::Get, written.begin()->first);
    get.vbucket = protocol::vbucketOfKey(written.begin()->first, kVBuckets);
    EXPECT_EQ(removed.call(get)->status,
              static_cast<std::uint16_t>(protocol::Status::NotMyVbucket));

    ASSERT_EQ(runClusterTool(cluster.etcdUrl(), "add n2"), 0);
    EXPECT_EQ(runClusterTool(cluster.etcdUrl(), "add n2"), 1);  // not removed any more
    ASSERT_TRUE(cluster.waitForMap());
    ASSERT_EQ(runClusterTool(cluster.etcdUrl(), "rebalance"), 0);
    ASSERT_TRUE(cluster.waitForMap());
    EXPECT_GE(activesByPort(cluster.map())[cluster.node(2).port()], kVBuckets / 3);
    expectEveryWriteOnItsActive(cluster, written);
    EXPECT_TRUE(cluster.stopAll());
}

}  // namespace
}  // namespace kvexec::server::test
