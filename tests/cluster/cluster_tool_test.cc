// kvexec-cluster's command line and its status report (cluster_tool.h),
// from views built by hand: no etcd.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cluster/cluster_tool.h"

namespace kvexec::cluster {
namespace {

ClusterView threeNodeView() {
    ClusterView view;
    view.membership.nodes = {"n0", "n1"};  // n2 left; the map still names it
    view.membership.leader = "n0";
    view.map = computeMap({"n0", "n1", "n2"}, 6, 1);
    view.map->revision = 4;
    view.addresses = {{"n0", {"127.0.0.1", 12000, 0}}, {"n1", {"127.0.0.1", 12001, 18091}}};
    view.statuses = {{"n0", {4}}, {"n1", {3}}};
    return view;
}

TEST(ClusterToolArgsTest, StatusWithEtcdRootAndJson) {
    const auto options = parseClusterToolArgs(
        {"--etcd", "http://127.0.0.1:2379", "--root", "/kvexec/b", "status", "--json"});
    EXPECT_EQ(options.etcdUrl, "http://127.0.0.1:2379");
    EXPECT_EQ(options.root, "/kvexec/b");
    EXPECT_EQ(options.command, "status");
    EXPECT_TRUE(options.json);
    EXPECT_EQ(parseClusterToolArgs({"--etcd", "http://h:1", "status"}).root, "/kvexec/default");
    EXPECT_TRUE(parseClusterToolArgs({"--help"}).help);
}

TEST(ClusterToolArgsTest, RebalanceAndItsProgress) {
    const auto options = parseClusterToolArgs({"--etcd", "http://h:1", "rebalance", "--json"});
    EXPECT_EQ(options.command, "rebalance");
    EXPECT_TRUE(options.json);
    EXPECT_EQ(rebalanceProgressText(8, 32),
              "rebalance [##########..............................] 8/32 vBuckets in place");
    EXPECT_EQ(rebalanceProgressJson(8, 32, 7), R"({"inPlace":8,"mapRevision":7,"total":32})");
}

TEST(ClusterToolArgsTest, FailoverNamesTheNode) {
    const auto options = parseClusterToolArgs({"--etcd", "http://h:1", "failover", "n2"});
    EXPECT_EQ(options.command, "failover");
    EXPECT_EQ(options.node, "n2");
    EXPECT_NE(clusterToolUsage().find("failover NODE"), std::string::npos);
}

TEST(ClusterToolArgsTest, RefusesWhatItDoesNotTake) {
    using Args = std::vector<std::string>;
    for (const Args& args :
         {Args{"status"}, Args{"--etcd", "http://h:1"}, Args{"--etcd", "h:1", "status"},
          Args{"--etcd"}, Args{"--etcd", "http://h:1", "status", "status"},
          Args{"--etcd", "http://h:1", "--root", "/a/", "status"},
          Args{"--etcd", "http://h:1", "rebalance", "now"},
          Args{"--etcd", "http://h:1", "failover"},
          Args{"--etcd", "http://h:1", "failover", "--json"},
          Args{"--etcd", "http://h:1", "status", "failover", "n1"}}) {
        EXPECT_THROW(parseClusterToolArgs(args), std::invalid_argument) << args.size();
    }
}

TEST(StatusReportTest, ListsRegisteredAndMappedNodesWithTheirCounts) {
    const StatusReport report = statusReport("/kvexec/default", threeNodeView());
    EXPECT_EQ(report.mapRevision, 4u);
    EXPECT_EQ(report.numVBuckets, 6u);
    EXPECT_EQ(report.numReplicas, 1u);
    EXPECT_EQ(report.leader, "n0");
    EXPECT_EQ(report.vbucketsWithoutActive, 0u);
    EXPECT_EQ(report.replicaSlotsEmpty, 0u);
    ASSERT_EQ(report.nodes.size(), 3u);
    const NodeReport& gone = report.nodes[2];
    EXPECT_EQ(gone.name, "n2");
    EXPECT_FALSE(gone.alive);
    EXPECT_FALSE(gone.address);
    EXPECT_FALSE(gone.appliedRevision);
    std::size_t active = 0;
    for (const NodeReport& node : report.nodes) {
        EXPECT_EQ(node.active, 2u) << node.name;
        EXPECT_EQ(node.replica, 2u) << node.name;
        active += node.active;
    }
    EXPECT_EQ(active, 6u);
    EXPECT_EQ(report.nodes[1].appliedRevision, 3u);
}

TEST(StatusReportTest, TextAndJsonCarryTheSame) {
    const StatusReport report = statusReport("/kvexec/default", threeNodeView());
    const std::string text = statusText(report);
    EXPECT_NE(text.find("revision 4"), std::string::npos) << text;
    EXPECT_NE(text.find("127.0.0.1:12001"), std::string::npos) << text;
    EXPECT_NE(text.find("REPLICATION LAG"), std::string::npos) << text;
    EXPECT_NE(text.find("-/-"), std::string::npos) << text;  // no node replicates yet
    const auto json = nlohmann::json::parse(statusJson(report));
    EXPECT_EQ(json["mapRevision"], 4);
    EXPECT_EQ(json["leader"], "n0");
    ASSERT_EQ(json["nodes"].size(), 3u);
    EXPECT_EQ(json["nodes"][0]["appliedRevision"], 4);
    EXPECT_EQ(json["nodes"][1]["address"]["mgmtPort"], 18091);
    EXPECT_TRUE(json["nodes"][2]["address"].is_null());
    EXPECT_TRUE(json["nodes"][2]["replicationLag"].is_null());
    EXPECT_EQ(json["nodes"][2]["alive"], false);
}

// A node that joined a moment ago is alive and on the map's revision
// before the leader maps it; a script waiting to rebalance onto it needs
// to tell the two apart.
TEST(StatusReportTest, SaysWhetherTheMapNamesANodeYet) {
    ClusterView view = threeNodeView();
    view.membership.nodes = {"n0", "n1", "n3"};
    view.statuses["n3"] = {4};
    const StatusReport report = statusReport("/kvexec/default", view);
    ASSERT_EQ(report.nodes.size(), 4u);
    const NodeReport& joined = report.nodes[3];
    EXPECT_EQ(joined.name, "n3");
    EXPECT_TRUE(joined.alive);
    EXPECT_EQ(joined.appliedRevision, 4u);
    EXPECT_FALSE(joined.inMap);
    EXPECT_TRUE(report.nodes[2].inMap) << "n2 left, but the map still names it";
    const auto json = nlohmann::json::parse(statusJson(report));
    EXPECT_EQ(json["nodes"][0]["inMap"], true);
    EXPECT_EQ(json["nodes"][3]["inMap"], false);
}

// Two nodes, four vBuckets, one replica: n0 active for 0 and 2, n1 for
// 1 and 3 (computeMap's order), each the other's replica.
ClusterView replicatingView() {
    ClusterView view;
    view.membership.nodes = {"n0", "n1"};
    view.map = computeMap({"n0", "n1"}, 4, 1);
    view.map->revision = 2;
    return view;
}

std::vector<VBucketSeqno> seqnosOf(const VBucketMap& map, int node, bool active,
                                   std::uint64_t base) {
    std::vector<VBucketSeqno> out;
    for (std::size_t vb = 0; vb < map.chains.size(); ++vb) {
        if ((map.chains[vb].front() == node) == active) {
            out.push_back({static_cast<std::uint16_t>(vb), base + vb});
        }
    }
    return out;
}

TEST(ReplicationLagTest, SumsWhatEachReplicaIsBehindItsActive) {
    ClusterView view = replicatingView();
    const VBucketMap& map = *view.map;
    // Actives at 100 + vb; n1's replicas caught up, n0's 100 + vb behind
    // (they published nothing: at 0).
    view.statuses["n0"] = {2, ReplicationStatus{2, 2, seqnosOf(map, 0, true, 100), {}}};
    view.statuses["n1"] = {
        2, ReplicationStatus{2, 1, seqnosOf(map, 1, true, 100), seqnosOf(map, 0, true, 100)}};
    std::uint64_t n0Behind = 0;
    for (const auto& entry : seqnosOf(map, 1, true, 100)) {
        n0Behind += entry.seqno;
    }
    EXPECT_EQ(replicationLag(map, "n1", view.statuses), 0u);
    EXPECT_EQ(replicationLag(map, "n0", view.statuses), n0Behind);
    // A replica ahead of its active (just after a failover) counts as 0.
    view.statuses["n1"].replication->replica = seqnosOf(map, 0, true, 500);
    EXPECT_EQ(replicationLag(map, "n1", view.statuses), 0u);

    const StatusReport report = statusReport("/kvexec/default", view);
    ASSERT_EQ(report.nodes.size(), 2u);
    EXPECT_EQ(report.nodes[1].streamsOpen, 1u);
    EXPECT_EQ(report.nodes[1].replicaVBucketsApplied, 2u);
    EXPECT_NE(statusText(report).find("1/2"), std::string::npos) << statusText(report);
    const auto json = nlohmann::json::parse(statusJson(report));
    EXPECT_EQ(json["nodes"][0]["replicationLag"], n0Behind);
    EXPECT_EQ(json["nodes"][1]["streamsOpen"], 1);
    EXPECT_EQ(json["nodes"][1]["replicaVBucketsApplied"], 2);
}

TEST(ReplicationLagTest, UnknownWhileANodeOrOneOfItsActivesPublishedNoSeqnos) {
    ClusterView view = replicatingView();
    view.statuses["n0"] = {2, ReplicationStatus{2, 2, {}, {}}};
    view.statuses["n1"] = {2, std::nullopt};  // an older node: its revision only
    EXPECT_FALSE(replicationLag(*view.map, "n0", view.statuses));
    EXPECT_FALSE(replicationLag(*view.map, "n1", view.statuses));
    EXPECT_FALSE(replicationLag(*view.map, "n2", view.statuses));
    const StatusReport report = statusReport("/kvexec/default", view);
    EXPECT_TRUE(nlohmann::json::parse(statusJson(report))["nodes"][1]["streamsOpen"].is_null());
}

TEST(StatusReportTest, AnEmptyClusterHasNoMapAndNoLeader) {
    const StatusReport report = statusReport("/kvexec/default", ClusterView{});
    EXPECT_EQ(report.mapRevision, 0u);
    EXPECT_TRUE(report.nodes.empty());
    EXPECT_NE(statusText(report).find("none yet"), std::string::npos);
    EXPECT_TRUE(nlohmann::json::parse(statusJson(report))["leader"].is_null());
}

}  // namespace
}  // namespace kvexec::cluster
