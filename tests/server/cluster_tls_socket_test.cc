// Replication between kvexec-server processes over TLS (--cluster-tls-ca):
// a private etcd and two nodes with --replicas 1, each serving a TLS port.
// Every replica streams from its active's TLS port, and durable writes
// commit once the replica holds them. A node that cannot trust its peer's
// certificate (another CA, or a certificate issued to another address)
// opens no stream: `stats replication` says why, and a Majority write is
// ambiguous rather than acknowledged.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "protocol/binary_types.h"
#include "server/cluster_processes.h"
#include "test_certificate.h"

namespace kvexec::server::test {
namespace {

using protocol::Opcode;
using protocol::Status;
using Clock = std::chrono::steady_clock;

constexpr std::uint16_t kVBuckets = 16;
constexpr auto kSuccess = static_cast<std::uint16_t>(Status::Success);
constexpr auto kAmbiguous = static_cast<std::uint16_t>(Status::SyncWriteAmbiguous);

// Each node serves `served` on its TLS port and trusts `trusted`.
std::vector<std::string> tlsArgs(const std::string& dir, const std::string& served,
                                 const std::string& trusted) {
    return {"--tls-port",       "0",
            "--tls-cert",       dir + "/" + served + ".pem",
            "--tls-key",        dir + "/" + served + ".key",
            "--cluster-tls-ca", dir + "/" + trusted + ".pem"};
}

// The node's `stats replication` group, by name; empty if it does not
// answer.
std::map<std::string, std::string> replicationStats(std::uint16_t port) {
    Client client(port);
    return binaryStats(client, "replication");
}

// Polls `done` until it holds or the deadline passes.
template <class Pred>
bool eventually(Pred done) {
    const auto deadline = Clock::now() + kSocketDeadline;
    while (!done()) {
        if (Clock::now() >= deadline) {
            return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return true;
}

// A Majority write of `key` is acknowledged, and the replica (slot 1 of
// its chain) holds it with the active's CAS.
void expectCommittedOnTheReplica(ClusterProcesses& cluster, const std::string& key,
                                 const std::string& value) {
    const auto written =
        cluster.writeOnceReplicated(key, value, protocol::DurabilityLevel::Majority);
    ASSERT_TRUE(written.has_value());
    EXPECT_EQ(written->status, kSuccess);
    const auto copy = cluster.readWhenItHolds(key, 1, value);
    ASSERT_TRUE(copy.has_value());
    EXPECT_EQ(copy->value, value);
    EXPECT_EQ(copy->cas, written->cas);
}

std::size_t openStreams(ClusterProcesses& cluster) {
    std::size_t open = 0;
    for (std::size_t i = 0; i < cluster.size(); ++i) {
        const auto stats = replicationStats(cluster.node(i).port());
        const auto found = stats.find("replication_streams_open");
        open += found == stats.end() ? 0 : std::stoul(found->second);
    }
    return open;
}

// Each node of a cluster that cannot trust its peer: its last break names
// `reason`, no stream opens, and a Majority write is ambiguous at its
// timeout.
void expectReplicationRefused(ClusterProcesses& cluster, const std::string& reason) {
    ASSERT_TRUE(cluster.waitForMap()) << "the nodes never agreed on a map of both";
    for (std::size_t i = 0; i < cluster.size(); ++i) {
        const std::uint16_t port = cluster.node(i).port();
        EXPECT_TRUE(eventually([&] {
            return replicationStats(port)["replication_last_break"].find(reason) !=
                   std::string::npos;
        })) << "n"
            << i << "'s last break: " << replicationStats(port)["replication_last_break"];
    }
    EXPECT_EQ(openStreams(cluster), 0u);
    Client client(cluster.portOf("refused-key", 0));
    const auto written = client.call(
        durableSet("refused-key", "v", protocol::DurabilityLevel::Majority, 1000, kVBuckets));
    ASSERT_TRUE(written.has_value());
    EXPECT_EQ(written->status, kAmbiguous);
    EXPECT_TRUE(cluster.stopAll());
}

TEST(ClusterTlsSocketTest, ReplicasStreamOverTlsAndDurableWritesCommit) {
    TempDir certificates;
    ASSERT_TRUE(kvexec::test::makeCertificate(certificates.path(), "node", "IP:127.0.0.1"));
    ClusterProcesses cluster(2, 1, kVBuckets, tlsArgs(certificates.path(), "node", "node"));
    ASSERT_TRUE(cluster.waitForMap()) << "the nodes never agreed on a map of both";

    expectCommittedOnTheReplica(cluster, "tls-key", "over tls");

    // One stream per vBucket, each from its active's TLS port.
    EXPECT_TRUE(eventually([&] { return openStreams(cluster) == kVBuckets; }))
        << openStreams(cluster) << " streams open";
    for (std::size_t i = 0; i < cluster.size(); ++i) {
        auto stats = replicationStats(cluster.node(i).port());
        EXPECT_EQ(stats["replication_tls"], "yes");
        EXPECT_EQ(stats["replication_peers"], "1");
        EXPECT_EQ(stats["replication_last_break"].find("certificate"), std::string::npos)
            << stats["replication_last_break"];
    }
    EXPECT_TRUE(cluster.stopAll());
}

TEST(ClusterTlsSocketTest, APeerWhoseCertificateAnotherCaSignedIsNotStreamedFrom) {
    TempDir certificates;
    ASSERT_TRUE(kvexec::test::makeCertificate(certificates.path(), "node", "IP:127.0.0.1"));
    ASSERT_TRUE(kvexec::test::makeCertificate(certificates.path(), "stranger", "IP:127.0.0.1"));
    ClusterProcesses cluster(2, 1, kVBuckets, tlsArgs(certificates.path(), "node", "stranger"));
    // "self-signed certificate" (OpenSSL 3; "self signed" before).
    expectReplicationRefused(cluster, "certificate refused: self");
}

TEST(ClusterTlsSocketTest, APeerWhoseCertificateNamesAnotherAddressIsNotStreamedFrom) {
    TempDir certificates;
    ASSERT_TRUE(kvexec::test::makeCertificate(certificates.path(), "elsewhere", "IP:127.0.0.2"));
    ClusterProcesses cluster(2, 1, kVBuckets,
                             tlsArgs(certificates.path(), "elsewhere", "elsewhere"));
    expectReplicationRefused(cluster, "certificate refused: IP address mismatch");
}

// etcd serving its clients over TLS (--cluster https://... --etcd-ca): the
// nodes keep their cluster there as over http (a map of both, a Majority
// write on the replica, a killed node failed over), and kvexec-cluster
// reads it with --etcd-ca and is refused without it.
TEST(ClusterEtcdTlsSocketTest, NodesKeepTheirClusterInAnEtcdServedOverTls) {
    ClusterProcesses cluster(2, 1, kVBuckets, {"--failover-timeout", "2"},
                             cluster::test::EtcdScheme::Https);
    ASSERT_EQ(cluster.etcdUrl().rfind("https://", 0), 0u);
    ASSERT_TRUE(cluster.waitForMap()) << "the nodes never agreed on a map of both";
    expectCommittedOnTheReplica(cluster, "over-tls", "v");

    EXPECT_EQ(runClusterTool(cluster.etcdUrl(), "--etcd-ca " + cluster.etcdCaFile() + " status"),
              0);
    EXPECT_EQ(runClusterTool(cluster.etcdUrl(), "status"), 1);  // the system's CAs: refused

    cluster.kill(0);
    ASSERT_TRUE(cluster.waitForMap({{1}})) << "n0 was not failed over";
    const auto kept = cluster.readWhenItHolds("over-tls", 0, "v");
    ASSERT_TRUE(kept.has_value());
    EXPECT_EQ(kept->value, "v");
    EXPECT_TRUE(cluster.stopAll());
}

}  // namespace
}  // namespace kvexec::server::test
