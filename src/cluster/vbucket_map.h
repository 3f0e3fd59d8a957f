// cluster/vbucket_map.h: the vBucket map, which node is active for each
// vBucket and which hold its replicas, as the elected node computes it and
// publishes it in etcd, and as every node reads it back.
//
// Pure functions over values: no I/O, no locks, no global state. Safe from
// any thread; a VBucketMap is a plain value (copy it to share it).
//
// Errors: computeMap() throws std::invalid_argument for inputs no map can be
// made from; decodeVBucketMap() throws std::invalid_argument whose message
// says what in the JSON is wrong. Nothing here returns a partial map.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kvexec::cluster {

// A slot of a chain that holds no node (a replica there are too few nodes
// for, as Couchbase's vBucketMap writes it).
inline constexpr int kNoNode = -1;

// Couchbase's limit, and what durability majorities are defined for.
inline constexpr std::uint32_t kMaxReplicas = 3;

struct VBucketMap {
    // Orders maps: a node applies a map only if its revision is higher than
    // the one it has (the fence against an old leader's publication).
    std::uint64_t revision = 0;
    std::uint32_t numReplicas = 0;
    std::vector<std::string> nodes;  // sorted, unique; chains index into it
    // leases[i]: the etcd lease nodes[i] was registered under when the
    // leader made this map (empty: a map made before leases were recorded).
    // A node acts on its place in a map only under that lease: one that
    // restarted, or fenced itself and joined again, holds nothing until the
    // leader has failed its old place over (node_agent.h).
    std::vector<std::int64_t> leases;
    // One chain per vBucket: chains[vb][0] is the active, then
    // numReplicas replica slots; kNoNode where there is no node.
    std::vector<std::vector<int>> chains;
    // A rebalance's moves in flight (rebalance.h); both empty when none.
    // incoming[vb]: nodes building a copy of vb from its active, streaming
    // as replicas that durability does not count yet.
    std::vector<std::vector<int>> incoming;
    // takeoverSince[vb]: the revision from which vb's active hands over
    // (refuses clients, so that its high seqno stops moving); 0: it does not.
    std::vector<std::uint64_t> takeoverSince;

    bool operator==(const VBucketMap&) const = default;
};

// What the nodes hold, as their statuses say: each node's high seqno of
// every vBucket (by vbid; 0 or missing: nothing). A map change promotes
// the replica that holds the most in place of a lost active.
struct HeldSeqnos {
    std::map<std::string, std::vector<std::uint64_t>, std::less<>> byNode;

    std::uint64_t seqnoOf(std::string_view node, std::size_t vb) const;
};

// computeMap builds a balanced map of `numVBuckets` vBuckets over `nodes`.
//
// Guarantees:
// - every chain has 1 + numReplicas slots; the active is a real node, the
//   first min(numReplicas, nodes - 1) replicas are real, the rest kNoNode;
// - no node appears twice in a chain;
// - every node's active count is within 1 of every other node's, and so
//   are the replica counts (exact for whole rounds of n vBuckets; the
//   last round's quotas were checked exhaustively up to 160 nodes);
// - the same inputs give the same map (no randomness, order of `nodes`
//   does not matter);
// - with `previous` over the same node set, replica count and vBucket
//   count, the result is `*previous` unchanged (nothing to publish).
//   Otherwise the revision is previous->revision + 1 (1 with no previous).
// - with `previous` of the same vBucket count over another node set, the
//   data stays where it is: each vBucket keeps its previous active if it
//   is still a member; if not, it is led by the surviving member of its
//   previous chain with the highest seqno in `held` (chain order among
//   equals, and without `held`): the replica that holds every prepare a
//   majority acknowledged. Its other surviving members stay as replicas;
//   only empty slots take nodes from the balanced map (and whole chains,
//   for a vBucket none of whose nodes survived). A node that returns or
//   joins is never made active: moving actives to it is a rebalance's job
//   (rebalance.h). A cluster is balanced when its nodes are
//   all in its first map (node_agent.h waits for them to stop joining).
//
// Requires: nodes non-empty, no duplicate names, no empty name;
// numVBuckets > 0; numReplicas <= kMaxReplicas. Throws std::invalid_argument otherwise.
VBucketMap computeMap(std::vector<std::string> nodes, std::uint16_t numVBuckets,
                      std::uint32_t numReplicas, const VBucketMap* previous = nullptr,
                      const HeldSeqnos* held = nullptr);

// `node`'s index in map.nodes (what chains hold); kNoNode if not named.
int indexOf(const VBucketMap& map, std::string_view node);
// The name at `index` of map.nodes; "" for kNoNode.
std::string nodeName(const VBucketMap& map, int index);

// The lease `node` holds its place in `map` under; 0 where the map
// records none (or does not name it).
std::int64_t leaseOf(const VBucketMap& map, std::string_view node);

// `map` without the nodes in `gone`: their slots empty (kNoNode), their
// incoming copies dropped, the other indexes renumbered. The revision is
// unchanged. What a failover starts from (computeMap's `previous`), and
// what a node that lost its place acts on.
VBucketMap withoutNodes(const VBucketMap& map, const std::vector<std::string>& gone);

// Whether vb has a move in flight (incoming copies or a takeover), and
// whether `node` (an index) builds an incoming copy of it.
bool isMoving(const VBucketMap& map, std::size_t vb);
bool isIncoming(const VBucketMap& map, std::size_t vb, int node);
// Whether a map has moves in flight.
bool hasMoves(const VBucketMap& map);
// Both move vectors one entry per chain while there are moves, both empty
// when there are none (so that equal maps compare equal).
void normalizeMoves(VBucketMap& map);

// What one node holds in a map, in vBucket order (an incoming copy counts
// as a replica).
struct NodeVBuckets {
    std::vector<std::uint16_t> active;
    std::vector<std::uint16_t> replica;
};

// vbucketsOf lists the vBuckets `node` is active for and replica for; both
// empty if the map does not name the node.
NodeVBuckets vbucketsOf(const VBucketMap& map, std::string_view node);

// encodeVBucketMap writes {"revision", "numReplicas", "nodes", "chains"},
// "leases" where recorded, and "incoming" and "takeoverSince" while moves
// are in flight.
std::string encodeVBucketMap(const VBucketMap& map);

// decodeVBucketMap reads what encodeVBucketMap writes and checks every
// invariant a node relies on: nodes sorted and unique, every chain
// 1 + numReplicas long (numReplicas <= kMaxReplicas) with indexes in range (or kNoNode) and no node
// twice; leases absent or one positive lease per node; incoming and takeoverSince absent or one
// entry per chain, an incoming node in range and not in its chain. Throws std::invalid_argument
// naming the first problem found.
VBucketMap decodeVBucketMap(std::string_view json);

}  // namespace kvexec::cluster
