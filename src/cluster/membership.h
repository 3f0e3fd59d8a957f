// cluster/membership.h: where a cluster lives in etcd, and who is in it
// and who leads, read from what etcd holds. The deciding half of the
// election (election.h does the I/O).
//
// Layout under a root (e.g. "/kvexec/cluster1"):
//   <root>/nodes/<name>  the node's address, under the node's lease
//   <root>/leader        the leader's name, under the leader's lease
//   <root>/map           the vBucket map (vbucket_map.h), written by the leader
//   <root>/status/<name> what the node has acted on (cluster_state.h's
//                        NodeStatus), under the node's lease
//   <root>/rebalance     while a rebalance runs, the map it ends at
//                        (rebalance.h), written by kvexec-cluster
//   <root>/ejected/<name> a node rebalanced out (kvexec-cluster remove):
//                        no map names it until kvexec-cluster add
//   <root>/manifest      the scopes and collections every node holds (the
//                        engine's manifest_state.h JSON), written with a
//                        CAS by the node whose REST endpoint took a change
//   <root>/flush         the count of bucket flushes asked (decimal), raised
//                        with a CAS by the node whose REST endpoint took one
// Keys under a lease vanish when the lease expires, so a node that stops
// renewing leaves the membership, and the leadership with it.
//
// Pure functions and plain values; safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/etcd_types.h"

namespace kvexec::cluster {

class ClusterKeys {
  public:
    // `root` without a trailing '/'.
    explicit ClusterKeys(std::string root) : root_(std::move(root)) {}

    const std::string& root() const { return root_; }
    std::string all() const;          // "<root>/": the prefix of every key
    std::string nodesPrefix() const;  // "<root>/nodes/"
    std::string node(std::string_view name) const;
    std::string leader() const;
    std::string map() const;
    std::string rebalance() const;      // "<root>/rebalance": a rebalance's target map
    std::string manifest() const;       // "<root>/manifest": the collections manifest
    std::string flush() const;          // "<root>/flush": how many flushes were asked
    std::string ejectedPrefix() const;  // "<root>/ejected/"
    std::string ejected(std::string_view name) const;
    std::string statusPrefix() const;  // "<root>/status/"
    std::string status(std::string_view name) const;

  private:
    std::string under(std::string_view name) const;  // "<root>/<name>"

    std::string root_;
};

struct Membership {
    std::vector<std::string> nodes;  // registered, sorted
    std::optional<std::string> leader;
    // The leader key's mod revision: changes with every new term, so acts
    // done for a leader can be fenced by it. 0 without a leader.
    std::int64_t leaderRevision = 0;

    bool operator==(const Membership&) const = default;
};

// readMembership reads the keys of getPrefix(keys.all()); keys it does not
// know are ignored, and so is a node key with an empty name.
Membership readMembership(const ClusterKeys& keys, const std::vector<KeyValue>& underRoot);

enum class Role {
    Leader,     // the leader key names this node
    Follower,   // it names another node
    Candidate,  // there is none: campaign
};

// roleOf decides from the leader key alone, as the CAS that elects does: a
// leader key outlives its node's registration only until their shared
// lease expires, and until then no one else can win.
Role roleOf(const Membership& membership, std::string_view self);

}  // namespace kvexec::cluster
