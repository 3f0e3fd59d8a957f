// Which keys the clients use and where they go: slices that cover the key
// space once, cbc-style key names, and the CRC32 vBucket a key is sent to,
// with the count the cluster map gives.
#include <gtest/gtest.h>

#include <set>

#include "pillowfight/handshake.h"
#include "pillowfight/workload.h"
#include "protocol/cluster_map.h"
#include "protocol/keys.h"

namespace kvexec::pillowfight {
namespace {

TEST(PillowfightWorkload, KeysAreZeroPaddedIndexesAfterThePrefix) {
    EXPECT_EQ(keyName("", 42), "00000000000000000042");
    EXPECT_EQ(keyName("pf-", 0), "pf-00000000000000000000");
}

TEST(PillowfightWorkload, SlicesCoverEveryKeyExactlyOnce) {
    for (const std::size_t clients : {1u, 3u, 7u, 200u}) {
        std::uint64_t next = 0;
        for (std::size_t c = 0; c < clients; ++c) {
            const KeySlice s = sliceOf(1000, c, clients);
            EXPECT_EQ(s.begin, next);
            next = s.end;
        }
        EXPECT_EQ(next, 1000u);
    }
    // More clients than keys: each client gets one key, round-robin.
    EXPECT_EQ(sliceOf(3, 4, 10).begin, 1u);
    EXPECT_EQ(sliceOf(3, 4, 10).size(), 1u);
}

TEST(PillowfightWorkload, PopulationStoresTheSliceOnceThenStops) {
    Options o;
    o.numItems = 10;
    o.minSize = o.maxSize = 16;
    Workload w(o, 1, 2);  // keys 5..9
    std::set<std::string> keys;
    Op op;
    while (w.nextPopulation(op)) {
        EXPECT_EQ(op.kind, OpKind::Set);
        EXPECT_EQ(op.valueSize, 16u);
        keys.insert(op.key);
    }
    EXPECT_EQ(keys, (std::set<std::string>{keyName("", 5), keyName("", 6), keyName("", 7),
                                           keyName("", 8), keyName("", 9)}));
}

TEST(PillowfightWorkload, SequentialSetsWalkTheClientsSliceInOrder) {
    Options o;
    o.numItems = 6;
    o.setPercent = 100;
    o.sequential = true;
    Workload w(o, 0, 2);  // keys 0..2
    std::vector<std::string> keys;
    for (int i = 0; i < 4; ++i) {
        const Op op = w.next();
        EXPECT_EQ(op.kind, OpKind::Set);
        keys.push_back(op.key);
    }
    EXPECT_EQ(keys, (std::vector<std::string>{keyName("", 0), keyName("", 1), keyName("", 2),
                                              keyName("", 0)}));
}

TEST(PillowfightWorkload, SetPercentZeroMeansOnlyGets) {
    Options o;
    o.setPercent = 0;
    Workload w(o, 0, 1);
    for (int i = 0; i < 100; ++i) {
        EXPECT_EQ(w.next().kind, OpKind::Get);
    }
}

TEST(PillowfightWorkload, RandomBodiesDifferAndHaveTheirSize) {
    Options o;
    o.minSize = o.maxSize = 512;
    o.randomBody = true;
    Workload w(o, 0, 1);
    const std::string a(w.value(512));
    const std::string b(w.value(512));
    EXPECT_EQ(a.size(), 512u);
    EXPECT_NE(a, b);
}

TEST(PillowfightVbucketMap, TheClusterMapGivesTheCountKeysHashOver) {
    protocol::ClusterMapInfo info;
    info.host = "127.0.0.1";
    info.kvPort = 11210;
    info.vbucketCount = 64;
    EXPECT_EQ(vbucketCountOf(protocol::clusterMapJson(info)), 64);
    EXPECT_EQ(vbucketCountOf("{}"), std::nullopt);
    EXPECT_EQ(vbucketCountOf("not json"), std::nullopt);
    EXPECT_EQ(vbucketCountOf(R"({"vBucketServerMap":{"vBucketMap":[]}})"), std::nullopt);
}

TEST(PillowfightVbucketMap, AClusterMapRoutesEachVbucketToItsActive) {
    protocol::ClusterMapInfo info;
    info.vbucketCount = 4;
    info.numReplicas = 1;
    info.nodes = {{"127.0.0.1", 11210, 0, true}, {"127.0.0.1", 11211, 0, false}};
    info.chains = {{0, 1}, {1, 0}, {-1, 0}, {1, -1}};
    const auto route = routeOf(protocol::clusterMapJson(info));
    ASSERT_TRUE(route);
    EXPECT_EQ(route->servers, (std::vector<std::string>{"127.0.0.1:11210", "127.0.0.1:11211"}));
    EXPECT_EQ(route->activeOf, (std::vector<int>{0, 1, -1, 1}));
    EXPECT_EQ(routeOf(R"({"vBucketServerMap":{"serverList":["a:1"],"vBucketMap":[[1]]}})"),
              std::nullopt)
        << "a chain naming a server the list lacks";
}

TEST(PillowfightVbucketMap, AClusterMapCarriesItsRevisionToOrderMaps) {
    protocol::ClusterMapInfo info;
    info.host = "127.0.0.1";
    info.kvPort = 11210;
    info.vbucketCount = 4;
    info.revision = 42;
    const auto route = routeOf(protocol::clusterMapJson(info));
    ASSERT_TRUE(route);
    EXPECT_EQ(route->revision, 42u);
    const auto unnumbered =
        routeOf(R"({"vBucketServerMap":{"serverList":["a:1"],"vBucketMap":[[0]]}})");
    ASSERT_TRUE(unnumbered);
    EXPECT_EQ(unnumbered->revision, 0u) << "a map without \"rev\" is older than any numbered one";
}

TEST(PillowfightVbucketMap, KeysSpreadOverEveryVbucketByCrc32) {
    std::set<std::uint16_t> seen;
    for (std::uint64_t i = 0; i < 20000; ++i) {
        const auto vb = protocol::vbucketOfKey(keyName("", i), 1024);
        ASSERT_LT(vb, 1024);
        seen.insert(vb);
    }
    EXPECT_EQ(seen.size(), 1024u);
    // libcouchbase's mapping: (crc32(key) >> 16) & 0x7fff, modulo the count.
    // zlib's crc32("hello") is 0x3610a686.
    EXPECT_EQ(protocol::vbucketOfKey("hello", 1024), (0x3610a686u >> 16 & 0x7fff) % 1024);
}

}  // namespace
}  // namespace kvexec::pillowfight
