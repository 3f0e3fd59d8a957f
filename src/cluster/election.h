// cluster/election.h: one node's registration and campaign in etcd, the
// recipe of etcd's concurrency package done with one txn: the leader key
// is created only if absent, under the candidate's lease, so exactly one
// candidate wins, and the key goes when the winner's lease does.
//
// Leadership from a lease is not mutual exclusion on its own (Jepsen,
// etcd 3.4.3: a lease can expire while its holder still acts): what a
// leader writes must be fenced, by Membership::leaderRevision or the map's
// revision, and a node that cannot renew its lease stops acting first.
//
// Thread safety: as EtcdClient (any thread; calls serialize on it). The
// lease is the caller's: it grants it, keeps it alive and revokes it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "cluster/etcd_client.h"
#include "cluster/membership.h"

namespace kvexec::cluster {

class ClusterMember {
  public:
    // `etcd` must outlive this object.
    ClusterMember(EtcdClient& etcd, ClusterKeys keys, std::string name, std::int64_t leaseId);

    const std::string& name() const { return name_; }
    const ClusterKeys& keys() const { return keys_; }

    // registerNode writes <root>/nodes/<name> = address under the lease.
    void registerNode(std::string_view address);
    // campaign tries once to become leader; true if this node leads now
    // (it won, or the leader key is already its own under the same lease).
    bool campaign();
    // membership reads who is registered and who leads, now.
    Membership membership();

  private:
    EtcdClient& etcd_;
    const ClusterKeys keys_;
    const std::string name_;
    const std::int64_t leaseId_;
};

}  // namespace kvexec::cluster
