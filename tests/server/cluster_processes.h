// cluster_processes.h: a cluster of real kvexec-server processes for
// socket tests: a private etcd (tests/cluster/etcd_fixture.h) and N nodes
// started with --cluster, each on its own data directory, which outlives
// a node's kill so that it can be restarted on it. Waits poll a
// condition against kSocketDeadline.
//
// Thread safety: one test thread uses each object.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "etcd_fixture.h"
#include "protocol/binary_types.h"
#include "server/server_process.h"

namespace kvexec::server::test {

// A durable SET of `key` to the vBucket it hashes to among `vbuckets`;
// `expiry` in seconds from now (0: none).
RawRequest durableSet(const std::string& key, const std::string& value,
                      protocol::DurabilityLevel level, std::uint16_t timeoutMs,
                      std::uint16_t vbuckets, std::uint32_t expiry = 0);

// SIGSTOP stops each of a process's threads as it is next scheduled: waits
// until /proc shows every one of them stopped.
bool waitUntilStopped(pid_t pid);

// Runs kvexec-cluster --etcd `etcdUrl` `arguments` (its output dropped);
// its exit code.
int runClusterTool(const std::string& etcdUrl, const std::string& arguments);

class ClusterProcesses {
  public:
    // Starts etcd (serving https with `etcdScheme` Https, which the nodes
    // then reach with --etcd-ca) and `nodes` nodes named n0, n1, ... with
    // --replicas `replicas`, `vbuckets` vBuckets, --sync none and `extraArgs`.
    ClusterProcesses(std::size_t nodes, std::uint32_t replicas, std::uint16_t vbuckets,
                     std::vector<std::string> extraArgs = {},
                     cluster::test::EtcdScheme etcdScheme = cluster::test::EtcdScheme::Http);
    // SIGCONT and SIGTERM to every node still running; true if each exited 0.
    bool stopAll();

    std::size_t size() const { return nodes_.size(); }
    std::uint16_t vbuckets() const { return vbuckets_; }
    std::string etcdUrl() const { return etcd_.url(); }
    std::string etcdCaFile() const { return etcd_.caFile(); }  // "" over http
    ServerProcess& node(std::size_t i) { return *nodes_.at(i); }
    bool running(std::size_t i) const { return nodes_.at(i) != nullptr; }
    // The index of the running node listening on `port`.
    std::size_t indexOf(std::uint16_t port) const;
    void kill(std::size_t i);     // SIGKILL: its data directory stays
    void restart(std::size_t i);  // on its data directory
    std::size_t addNode();        // a new node, n<size()>; returns its index

    // From now on config, waitForMap, writeOnceReplicated and
    // readWhenItHolds select `bucket` (SELECT_BUCKET) on each connection;
    // before: the nodes' first bucket, unselected.
    void selectBucket(std::string bucket) { bucket_ = std::move(bucket); }

    // The cluster config node `port` serves (GET_CLUSTER_CONFIG); null if
    // it does not answer.
    nlohmann::json config(std::uint16_t port);
    // Every running node serves the same map, whose server list is exactly
    // the running nodes (or the `members` given, by index); remembered for
    // portOf.
    bool waitForMap(std::optional<std::vector<std::size_t>> members = std::nullopt);
    const nlohmann::json& map() const { return map_; }
    // The port of the node at `slot` of the key's chain (0: the active) in
    // the map waitForMap last saw; 0 for an empty slot.
    std::uint16_t portOf(const std::string& key, std::size_t slot) const;

    // A durable write to the key's active, retried while it is ambiguous
    // (the first ones may time out while the replica's stream opens).
    std::optional<BinaryResponse> writeOnceReplicated(const std::string& key,
                                                      const std::string& value,
                                                      protocol::DurabilityLevel level,
                                                      std::uint32_t expiry = 0);
    // The copy at `slot` of the key's chain (GET_REPLICA for a replica)
    // once it holds `value`, or the last answer at the deadline.
    std::optional<BinaryResponse> readWhenItHolds(const std::string& key, std::size_t slot,
                                                  const std::string& value);

  private:
    std::vector<std::string> args(std::size_t node) const;
    // A client of node `port` on the selected bucket; null if it refused it.
    std::unique_ptr<Client> connect(std::uint16_t port) const;
    bool serves(const nlohmann::json& config, const std::vector<std::size_t>& members) const;

    const std::uint32_t replicas_;
    const std::uint16_t vbuckets_;
    const std::vector<std::string> extraArgs_;
    kvexec::cluster::test::EtcdProcess etcd_;
    std::vector<std::unique_ptr<TempDir>> dirs_;
    std::vector<std::unique_ptr<ServerProcess>> nodes_;
    nlohmann::json map_;
    std::string bucket_;  // empty: none selected
};

}  // namespace kvexec::server::test
