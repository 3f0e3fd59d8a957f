// The vBucket map's JSON: what is written reads back the same, and what
// does not hold the map's invariants is refused with a message saying why.
#include <gtest/gtest.h>

#include "cluster/vbucket_map.h"

namespace kvexec::cluster {
namespace {

TEST(VBucketMapJsonTest, RoundTripGivesTheSameMap) {
    for (std::uint32_t replicas = 0; replicas <= kMaxReplicas; ++replicas) {
        VBucketMap map = computeMap({"n1", "n2", "n3"}, 1024, replicas);
        map.revision = 0xfedcba9876543210ull;  // all 64 bits survive
        EXPECT_EQ(decodeVBucketMap(encodeVBucketMap(map)), map);
    }
}

TEST(VBucketMapJsonTest, ReadsTheDocumentedFormat) {
    const VBucketMap map = decodeVBucketMap(
        R"({"revision":7,"numReplicas":1,"nodes":["a","b"],"chains":[[0,1],[1,-1]]})");
    EXPECT_EQ(map.revision, 7u);
    EXPECT_EQ(map.numReplicas, 1u);
    EXPECT_EQ(map.nodes, (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(map.chains, (std::vector<std::vector<int>>{{0, 1}, {1, kNoNode}}));
}

// Each malformed document, and a word its error message must contain.
TEST(VBucketMapJsonTest, RefusesMalformedMapsSayingWhy) {
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"", "not JSON"},
        {"{", "not JSON"},
        {"[]", "not an object"},
        {R"({"numReplicas":0,"nodes":["a"],"chains":[[0]]})", "revision"},
        {R"({"revision":-1,"numReplicas":0,"nodes":["a"],"chains":[[0]]})", "revision"},
        {R"({"revision":1.5,"numReplicas":0,"nodes":["a"],"chains":[[0]]})", "revision"},
        {R"({"revision":"1","numReplicas":0,"nodes":["a"],"chains":[[0]]})", "revision"},
        {R"({"revision":1,"numReplicas":4,"nodes":["a"],"chains":[[0,-1,-1,-1,-1]]})",
         "numReplicas"},
        {R"({"revision":1,"numReplicas":0,"chains":[[0]]})", "nodes"},
        {R"({"revision":1,"numReplicas":0,"nodes":[],"chains":[[0]]})", "nodes"},
        {R"({"revision":1,"numReplicas":0,"nodes":["b","a"],"chains":[[0]]})", "sorted"},
        {R"({"revision":1,"numReplicas":0,"nodes":["a","a"],"chains":[[0]]})", "sorted"},
        {R"({"revision":1,"numReplicas":0,"nodes":["a",""],"chains":[[0]]})", "node name"},
        {R"({"revision":1,"numReplicas":0,"nodes":["a",7],"chains":[[0]]})", "node name"},
        {R"({"revision":1,"numReplicas":0,"nodes":["a"]})", "chains"},
        {R"({"revision":1,"numReplicas":0,"nodes":["a"],"chains":[]})", "chains"},
        {R"({"revision":1,"numReplicas":0,"nodes":["a"],"chains":{}})", "chains"},
        {R"({"revision":1,"numReplicas":1,"nodes":["a","b"],"chains":[[0]]})", "1 + numReplicas"},
        {R"({"revision":1,"numReplicas":0,"nodes":["a"],"chains":[0]})", "1 + numReplicas"},
        {R"({"revision":1,"numReplicas":0,"nodes":["a"],"chains":[["0"]]})", "integer"},
        {R"({"revision":1,"numReplicas":0,"nodes":["a"],"chains":[[1]]})", "node index"},
        {R"({"revision":1,"numReplicas":0,"nodes":["a"],"chains":[[-2]]})", "node index"},
        {R"({"revision":1,"numReplicas":1,"nodes":["a","b"],"chains":[[1,1]]})", "twice"},
        {R"({"revision":1,"numReplicas":0,"nodes":["a","b"],"chains":[[0]],"leases":[5]})",
         "leases"},
        {R"({"revision":1,"numReplicas":0,"nodes":["a"],"chains":[[0]],"leases":[0]})", "lease"},
        {R"({"revision":1,"numReplicas":0,"nodes":["a"],"chains":[[0]],"leases":["5"]})", "lease"},
    };
    for (const auto& [text, why] : cases) {
        try {
            decodeVBucketMap(text);
            ADD_FAILURE() << "accepted: " << text;
        } catch (const std::invalid_argument& error) {
            EXPECT_NE(std::string(error.what()).find(why), std::string::npos)
                << text << " -> " << error.what();
        }
    }
}

TEST(VBucketMapJsonTest, AcceptsAChainWithNoNodeAnywhere) {
    // A failover that lost every copy of a vBucket leaves it with no active.
    const VBucketMap map = decodeVBucketMap(
        R"({"revision":1,"numReplicas":1,"nodes":["a"],"chains":[[-1,-1],[0,-1]]})");
    EXPECT_EQ(map.chains[0], (std::vector<int>{kNoNode, kNoNode}));
}

}  // namespace
}  // namespace kvexec::cluster
