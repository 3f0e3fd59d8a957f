// kvexec-cluster: the operator's view of a kvexec cluster kept in etcd
// (see `kvexec-cluster --help` and cluster_tool.h): the cluster's status,
// a hard failover, a rebalance and its progress.
#include <chrono>
#include <iostream>
#include <thread>

#include "cluster/cluster_tool.h"
#include "cluster/etcd_client.h"
#include "cluster/rebalance.h"
#include "cluster/rebalance_plan.h"

namespace {

// A hard failover is the lease's end brought forward: the node's keys go
// with it, and the elected node maps without it as when it dies.
int failOver(kvexec::cluster::EtcdClient& etcd, const kvexec::cluster::ClusterKeys& keys,
             const std::string& node) {
    const auto registered = etcd.get(keys.node(node));
    if (!registered || registered->lease == 0 || !etcd.revoke(registered->lease)) {
        std::cerr << "kvexec-cluster: " << node << " is not registered under " << keys.root()
                  << " (failed over already, or never joined)\n";
        return 1;
    }
    std::cout << "kvexec-cluster: " << node << " failed over (lease " << registered->lease
              << " revoked); the elected node promotes its replicas\n";
    return 0;
}

// Prints the progress while the elected node rebalances: one line per
// change. Done when the request is gone: exit 0 if the map is its target.
int watchRebalance(kvexec::cluster::EtcdClient& etcd, const kvexec::cluster::ClusterKeys& keys,
                   const kvexec::cluster::VBucketMap& target, bool json) {
    using namespace kvexec::cluster;
    std::size_t shown = target.chains.size() + 1;
    for (;;) {
        const ClusterView view = readClusterView(keys, etcd.getPrefix(keys.all()));
        const std::size_t inPlace = view.map ? chainsInPlace(*view.map, target) : 0;
        if (inPlace != shown) {
            std::cout << (json ? rebalanceProgressJson(inPlace, target.chains.size(),
                                                       view.map ? view.map->revision : 0)
                               : rebalanceProgressText(inPlace, target.chains.size()))
                      << std::endl;
            shown = inPlace;
        }
        if (!view.rebalanceTarget || *view.rebalanceTarget != target) {
            const bool done = inPlace == target.chains.size();
            std::cerr << "kvexec-cluster: rebalance "
                      << (done ? "done" : "cancelled (a node joined, left or failed); run it again")
                      << "\n";
            return done ? 0 : 1;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
}

// Asks the elected node for a rebalance over the registered nodes (or
// follows the one running), then watches it.
int rebalance(kvexec::cluster::EtcdClient& etcd, const kvexec::cluster::ClusterKeys& keys,
              bool json) {
    using namespace kvexec::cluster;
    const ClusterView view = readClusterView(keys, etcd.getPrefix(keys.all()));
    if (view.rebalanceTarget) {
        std::cerr << "kvexec-cluster: a rebalance is running; following it\n";
        return watchRebalance(etcd, keys, *view.rebalanceTarget, json);
    }
    if (!view.map || view.map->nodes != view.membership.nodes) {
        std::cerr << "kvexec-cluster: the map does not name every registered node yet (one "
                     "joined or left a moment ago); try again\n";
        return 1;
    }
    const VBucketMap target = rebalanceTarget(*view.map, view.membership.nodes);
    if (chainsInPlace(*view.map, target) == target.chains.size()) {
        std::cerr << "kvexec-cluster: balanced already\n";
        return 0;
    }
    // Only if none is running, and only against the map it was computed from.
    const CasResult asked =
        etcd.putIfUnchanged(keys.rebalance(), encodeVBucketMap(target),
                            {{keys.rebalance(), 0}, {keys.map(), view.mapModRevision}});
    if (!asked.succeeded) {
        std::cerr << "kvexec-cluster: the map changed or another rebalance began; try again\n";
        return 1;
    }
    return watchRebalance(etcd, keys, target, json);
}

}  // namespace

int main(int argc, char** argv) {
    using namespace kvexec::cluster;
    ClusterToolOptions options;
    try {
        options = parseClusterToolArgs(std::vector<std::string>(argv + 1, argv + argc));
    } catch (const std::exception& error) {
        std::cerr << "kvexec-cluster: " << error.what() << "\n" << clusterToolUsage();
        return 2;
    }
    if (options.help) {
        std::cout << clusterToolUsage();
        return 0;
    }
    try {
        EtcdClient etcd(parseEtcdUrl(options.etcdUrl));
        const ClusterKeys keys(options.root);
        if (options.command == "failover") {
            return failOver(etcd, keys, options.node);
        }
        if (options.command == "rebalance") {
            return rebalance(etcd, keys, options.json);
        }
        const StatusReport report =
            statusReport(options.root, readClusterView(keys, etcd.getPrefix(keys.all())));
        std::cout << (options.json ? statusJson(report) + "\n" : statusText(report));
    } catch (const std::exception& error) {
        std::cerr << "kvexec-cluster: " << error.what() << "\n";
        return 1;
    }
    return 0;
}
