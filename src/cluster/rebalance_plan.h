// cluster/rebalance_plan.h: where a rebalance takes the cluster: a
// balanced map over a new node set that moves as little data as it can
// from the map in place. The moves themselves (backfill, then takeover)
// are the rebalance's (rebalance.h); this is only the destination.
//
// Pure functions over values: no I/O, no locks, no global state; safe from
// any thread.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "cluster/vbucket_map.h"

namespace kvexec::cluster {

// rebalanceTarget returns a map over `nodes` with `current`'s vBucket and
// replica counts, and revision current.revision + 1, such that:
// - every node's active count is within 1 of every other's (exact quotas,
//   the extra ones to the nodes that lead the most now);
// - replica counts are within 1 of each other where chains allow it
//   (checked for 1..7 nodes, up to 1024 vBuckets, 0..3 replicas);
// - every chain has 1 + numReplicas slots, the first min(numReplicas,
//   nodes - 1) replicas real, no node twice;
// - it keeps each vBucket's active where that node is within its quota,
//   and otherwise prefers a node that already holds a copy (a replica of
//   it: a takeover without a backfill); replicas likewise stay where they
//   are within quota. A node outside `nodes` holds nothing in it.
// Requires what computeMap requires of `nodes`; throws std::invalid_argument.
VBucketMap rebalanceTarget(const VBucketMap& current, std::vector<std::string> nodes);

// removalTarget is rebalanceTarget over `current`'s nodes but `leaving`,
// written over all of `current`'s nodes (the leaving one holds nothing in
// it), so that the rebalance moves within one list of nodes. Throws
// std::invalid_argument if `leaving` is not in the map or is its only node.
VBucketMap removalTarget(const VBucketMap& current, const std::string& leaving);

// How far a map is from a target of the same shape: the vBuckets whose
// active differs, and the replica copies the target has that the map
// does not (each one a backfill).
struct RebalanceDistance {
    std::size_t activeMoves = 0;
    std::size_t replicaCopies = 0;
};
RebalanceDistance rebalanceDistance(const VBucketMap& from, const VBucketMap& to);

}  // namespace kvexec::cluster
