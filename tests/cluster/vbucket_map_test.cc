// computeMap's guarantees (cluster/vbucket_map.h), one test per rule, each
// over every shape: 1..8 nodes x 1, 4, 64, 1024 vBuckets x 0..3 replicas.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "cluster/vbucket_map.h"
#include "node_names.h"

namespace kvexec::cluster {
namespace {

struct Shape {
    int nodes;
    std::uint16_t vbuckets;
    std::uint32_t replicas;
};

std::string describe(const Shape& shape) {
    std::string text = std::to_string(shape.nodes);
    text += " nodes, ";
    text += std::to_string(shape.vbuckets);
    text += " vBuckets, ";
    text += std::to_string(shape.replicas);
    text += " replicas";
    return text;
}

std::vector<Shape> everyShape() {
    std::vector<Shape> shapes;
    for (int nodes = 1; nodes <= 8; ++nodes) {
        for (std::uint16_t vbuckets : {1, 4, 64, 1024}) {
            for (std::uint32_t replicas = 0; replicas <= 3; ++replicas) {
                shapes.push_back({nodes, vbuckets, replicas});
            }
        }
    }
    return shapes;
}

using test::names;

VBucketMap mapOf(const Shape& shape) {
    return computeMap(names(shape.nodes), shape.vbuckets, shape.replicas);
}

// max - min of the per-node counts `counted` (one entry per node).
int spread(const std::vector<int>& counted) {
    const auto [min, max] = std::minmax_element(counted.begin(), counted.end());
    return *max - *min;
}

TEST(VBucketMapTest, ActiveCountsDifferByAtMostOne) {
    for (const Shape& shape : everyShape()) {
        const VBucketMap map = mapOf(shape);
        std::vector<int> actives(shape.nodes, 0);
        for (const auto& chain : map.chains) {
            ++actives.at(chain.front());
        }
        EXPECT_LE(spread(actives), 1) << describe(shape);
    }
}

TEST(VBucketMapTest, ReplicaCountsDifferByAtMostOne) {
    for (const Shape& shape : everyShape()) {
        const VBucketMap map = mapOf(shape);
        std::vector<int> replicas(shape.nodes, 0);
        for (const auto& chain : map.chains) {
            for (std::size_t slot = 1; slot < chain.size(); ++slot) {
                if (chain[slot] != kNoNode) {
                    ++replicas.at(chain[slot]);
                }
            }
        }
        EXPECT_LE(spread(replicas), 1) << describe(shape);
    }
}

TEST(VBucketMapTest, NoNodeTwiceInAChain) {
    for (const Shape& shape : everyShape()) {
        for (const auto& chain : mapOf(shape).chains) {
            std::set<int> seen;
            for (int node : chain) {
                EXPECT_TRUE(node == kNoNode || seen.insert(node).second) << describe(shape);
            }
        }
    }
}

TEST(VBucketMapTest, ChainsHoldMinOfReplicasAndOtherNodesThenNoNode) {
    for (const Shape& shape : everyShape()) {
        const VBucketMap map = mapOf(shape);
        const auto real = std::min<std::size_t>(shape.replicas, shape.nodes - 1);
        ASSERT_EQ(map.chains.size(), shape.vbuckets) << describe(shape);
        for (const auto& chain : map.chains) {
            ASSERT_EQ(chain.size(), 1 + shape.replicas) << describe(shape);
            for (std::size_t slot = 0; slot < chain.size(); ++slot) {
                EXPECT_EQ(chain[slot] == kNoNode, slot > real) << describe(shape);
            }
        }
    }
}

TEST(VBucketMapTest, SameInputsGiveTheSameMapWhateverTheNodeOrder) {
    for (const Shape& shape : everyShape()) {
        auto reversed = names(shape.nodes);
        std::reverse(reversed.begin(), reversed.end());
        const VBucketMap map = mapOf(shape);
        EXPECT_EQ(map, mapOf(shape)) << describe(shape);
        EXPECT_EQ(map, computeMap(reversed, shape.vbuckets, shape.replicas)) << describe(shape);
        EXPECT_TRUE(std::is_sorted(map.nodes.begin(), map.nodes.end()));
    }
}

TEST(VBucketMapTest, SameNodeSetKeepsThePreviousMap) {
    VBucketMap previous = computeMap({"a", "b", "c"}, 64, 1);
    previous.revision = 41;
    std::swap(previous.chains[0], previous.chains[1]);  // not what computeMap would make
    EXPECT_EQ(computeMap({"c", "a", "b"}, 64, 1, &previous), previous);
}

TEST(VBucketMapTest, ChangedShapeMakesANewMapWithTheNextRevision) {
    VBucketMap previous = computeMap({"a", "b", "c"}, 64, 1);
    previous.revision = 41;
    const VBucketMap grown = computeMap({"a", "b", "c", "d"}, 64, 1, &previous);
    EXPECT_EQ(grown.revision, 42u);
    EXPECT_EQ(grown.nodes.size(), 4u);
    EXPECT_EQ(computeMap({"a", "b", "c"}, 64, 2, &previous).revision, 42u);
    EXPECT_EQ(computeMap({"a", "b", "c"}, 64, 1).revision, 1u);
}

// When a node fails, its vBuckets are promoted where their first replica
// is: those should be spread over all the other nodes.
TEST(VBucketMapTest, FirstReplicasOfANodeSpreadOverTheOthers) {
    const VBucketMap map = computeMap(names(4), 1024, 1);
    std::vector<int> backups(4, 0);
    for (const auto& chain : map.chains) {
        if (chain[0] == 0) {
            ++backups.at(chain[1]);
        }
    }
    EXPECT_EQ(backups[0], 0);
    EXPECT_LE(spread({backups[1], backups[2], backups[3]}), 1);
}

TEST(VBucketMapTest, VbucketsOfListsWhatANodeIsActiveAndReplicaFor) {
    const VBucketMap map = computeMap({"a", "b"}, 4, 1);
    const NodeVBuckets a = vbucketsOf(map, "a");
    const NodeVBuckets b = vbucketsOf(map, "b");
    EXPECT_EQ(a.active, (std::vector<std::uint16_t>{0, 2}));
    EXPECT_EQ(a.replica, (std::vector<std::uint16_t>{1, 3}));
    EXPECT_EQ(b.active, (std::vector<std::uint16_t>{1, 3}));
    EXPECT_EQ(b.replica, (std::vector<std::uint16_t>{0, 2}));
    const NodeVBuckets stranger = vbucketsOf(map, "z");
    EXPECT_TRUE(stranger.active.empty() && stranger.replica.empty());
}

TEST(VBucketMapTest, RefusesInputsNoMapCanBeMadeFrom) {
    EXPECT_THROW(computeMap({}, 4, 0), std::invalid_argument);
    EXPECT_THROW(computeMap({"a", "a"}, 4, 0), std::invalid_argument);
    EXPECT_THROW(computeMap({"a", ""}, 4, 0), std::invalid_argument);
    EXPECT_THROW(computeMap({"a"}, 0, 0), std::invalid_argument);
    EXPECT_THROW(computeMap({"a", "b"}, 4, kMaxReplicas + 1), std::invalid_argument);
}

}  // namespace
}  // namespace kvexec::cluster

namespace kvexec::cluster {
namespace {

// A node leaves: its vBuckets are led by the replicas that hold them; it
// comes back: it gets replica slots only, never an active it has no data
// for (moving actives to it is a rebalance's job).
TEST(VBucketMapTest, AChangedNodeSetKeepsEachVBucketWithTheNodesThatHoldIt) {
    const VBucketMap full = computeMap({"a", "b"}, 16, 1);
    const VBucketMap withoutB = computeMap({"a"}, 16, 1, &full);
    for (const auto& chain : withoutB.chains) {
        EXPECT_EQ(chain, (std::vector<int>{0, kNoNode}));
    }
    const VBucketMap back = computeMap({"a", "b"}, 16, 1, &withoutB);
    EXPECT_EQ(back.revision, withoutB.revision + 1);
    for (const auto& chain : back.chains) {
        EXPECT_EQ(chain, (std::vector<int>{0, 1})) << "b leads a vBucket it has no data for";
    }
    // A survivor keeps leading where it led, and replicas stay put.
    const VBucketMap three = computeMap({"a", "b", "c"}, 64, 1);
    const VBucketMap withoutC = computeMap({"a", "b"}, 64, 1, &three);
    for (std::size_t vb = 0; vb < 64; ++vb) {
        const auto& before = three.chains[vb];
        const auto& after = withoutC.chains[vb];
        ASSERT_NE(after[0], kNoNode);
        if (three.nodes[before[0]] != "c") {
            EXPECT_EQ(withoutC.nodes[after[0]], three.nodes[before[0]]) << vb;
        } else {
            EXPECT_EQ(withoutC.nodes[after[0]], three.nodes[before[1]]) << vb << ": not promoted";
        }
        EXPECT_NE(after[0], after[1]) << vb;
    }
    // Even where every status says a vBucket is empty: it may have taken
    // writes since the statuses were written.
    const HeldSeqnos noData{{{"a", std::vector<std::uint64_t>(16, 0)}}};
    EXPECT_EQ(computeMap({"a", "b"}, 16, 1, &withoutB, &noData).chains, back.chains);
}

// Two replicas, the active lost: the replica holding the higher seqno
// leads (it has every prepare a majority of the chain acknowledged),
// whatever its place in the chain; among equals the chain's order holds.
TEST(VBucketMapTest, ALostActiveIsReplacedByTheReplicaThatHoldsTheMost) {
    const VBucketMap three = computeMap({"a", "b", "c"}, 6, 2);
    HeldSeqnos held;
    for (const std::string node : {"b", "c"}) {
        held.byNode[node] = std::vector<std::uint64_t>(6, 10);
    }
    // vBucket 0: a leads, then b, then c. c holds more than b.
    ASSERT_EQ(three.chains[0], (std::vector<int>{0, 1, 2}));
    held.byNode["c"][0] = 12;
    const VBucketMap withoutA = computeMap({"b", "c"}, 6, 2, &three, &held);
    EXPECT_EQ(withoutA.nodes[withoutA.chains[0][0]], "c");
    EXPECT_EQ(withoutA.nodes[withoutA.chains[0][1]], "b");
    EXPECT_EQ(withoutA.chains[0][2], kNoNode);
    // Elsewhere both hold the same: a lost active's first replica leads.
    ASSERT_EQ(three.chains[3], (std::vector<int>{0, 1, 2}));
    for (std::size_t vb = 0; vb < 6; ++vb) {
        const auto& before = three.chains[vb];
        if (three.nodes[before[0]] != "a") {  // a surviving active keeps leading
            EXPECT_EQ(withoutA.nodes[withoutA.chains[vb][0]], three.nodes[before[0]]) << vb;
        } else if (vb != 0) {
            EXPECT_EQ(withoutA.nodes[withoutA.chains[vb][0]], three.nodes[before[1]]) << vb;
        }
    }
    // A surviving active is never replaced, even by a replica that
    // reports more (its status may be older than the active's writes).
    held.byNode["a"] = std::vector<std::uint64_t>(6, 1);
    held.byNode["c"][1] = 99;
    const VBucketMap withD = computeMap({"a", "b", "c", "d"}, 6, 2, &three, &held);
    for (std::size_t vb = 0; vb < 6; ++vb) {
        EXPECT_EQ(withD.nodes[withD.chains[vb][0]], three.nodes[three.chains[vb][0]]) << vb;
    }
}

TEST(VBucketMapTest, WithoutNodesEmptiesTheirSlotsAndRenumbersTheRest) {
    VBucketMap map;
    map.revision = 9;
    map.numReplicas = 1;
    map.nodes = {"a", "b", "c"};
    map.leases = {1, 2, 3};
    map.chains = {{0, 1}, {1, 2}, {2, 0}};
    map.incoming = {{2}, {0}, {}};
    map.takeoverSince = {0, 0, 8};
    const VBucketMap kept = withoutNodes(map, {"a"});
    EXPECT_EQ(kept.revision, 9u);
    EXPECT_EQ(kept.nodes, (std::vector<std::string>{"b", "c"}));
    EXPECT_EQ(kept.leases, (std::vector<std::int64_t>{2, 3}));
    EXPECT_EQ(kept.chains, (std::vector<std::vector<int>>{{kNoNode, 0}, {0, 1}, {1, kNoNode}}));
    EXPECT_EQ(kept.incoming, (std::vector<std::vector<int>>{{1}, {}, {}}));
    EXPECT_EQ(kept.takeoverSince, (std::vector<std::uint64_t>{0, 0, 8}));
    EXPECT_EQ(leaseOf(kept, "c"), 3);
    EXPECT_EQ(leaseOf(kept, "a"), 0);
    EXPECT_EQ(withoutNodes(map, {}), map);
}

}  // namespace
}  // namespace kvexec::cluster
