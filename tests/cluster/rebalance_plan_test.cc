// rebalanceTarget (cluster/rebalance_plan.h): balanced over the new node
// set from any map, and moving no more than it must: a node joining takes
// only its share, a node leaving hands its actives to the nodes holding
// their replicas, and a balanced map stays as it is.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "cluster/rebalance_plan.h"
#include "node_names.h"

namespace kvexec::cluster {
namespace {

using test::names;

int spread(const std::vector<int>& counts) {
    const auto [min, max] = std::minmax_element(counts.begin(), counts.end());
    return *max - *min;
}

void expectBalancedAndWellFormed(const VBucketMap& target, const std::string& what) {
    const int nodeCount = static_cast<int>(target.nodes.size());
    const int real = std::min<int>(static_cast<int>(target.numReplicas), nodeCount - 1);
    std::vector<int> actives(target.nodes.size(), 0);
    std::vector<int> replicas(target.nodes.size(), 0);
    for (const auto& chain : target.chains) {
        ASSERT_EQ(chain.size(), 1 + target.numReplicas) << what;
        std::set<int> seen;
        for (int slot = 0; slot <= static_cast<int>(target.numReplicas); ++slot) {
            const int node = chain[static_cast<std::size_t>(slot)];
            if (slot <= real) {
                ASSERT_NE(node, kNoNode) << what;
                ASSERT_TRUE(seen.insert(node).second) << what << ": a node twice in a chain";
                ++(slot == 0 ? actives : replicas)[static_cast<std::size_t>(node)];
            } else {
                EXPECT_EQ(node, kNoNode) << what;
            }
        }
    }
    EXPECT_LE(spread(actives), 1) << what;
    EXPECT_LE(spread(replicas), 1) << what;
}

TEST(RebalanceTargetTest, BalancedAndWellFormedFromJoinsLeavesAndLopsidedMaps) {
    for (int before = 1; before <= 6; ++before) {
        for (const std::uint16_t vbuckets : {4, 64, 1024}) {
            for (std::uint32_t replicas = 0; replicas <= 3; ++replicas) {
                const VBucketMap current = computeMap(names(before), vbuckets, replicas);
                std::string what = std::to_string(before) + " nodes, " + std::to_string(vbuckets) +
                                   " vBuckets, " + std::to_string(replicas) + " replicas";
                expectBalancedAndWellFormed(rebalanceTarget(current, names(before + 1)),
                                            what + ", one joins");
                if (before > 1) {
                    expectBalancedAndWellFormed(rebalanceTarget(current, names(before - 1)),
                                                what + ", one leaves");
                }
                // Every active on node0 (joined one by one after the first map).
                const VBucketMap alone = computeMap({"node0"}, vbuckets, replicas);
                const VBucketMap lopsided = computeMap(names(before), vbuckets, replicas, &alone);
                expectBalancedAndWellFormed(rebalanceTarget(lopsided, names(before)),
                                            what + ", lopsided");
            }
        }
    }
}

TEST(RebalanceTargetTest, ABalancedMapOverTheSameNodesMovesNothing) {
    const VBucketMap current = computeMap(names(3), 1024, 1);
    const VBucketMap target = rebalanceTarget(current, names(3));
    EXPECT_EQ(target.revision, current.revision + 1);
    const RebalanceDistance distance = rebalanceDistance(current, target);
    EXPECT_EQ(distance.activeMoves, 0u);
    EXPECT_EQ(distance.replicaCopies, 0u);
}

// The fourth node of 1024 vBuckets with one replica takes its 256 actives
// and 256 replicas: 512 copies, the least any balanced map needs.
TEST(RebalanceTargetTest, AJoiningNodeTakesOnlyItsShare) {
    const VBucketMap current = computeMap(names(3), 1024, 1);
    const VBucketMap target = rebalanceTarget(current, names(4));
    const RebalanceDistance distance = rebalanceDistance(current, target);
    EXPECT_EQ(distance.activeMoves, 256u);
    EXPECT_EQ(distance.replicaCopies, 512u);
}

// A node leaving: its actives go to the nodes that hold their replicas (no
// backfill for those) as far as the quotas allow (here all but one: node0
// holds 342 actives and 171 of node2's replicas, one over its 512), and
// each chain it was in gets one new copy.
TEST(RebalanceTargetTest, ALeavingNodesActivesGoWhereTheirReplicasAre) {
    const VBucketMap current = computeMap(names(3), 1024, 1);
    const VBucketMap target = rebalanceTarget(current, names(2));
    std::size_t chainsWithNode2 = 0;
    std::size_t ledWithoutACopy = 0;
    for (std::size_t vb = 0; vb < current.chains.size(); ++vb) {
        const auto& chain = current.chains[vb];
        if (std::find(chain.begin(), chain.end(), 2) == chain.end()) {
            continue;
        }
        ++chainsWithNode2;
        if (chain[0] == 2 && target.nodes[target.chains[vb][0]] != current.nodes[chain[1]]) {
            ++ledWithoutACopy;
        }
    }
    EXPECT_EQ(ledWithoutACopy, 1u);
    const RebalanceDistance distance = rebalanceDistance(current, target);
    EXPECT_EQ(distance.replicaCopies, chainsWithNode2);
}

// Removing a node: the target is over the others but keeps the map's node
// list (the rebalance moves within one list), the leaving node in no chain.
TEST(RebalanceTargetTest, ARemovalTargetLeavesTheNodeInNoChain) {
    const VBucketMap current = computeMap(names(3), 64, 1);
    const VBucketMap target = removalTarget(current, "node1");
    EXPECT_EQ(target.nodes, current.nodes);
    std::vector<int> actives(3, 0);
    for (const auto& chain : target.chains) {
        EXPECT_EQ(std::count(chain.begin(), chain.end(), 1), 0);
        ++actives[static_cast<std::size_t>(chain[0])];
    }
    EXPECT_EQ(actives[0], 32);
    EXPECT_EQ(actives[2], 32);
    EXPECT_THROW(removalTarget(current, "nope"), std::invalid_argument);
    EXPECT_THROW(removalTarget(computeMap({"a"}, 4, 0), "a"), std::invalid_argument);
}

TEST(RebalanceTargetTest, RefusesWhatComputeMapRefuses) {
    const VBucketMap current = computeMap(names(2), 4, 1);
    EXPECT_THROW(rebalanceTarget(current, {}), std::invalid_argument);
    EXPECT_THROW(rebalanceTarget(current, {"a", "a"}), std::invalid_argument);
}

}  // namespace
}  // namespace kvexec::cluster
