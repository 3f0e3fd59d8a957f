// The server's side of a cluster, without etcd: the command line of
// --cluster, and the config clients get from a cluster state (topologyOf).
// cluster_socket_test.cc runs real nodes against a real etcd.
#include <gtest/gtest.h>

#include "server/cluster_node.h"
#include "server/server_config.h"

namespace kvexec::server {
namespace {

ServerConfig parse(const std::vector<std::string>& args) {
    bool help = false;
    return parseCommandLine(args, help);
}

TEST(ClusterConfigTest, ClusterNodeAndReplicasAreParsed) {
    const ServerConfig config = parse({"--cluster", "http://127.0.0.1:2379", "--node", "n1",
                                       "--replicas", "2", "--failover-timeout", "9"});
    EXPECT_EQ(config.cluster, "http://127.0.0.1:2379");
    EXPECT_EQ(config.node, "n1");
    EXPECT_EQ(config.replicas, 2u);
    EXPECT_EQ(config.failoverTimeout, std::chrono::seconds(9));
    EXPECT_EQ(clusterRoot(config.buckets.front()), "/kvexec/default");
    EXPECT_EQ(clusterRoot("b2"), "/kvexec/b2");
    EXPECT_NE(usage().find("--cluster"), std::string::npos);
}

TEST(ClusterConfigTest, WithoutClusterNothingChanges) {
    const ServerConfig config = parse({});
    EXPECT_FALSE(config.cluster);
    EXPECT_TRUE(config.node.empty());
    EXPECT_EQ(config.replicas, 0u);
    EXPECT_EQ(config.failoverTimeout, std::chrono::seconds(5));
}

TEST(ClusterConfigTest, BadCombinationsAndValuesAreRefused) {
    const std::string etcd = "http://127.0.0.1:2379";
    EXPECT_THROW(parse({"--cluster", etcd}), std::invalid_argument);  // no --node
    EXPECT_THROW(parse({"--node", "n1"}), std::invalid_argument);     // no --cluster
    EXPECT_THROW(parse({"--replicas", "1"}), std::invalid_argument);
    EXPECT_THROW(parse({"--failover-timeout", "5"}), std::invalid_argument);
    for (const char* timeout : {"1", "0", "x", "3601"}) {  // etcd's shortest lease is ~2 s
        EXPECT_THROW(parse({"--cluster", etcd, "--node", "n1", "--failover-timeout", timeout}),
                     std::invalid_argument)
            << timeout;
    }
    EXPECT_THROW(parse({"--cluster", etcd, "--node", "n1", "--replicas", "4"}),
                 std::invalid_argument);
    EXPECT_THROW(parse({"--cluster", etcd, "--node", "n1", "--replicas", "-1"}),
                 std::invalid_argument);
    EXPECT_THROW(parse({"--cluster", etcd, "--node", "a/b"}), std::invalid_argument);
    EXPECT_THROW(parse({"--cluster", etcd, "--node", "n1", "--etcd-ca", "ca.pem"}),
                 std::invalid_argument);  // a CA file goes with https
    EXPECT_THROW(parse({"--etcd-ca", "ca.pem"}), std::invalid_argument);  // no --cluster
    EXPECT_THROW(parse({"--cluster", "127.0.0.1:2379", "--node", "n1"}), std::invalid_argument);
    for (const char* replicas : {"0", "3"}) {
        EXPECT_NO_THROW(parse({"--cluster", etcd, "--node", "n1", "--replicas", replicas}));
    }
}

TEST(ClusterConfigTest, EtcdOverTlsTakesACaFile) {
    const ServerConfig config =
        parse({"--cluster", "https://10.0.0.5:2379", "--etcd-ca", "ca.pem", "--node", "n1"});
    const cluster::EtcdEndpoint endpoint = etcdEndpoint(config);
    EXPECT_TRUE(endpoint.tls);
    EXPECT_EQ(endpoint.host, "10.0.0.5");
    EXPECT_EQ(endpoint.caFile, "ca.pem");
    // Without one, the system's CAs.
    EXPECT_EQ(etcdEndpoint(parse({"--cluster", "https://10.0.0.5:2379", "--node", "n1"})).caFile,
              "");
    EXPECT_NE(usage().find("--etcd-ca"), std::string::npos);
}

TEST(ServerConfigTest, AnOptionTakesItsValueAfterItOrAfterAnEqualsSign) {
    const ServerConfig c = parse({"--port=0", "--vbuckets", "8", "--compaction-threshold=0"});
    EXPECT_EQ(c.port, 0);
    EXPECT_EQ(c.vbuckets, 8u);
    EXPECT_EQ(c.compactionThreshold, 0u);
    EXPECT_EQ(parse({"--data-dir=/tmp/a=b"}).dataDir, "/tmp/a=b");
    EXPECT_THROW(parse({"--port="}), std::invalid_argument);
    EXPECT_THROW(parse({"--compaction-threshold=100"}), std::invalid_argument);
    EXPECT_THROW(parse({"--compaction-min-file-bytes=0"}), std::invalid_argument);
    EXPECT_THROW(parse({"--no-such-option=1"}), std::invalid_argument);
}

TEST(ServerConfigTest, TheTlsPortNeedsItsCertificateAndKeyAndTheyNeedIt) {
    EXPECT_FALSE(parse({}).tlsPort);
    const ServerConfig tls =
        parse({"--tls-port", "0", "--tls-cert", "c.pem", "--tls-key", "k.pem"});
    EXPECT_EQ(tls.tlsPort, 0);
    EXPECT_EQ(tls.tlsCert, "c.pem");
    EXPECT_EQ(tls.tlsKey, "k.pem");
    EXPECT_THROW(parse({"--tls-port", "0"}), std::invalid_argument);
    EXPECT_THROW(parse({"--tls-port", "0", "--tls-cert", "c.pem"}), std::invalid_argument);
    EXPECT_THROW(parse({"--tls-cert", "c.pem", "--tls-key", "k.pem"}), std::invalid_argument);
    EXPECT_THROW(parse({"--tls-port", "65536", "--tls-cert", "c", "--tls-key", "k"}),
                 std::invalid_argument);
    EXPECT_NE(usage().find("--tls-port"), std::string::npos);
    // The management endpoint's HTTPS port: the same files, and the endpoint.
    const ServerConfig https = parse(
        {"--mgmt-port", "0", "--mgmt-tls-port", "0", "--tls-cert", "c.pem", "--tls-key", "k.pem"});
    EXPECT_EQ(https.mgmtTlsPort, 0);
    EXPECT_FALSE(https.tlsPort);
    EXPECT_THROW(parse({"--mgmt-port", "0", "--mgmt-tls-port", "0"}), std::invalid_argument);
    EXPECT_THROW(parse({"--mgmt-tls-port", "0", "--tls-cert", "c.pem", "--tls-key", "k.pem"}),
                 std::invalid_argument);  // no --mgmt-port
    EXPECT_NE(usage().find("--mgmt-tls-port"), std::string::npos);
}

// Replication over TLS is a cluster member's, and its peers (set up
// alike) stream from its own TLS port.
TEST(ClusterConfigTest, ReplicationOverTlsNeedsAClusterAndATlsPort) {
    const std::vector<std::string> member = {"--cluster", "http://127.0.0.1:2379", "--node", "n1"};
    const std::vector<std::string> tlsPort = {"--tls-port", "0",         "--tls-cert",
                                              "c.pem",      "--tls-key", "k.pem"};
    auto with = [](std::vector<std::string> args, const std::vector<std::string>& more) {
        args.insert(args.end(), more.begin(), more.end());
        return args;
    };
    const std::vector<std::string> ca = {"--cluster-tls-ca", "ca.pem"};
    EXPECT_EQ(parse(with(with(member, tlsPort), ca)).clusterTlsCa, "ca.pem");
    EXPECT_EQ(parse(with(member, tlsPort)).clusterTlsCa, "");
    EXPECT_THROW(parse(with(member, ca)), std::invalid_argument);   // no TLS port
    EXPECT_THROW(parse(with(tlsPort, ca)), std::invalid_argument);  // a single node
    // Empty, as from an unset shell variable: refused, never TLS silently off.
    EXPECT_THROW(parse(with(with(member, tlsPort), {"--cluster-tls-ca="})), std::invalid_argument);
    EXPECT_THROW(parse(with(member, {"--tls-port", "0", "--tls-cert", "", "--tls-key", "k.pem"})),
                 std::invalid_argument);
    EXPECT_NE(usage().find("--cluster-tls-ca"), std::string::npos);
}

// With users, a cluster's members need their own password (DCP must not
// open with a client's); without users nothing asks for one.
TEST(ClusterConfigTest, AClusterWithUsersNeedsTheNodesOwnPassword) {
    const std::string etcd = "http://127.0.0.1:2379";
    const std::vector<std::string> member = {"--cluster", etcd, "--node", "n1"};
    auto with = [&](std::vector<std::string> extra) {
        std::vector<std::string> args = member;
        args.insert(args.end(), extra.begin(), extra.end());
        return args;
    };
    EXPECT_THROW(parse(with({"--user", "u", "--password", "p"})), std::invalid_argument);
    const auto config = parse(with({"--user", "u", "--password", "p", "--node-password", "n"}));
    EXPECT_EQ(config.nodePassword, "n");
    EXPECT_THROW(parse({"--node-password", "n"}), std::invalid_argument);  // no users
    EXPECT_THROW(parse({"--user", std::string(kNodeUser), "--password", "p"}),
                 std::invalid_argument);
    EXPECT_NO_THROW(parse(member));
    EXPECT_NO_THROW(parse({"--user", "u", "--password", "p", "--node-password", "n"}));
}

TEST(TopologyOfTest, BeforeTheFirstMapThisNodeAloneAtRevisionZero) {
    const auto topology = topologyOf({}, "n1", {"10.0.0.1", 11210, 8091});
    ASSERT_EQ(topology->nodes.size(), 1u);
    EXPECT_EQ(topology->nodes[0].host, "10.0.0.1");
    EXPECT_EQ(topology->nodes[0].kvPort, 11210);
    EXPECT_EQ(topology->nodes[0].mgmtPort, 8091);
    EXPECT_TRUE(topology->nodes[0].thisNode);
    EXPECT_TRUE(topology->chains.empty());
    EXPECT_EQ(topology->revision, 0u);
}

TEST(TopologyOfTest, TheMapsNodesInOrderWithThisOneFlagged) {
    cluster::ClusterState state;
    state.map = cluster::computeMap({"n0", "n1", "n2"}, 6, 1);
    state.map->revision = 5;
    state.registered = {"n0", "n1", "n2"};
    state.addresses = {{"n0", {"h", 1, 0}}, {"n1", {"h", 2, 0, 12}}, {"n2", {"h", 3, 0}}};
    const auto topology = topologyOf(state, "n1", {"h", 2, 0, 12});
    ASSERT_EQ(topology->nodes.size(), 3u);
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(topology->nodes[i].kvPort, i + 1);
        EXPECT_EQ(topology->nodes[i].thisNode, i == 1);
        EXPECT_EQ(topology->nodes[i].tlsPort, i == 1 ? 12 : 0);  // only n1 has one
    }
    EXPECT_EQ(topology->chains, state.map->chains);  // the same indexes
    EXPECT_EQ(topology->numReplicas, 1u);
    EXPECT_EQ(topology->revision, 5u);
}

TEST(TopologyOfTest, ANodeWithoutAnAddressIsLeftOutAndItsSlotsAreEmpty) {
    cluster::ClusterState state;
    state.map = cluster::computeMap({"n0", "n1", "n2"}, 3, 1);
    state.addresses = {{"n0", {"h", 1, 0}}, {"n2", {"h", 3, 0}}};
    const auto topology = topologyOf(state, "n0", {"h", 1, 0});
    ASSERT_EQ(topology->nodes.size(), 2u);
    EXPECT_EQ(topology->nodes[1].kvPort, 3);
    for (std::size_t vb = 0; vb < state.map->chains.size(); ++vb) {
        for (std::size_t slot = 0; slot < 2; ++slot) {
            const int node = state.map->chains[vb][slot];
            const int expected = node == 0 ? 0 : node == 2 ? 1 : cluster::kNoNode;
            EXPECT_EQ(topology->chains[vb][slot], expected) << vb << " " << slot;
        }
    }
}

}  // namespace
}  // namespace kvexec::server
