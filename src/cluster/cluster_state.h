// cluster/cluster_state.h: what a node knows of its cluster at one moment,
// read from the keys under the cluster's root (membership.h's layout), and
// the decisions taken from it: which map the leader publishes
// (mapToPublish) and what a map asks of one node (vbucketChanges). The
// node agent (node_agent.h) does the I/O around these; kvexec-cluster
// prints the same view.
//
// Node values in etcd, JSON:
//   <root>/nodes/<name>   NodeAddress: {"host", "kvPort", "mgmtPort"[, "tlsPort",
//                         "mgmtTlsPort"]}
//   <root>/status/<name>  NodeStatus: {"mapRevision"}, "membership" once
//                         known, "manifestUid" once the node has one,
//                         "flushed" once it flushed, and, from a node
//                         that replicates, {"replicaVBuckets",
//                         "streamsOpen", "active": [[vb, seqno], ...],
//                         "replica": [[vb, seqno], ...]}
//
// Pure functions and plain values: no I/O, no locks, no global state; safe
// from any thread. Text from etcd is never trusted: a value that does not
// decode is reported (the view's `problems`), never a crash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cluster/etcd_types.h"
#include "cluster/membership.h"
#include "cluster/vbucket_map.h"

namespace kvexec::cluster {

// Where a node serves: the value of its node key.
struct NodeAddress {
    std::string host;
    std::uint16_t kvPort = 0;
    std::uint16_t mgmtPort = 0;     // 0: no management endpoint
    std::uint16_t tlsPort = 0;      // 0: no TLS port (absent from older nodes' keys)
    std::uint16_t mgmtTlsPort = 0;  // 0: no HTTPS management port (as tlsPort)

    bool operator==(const NodeAddress&) const = default;
};

std::string encodeNodeAddress(const NodeAddress& address);
// Throws std::invalid_argument saying what is wrong.
NodeAddress decodeNodeAddress(std::string_view json);

// One vBucket's high seqno, as a node publishes it.
struct VBucketSeqno {
    std::uint16_t vbid = 0;
    std::uint64_t seqno = 0;

    bool operator==(const VBucketSeqno&) const = default;
};

// Where a node's replication stands. A node cannot know how far behind
// its replicas are (that needs the active's seqno), so each node publishes
// the high seqnos of the vBuckets it holds, and a reader of all statuses
// (kvexec-cluster) joins each replica with its active. vBuckets at seqno 0
// are left out: with 1024 vBuckets an idle node's value stays small.
struct ReplicationStatus {
    std::size_t replicaVBuckets = 0;    // replica vBuckets in the applied map
    std::size_t streamsOpen = 0;        // of their DCP streams, those open
    std::vector<VBucketSeqno> active;   // by vbid
    std::vector<VBucketSeqno> replica;  // by vbid

    bool operator==(const ReplicationStatus&) const = default;
};

// What a node has acted on, published under its lease: the revision of the
// last map it applied (0: none yet), and its replication once it has any
// (absent in a status written by a node without it, which decodes as
// before).
struct NodeStatus {
    // A constructor rather than an aggregate: {revision} alone, as written
    // before replication joined, stays complete (no missing initializer).
    NodeStatus() = default;
    NodeStatus(std::uint64_t revision, std::optional<ReplicationStatus> replicationStatus = {})
        : mapRevision(revision), replication(std::move(replicationStatus)) {}

    std::uint64_t mapRevision = 0;
    std::optional<ReplicationStatus> replication;
    // The uid of the collections manifest the node holds (0: not said).
    std::uint64_t manifestUid = 0;
    // The cluster's flushes (<root>/flush) the node has carried out.
    std::uint64_t flushed = 0;
    // The membership (membershipDigest) of the view the node had read when
    // it wrote this: a status written under the membership that lost a
    // node was sampled after that node stopped. "": not said.
    std::string membership;

    bool operator==(const NodeStatus&) const = default;
};

std::string encodeNodeStatus(const NodeStatus& status);
// Throws std::invalid_argument saying what is wrong.
NodeStatus decodeNodeStatus(std::string_view json);

// The flush key's value: a decimal count. Throws std::invalid_argument
// for anything else.
std::uint64_t decodeFlushCount(std::string_view text);

// Everything under a cluster's root, decoded.
struct ClusterView {
    Membership membership;
    // The leader key's lease: a node leads only under its current lease
    // (a key left from an earlier lease of its own is not its term).
    std::int64_t leaderLease = 0;
    std::map<std::string, NodeAddress> addresses;  // registered nodes whose value decodes
    std::map<std::string, std::int64_t> leases;    // the lease of each node key
    std::map<std::string, NodeStatus> statuses;
    std::optional<VBucketMap> map;              // absent, or present but malformed: nullopt
    std::int64_t mapModRevision = 0;            // the map key's, for a fenced write; 0: absent
    std::optional<VBucketMap> rebalanceTarget;  // while a rebalance runs (and decodes)
    std::set<std::string> ejected;              // nodes rebalanced out
    std::int64_t rebalanceModRevision = 0;      // the rebalance key's; 0: absent
    // The collections manifest as etcd holds it. The cluster library does
    // not read it (that is the engine's manifest_state.h): it only carries
    // it to the nodes.
    std::optional<std::string> manifest;
    std::uint64_t flushes = 0;          // the flush key's count; 0: absent
    std::vector<std::string> problems;  // values that did not decode, and why
};

ClusterView readClusterView(const ClusterKeys& keys, const std::vector<KeyValue>& underRoot);

// What the node agent tells its owner: the map, who is registered, where
// they are, who leads, and the revision every node has applied. Other
// changes to the NodeStatuses (their seqnos) are not part of it.
struct ClusterState {
    std::optional<VBucketMap> map;        // none until a leader published one
    std::vector<std::string> registered;  // alive now, sorted
    // The registered nodes', and those the map still names (remembered from
    // when they were registered, where known).
    std::map<std::string, NodeAddress> addresses;
    std::optional<std::string> leader;
    // The highest map revision that every registered node the map names
    // has applied, by their statuses (0: some node has applied none). A
    // client sent a map once it is applied everywhere meets no node still
    // on the one before.
    std::uint64_t appliedEverywhere = 0;
    // The cluster's collections manifest (ClusterView::manifest), and the
    // lowest manifest uid the registered nodes' statuses say they hold (0:
    // some node has said none).
    std::optional<std::string> manifest;
    std::uint64_t manifestEverywhere = 0;
    // The flushes asked of the bucket (ClusterView::flushes), and the
    // lowest count the registered nodes say they have carried out.
    std::uint64_t flushes = 0;
    std::uint64_t flushedEverywhere = 0;
    // The nodes the map makes active for some vBucket that are not
    // registered (down, not yet failed over), sorted: a flush now would
    // leave their documents in place (cluster_admin.h).
    std::vector<std::string> activesDown;

    bool operator==(const ClusterState&) const = default;
};

// The state a node acts on: the view's map only if it is over
// `numVBuckets` (a map of another shape is ignored until the leader
// replaces it), and the addresses of the registered nodes plus those in
// `remembered` that the map names.
ClusterState clusterStateOf(const ClusterView& view, std::uint16_t numVBuckets,
                            const std::map<std::string, NodeAddress>& remembered);

// The nodes `map` makes active for some vBucket that are not in
// `registered` (sorted).
std::vector<std::string> activesDown(const VBucketMap& map,
                                     const std::vector<std::string>& registered);

// The nodes a map is made over: the registered ones but those rebalanced
// out.
std::vector<std::string> mappableNodes(const ClusterView& view);

// The registered nodes that the view's map names under another lease than
// the one they are registered under now: each restarted, or fenced itself
// and joined again, since the map was made. Whatever it led may have
// taken writes it no longer holds, and it has not acted on the map since
// (mapForLease), so its place in the map is failed over as if it had left.
std::vector<std::string> rejoinedNodes(const ClusterView& view);

// Names the registered nodes and the lease each is registered under (a
// short hex string): it changes when a node joins, leaves, or joins again.
std::string membershipDigest(const ClusterView& view);

// Every mappable node published a status written under the view's
// membership. A promotion ranks the survivors on their seqnos: those are
// final only in a status sampled after the lost node stopped, i.e. after
// its departure (or its rejoin) was in etcd.
bool statusesFresh(const ClusterView& view);

// Whether `next` gives some vBucket another active than `previous`.
bool changesActives(const VBucketMap& previous, const VBucketMap& next);

// The leader's decision: the map to publish over the mappable nodes, or
// nullopt when the one in etcd already is it (or there is none).
// The new map's revision is above both the old map's and
// `highestRevisionSeen` (a map that stopped decoding still had one).
// Rejoined nodes are failed over (their vBuckets promoted on the survivors
// of their chains) and then mapped as nodes that join. The map records
// every node's lease. The agent publishes a map that changes actives only
// once the statuses are fresh (statusesFresh), or a while after.
std::optional<VBucketMap> mapToPublish(const ClusterView& view, std::uint16_t numVBuckets,
                                       std::uint32_t numReplicas,
                                       std::uint64_t highestRevisionSeen);

// What `node`, registered under `lease`, acts on: `map` itself, or, where
// the map records another lease for it (it was made before the node
// restarted or fenced itself), the map without the node: it holds nothing
// until the leader has failed its old place over.
VBucketMap mapForLease(const VBucketMap& map, const std::string& node, std::int64_t lease);

// What a node is for one vBucket of a map.
enum class VBucketRole { Active, Replica, Dead };
std::string_view to_string(VBucketRole role);

struct VBucketChange {
    std::uint16_t vbid = 0;
    VBucketRole role = VBucketRole::Dead;
    // The vBucket's chain by name: active first, then the replicas; "" for
    // a slot with no node.
    std::vector<std::string> chain;
    bool handingOver = false;  // Active: a rebalance's takeover, clients wait

    bool operator==(const VBucketChange&) const = default;
};

// One entry per vBucket of the map, in vBucket order: Active where `node`
// heads the chain (handing over during a takeover), Replica where it is
// further down or builds an incoming copy, Dead where neither names it.
std::vector<VBucketChange> vbucketChanges(const VBucketMap& map, std::string_view node);

}  // namespace kvexec::cluster
