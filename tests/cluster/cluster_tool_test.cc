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

TEST(ClusterToolArgsTest, RefusesWhatItDoesNotTake) {
    using Args = std::vector<std::string>;
    for (const Args& args :
         {Args{"status"}, Args{"--etcd", "http://h:1"}, Args{"--etcd", "h:1", "status"},
          Args{"--etcd"}, Args{"--etcd", "http://h:1", "status", "status"},
          Args{"--etcd", "http://h:1", "--root", "/a/", "status"},
          Args{"--etcd", "http://h:1", "rebalance"}}) {
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

TEST(StatusReportTest, TextSaysNoDcpForTheLagAndJsonCarriesTheSame) {
    const StatusReport report = statusReport("/kvexec/default", threeNodeView());
    const std::string text = statusText(report);
    EXPECT_NE(text.find("revision 4"), std::string::npos) << text;
    EXPECT_NE(text.find("127.0.0.1:12001"), std::string::npos) << text;
    EXPECT_NE(text.find("n/a (no DCP yet)"), std::string::npos) << text;
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

TEST(StatusReportTest, AnEmptyClusterHasNoMapAndNoLeader) {
    const StatusReport report = statusReport("/kvexec/default", ClusterView{});
    EXPECT_EQ(report.mapRevision, 0u);
    EXPECT_TRUE(report.nodes.empty());
    EXPECT_NE(statusText(report).find("none yet"), std::string::npos);
    EXPECT_TRUE(nlohmann::json::parse(statusJson(report))["leader"].is_null());
}

}  // namespace
}  // namespace kvexec::cluster
