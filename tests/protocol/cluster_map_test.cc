// The cluster map and error map documents the SDKs bootstrap from.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "protocol/cluster_map.h"

namespace kvexec::protocol {
namespace {

TEST(ClusterMap, OneNodeOwnsEveryVbucketWithCrcHashing) {
    ClusterMapInfo info;
    info.host = "127.0.0.1";
    info.kvPort = 12000;
    info.vbucketCount = 64;
    auto map = nlohmann::json::parse(clusterMapJson(info));
    EXPECT_EQ(map["nodeLocator"], "vbucket");
    EXPECT_EQ(map["name"], "default");
    const auto& server = map["vBucketServerMap"];
    EXPECT_EQ(server["hashAlgorithm"], "CRC");
    EXPECT_EQ(server["numReplicas"], 0);
    EXPECT_EQ(server["serverList"], nlohmann::json::array({"127.0.0.1:12000"}));
    ASSERT_EQ(server["vBucketMap"].size(), 64u);
    for (const auto& chain : server["vBucketMap"]) {
        EXPECT_EQ(chain, nlohmann::json::array({0}));
    }
    ASSERT_EQ(map["nodesExt"].size(), 1u);
    EXPECT_EQ(map["nodesExt"][0]["services"]["kv"], 12000);
    EXPECT_EQ(map["nodesExt"][0]["hostname"], "127.0.0.1");
    EXPECT_EQ(map["nodesExt"][0]["thisNode"], true);
    const auto& caps = map["bucketCapabilities"];
    EXPECT_NE(std::find(caps.begin(), caps.end(), "durableWrite"), caps.end());
}

TEST(ClusterMap, TheManagementPortIsAdvertisedOnlyWhenServed) {
    ClusterMapInfo info;
    info.host = "127.0.0.1";
    info.kvPort = 12000;
    auto without = nlohmann::json::parse(clusterMapJson(info));
    EXPECT_FALSE(without["nodesExt"][0]["services"].contains("mgmt"));
    info.mgmtPort = 18091;
    auto with = nlohmann::json::parse(clusterMapJson(info));
    EXPECT_EQ(with["nodesExt"][0]["services"]["mgmt"], 18091);
    EXPECT_EQ(with["nodesExt"][0]["services"]["kv"], 12000);
    EXPECT_EQ(with["nodes"][0]["hostname"], "127.0.0.1:18091");
}

// TLS clients (couchbases://) look for "kvSSL" and "mgmtSSL"; a map
// without them tells them there is no such port.
TEST(ClusterMap, TheTlsPortIsAdvertisedOnlyWhenServed) {
    ClusterMapInfo info;
    info.host = "127.0.0.1";
    info.kvPort = 12000;
    EXPECT_FALSE(
        nlohmann::json::parse(clusterMapJson(info))["nodesExt"][0]["services"].contains("kvSSL"));
    info.tlsPort = 12007;
    const auto single = nlohmann::json::parse(clusterMapJson(info));
    EXPECT_EQ(single["nodesExt"][0]["services"]["kvSSL"], 12007);
    EXPECT_EQ(single["nodesExt"][0]["services"]["kv"], 12000);
    EXPECT_FALSE(single["nodesExt"][0]["services"].contains("mgmtSSL"));
    info.mgmtTlsPort = 18091;
    EXPECT_EQ(nlohmann::json::parse(clusterMapJson(info))["nodesExt"][0]["services"]["mgmtSSL"],
              18091);
    info.nodes = {{"10.0.0.1", 11210, 8091, true, 11207, 18091}, {"10.0.0.2", 11210, 0, false, 0}};
    const auto cluster = nlohmann::json::parse(clusterMapJson(info));
    EXPECT_EQ(cluster["nodesExt"][0]["services"]["kvSSL"], 11207);
    EXPECT_EQ(cluster["nodesExt"][0]["services"]["mgmtSSL"], 18091);
    EXPECT_FALSE(cluster["nodesExt"][1]["services"].contains("kvSSL"));
    EXPECT_FALSE(cluster["nodesExt"][1]["services"].contains("mgmtSSL"));
}

// The SDKs act on the capabilities (durable writes need durableWrite,
// transactions revive staged inserts with subdoc.ReviveDocument; couchapi
// would send them to views this server lacks).
TEST(ClusterMap, BucketCapabilitiesNameOnlyWhatTheServerServes) {
    auto map = nlohmann::json::parse(clusterMapJson(ClusterMapInfo{}));
    EXPECT_EQ(
        map["bucketCapabilities"],
        nlohmann::json::array({"collections", "durableWrite", "cbhello", "touch", "cccp",
                               "nodesExt", "xattr", "tombstonedUserXAttrs", "subdoc.AccessDeleted",
                               "subdoc.CreateAsDeleted", "subdoc.ReplaceBodyWithXattr",
                               "subdoc.DocumentMacroSupport", "subdoc.ReviveDocument",
                               "subdoc.ReplicaRead", "subdoc.BinaryXattr", "rangeScan"}));
}

TEST(ClusterMap, Ipv6HostsAreBracketedInServerList) {
    ClusterMapInfo info;
    info.host = "::1";
    info.kvPort = 11210;
    auto map = nlohmann::json::parse(clusterMapJson(info));
    EXPECT_EQ(map["vBucketServerMap"]["serverList"][0], "[::1]:11210");
}

// One node and no map: byte for byte what the server sent before clusters.
TEST(ClusterMap, OneNodeWithoutAMapIsTheSingleNodeDocument) {
    ClusterMapInfo info;
    info.host = "127.0.0.1";
    info.kvPort = 12000;
    info.mgmtPort = 18091;
    info.vbucketCount = 4;
    info.manifestUid = std::string("a");
    EXPECT_EQ(
        clusterMapJson(info),
        R"({"bucketCapabilities":["collections","durableWrite","cbhello","touch","cccp","nodesExt",)"
        R"("xattr","tombstonedUserXAttrs","subdoc.AccessDeleted","subdoc.CreateAsDeleted",)"
        R"("subdoc.ReplaceBodyWithXattr","subdoc.DocumentMacroSupport","subdoc.ReviveDocument","subdoc.ReplicaRead","subdoc.BinaryXattr","rangeScan"],)"
        R"("bucketCapabilitiesVer":"","bucketType":"membase","clusterCapabilities":{},)"
        R"("clusterCapabilitiesVer":[1,0],"collectionsManifestUid":"a",)"
        R"("ddocs":{"uri":"/pools/default/buckets/default/ddocs"},"name":"default",)"
        R"("nodeLocator":"vbucket","nodes":[{"hostname":"127.0.0.1:18091","ports":{"direct":12000}}],)"
        R"("nodesExt":[{"hostname":"127.0.0.1","services":{"kv":12000,"mgmt":18091},"thisNode":true}],)"
        R"("rev":1,"revEpoch":1,"uuid":"kvexec-default","vBucketServerMap":{"hashAlgorithm":"CRC",)"
        R"("numReplicas":0,"serverList":["127.0.0.1:12000"],"vBucketMap":[[0],[0],[0],[0]]}})");
}

TEST(ClusterMap, AClusterListsEveryNodeInServerListOrderWithItsChains) {
    ClusterMapInfo info;
    info.vbucketCount = 3;
    info.revision = 7;
    info.nodes = {{"127.0.0.1", 12000, 0, false},
                  {"127.0.0.1", 12001, 18091, true},
                  {"10.0.0.3", 12002, 0, false}};
    info.chains = {{0, 1}, {1, 2}, {2, -1}};
    info.numReplicas = 1;
    const auto map = nlohmann::json::parse(clusterMapJson(info));
    EXPECT_EQ(map["rev"], 7);
    const auto& server = map["vBucketServerMap"];
    EXPECT_EQ(server["numReplicas"], 1);
    EXPECT_EQ(server["serverList"],
              nlohmann::json::array({"127.0.0.1:12000", "127.0.0.1:12001", "10.0.0.3:12002"}));
    EXPECT_EQ(server["vBucketMap"], nlohmann::json::parse("[[0,1],[1,2],[2,-1]]"));
    // Clients index nodesExt with the vBucket map: the same order.
    ASSERT_EQ(map["nodesExt"].size(), 3u);
    for (std::size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(map["nodesExt"][i]["hostname"], info.nodes[i].host);
        EXPECT_EQ(map["nodesExt"][i]["services"]["kv"], info.nodes[i].kvPort);
        EXPECT_EQ(map["nodesExt"][i].contains("thisNode"), info.nodes[i].thisNode);
        EXPECT_EQ(map["nodes"][i]["ports"]["direct"], info.nodes[i].kvPort);
    }
    EXPECT_EQ(map["nodesExt"][1]["services"]["mgmt"], 18091);
    EXPECT_FALSE(map["nodesExt"][0]["services"].contains("mgmt"));
}

TEST(ErrorMap, ListsDurabilityStatusesWithAttributes) {
    auto map = nlohmann::json::parse(errorMapJson(2));
    EXPECT_EQ(map["version"], 2);
    for (auto code : {"a0", "a1", "a2", "a3", "a4", "1", "7", "81"}) {
        ASSERT_TRUE(map["errors"].contains(code)) << code;
        EXPECT_FALSE(map["errors"][code]["attrs"].empty()) << code;
    }
    EXPECT_EQ(nlohmann::json::parse(errorMapJson(1))["version"], 1);
    EXPECT_EQ(nlohmann::json::parse(errorMapJson(9))["version"], 2);
}

}  // namespace
}  // namespace kvexec::protocol
