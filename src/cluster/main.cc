// kvexec-cluster: the operator's view of a kvexec cluster kept in etcd
// (see `kvexec-cluster --help` and cluster_tool.h): the cluster's status,
// a hard failover, a rebalance and its progress.
#include <algorithm>
#include <chrono>
#include <iostream>
#include <optional>
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

// Asks the elected node to rebalance towards `target` (only if no
// rebalance runs, and only against the map it was computed from), then
// watches it.
int askAndWatch(kvexec::cluster::EtcdClient& etcd, const kvexec::cluster::ClusterKeys& keys,
                const kvexec::cluster::ClusterView& view, const kvexec::cluster::VBucketMap& target,
                bool json) {
    using namespace kvexec::cluster;
    const CasResult asked =
        etcd.putIfUnchanged(keys.rebalance(), encodeVBucketMap(target),
                            {{keys.rebalance(), 0}, {keys.map(), view.mapModRevision}});
    if (!asked.succeeded) {
        std::cerr << "kvexec-cluster: the map changed or another rebalance began; try again\n";
        return 1;
    }
    return watchRebalance(etcd, keys, target, json);
}

// The view, if a rebalance may begin from it: a map over every mappable
// node and none running (then it follows that one instead).
std::optional<kvexec::cluster::ClusterView> readyView(kvexec::cluster::EtcdClient& etcd,
                                                      const kvexec::cluster::ClusterKeys& keys,
                                                      bool json, int& exitCode) {
    using namespace kvexec::cluster;
    ClusterView view = readClusterView(keys, etcd.getPrefix(keys.all()));
    if (view.rebalanceTarget) {
        std::cerr << "kvexec-cluster: a rebalance is running; following it\n";
        exitCode = watchRebalance(etcd, keys, *view.rebalanceTarget, json);
        return std::nullopt;
    }
    if (!view.map || view.map->nodes != mappableNodes(view)) {
        std::cerr << "kvexec-cluster: the map does not name every registered node yet (one "
                     "joined or left a moment ago); try again\n";
        exitCode = 1;
        return std::nullopt;
    }
    return view;
}

int rebalance(kvexec::cluster::EtcdClient& etcd, const kvexec::cluster::ClusterKeys& keys,
              bool json) {
    using namespace kvexec::cluster;
    int exitCode = 0;
    const auto view = readyView(etcd, keys, json, exitCode);
    if (!view) {
        return exitCode;
    }
    const VBucketMap target = rebalanceTarget(*view->map, view->map->nodes);
    if (chainsInPlace(*view->map, target) == target.chains.size()) {
        std::cerr << "kvexec-cluster: balanced already\n";
        return 0;
    }
    return askAndWatch(etcd, keys, *view, target, json);
}

// Marks `node` ejected once the map leaves it nothing, fenced on that map
// (a failover since could have given it slots again).
int eject(kvexec::cluster::EtcdClient& etcd, const kvexec::cluster::ClusterKeys& keys,
          const std::string& node) {
    using namespace kvexec::cluster;
    const ClusterView view = readClusterView(keys, etcd.getPrefix(keys.all()));
    const NodeVBuckets held = view.map ? vbucketsOf(*view.map, node) : NodeVBuckets{};
    if (!view.map || !held.active.empty() || !held.replica.empty() ||
        !etcd.putIfUnchanged(keys.ejected(node), "", {{keys.map(), view.mapModRevision}})
             .succeeded) {
        std::cerr << "kvexec-cluster: " << node << " was given vBuckets again (a node joined or "
                  << "failed); run remove again\n";
        return 1;
    }
    std::cerr << "kvexec-cluster: " << node << " holds nothing and leaves the map; it may be "
              << "stopped (kvexec-cluster add " << node << " lets it back)\n";
    return 0;
}

// Rebalances `node` out, then ejects it: the leader's next map no longer
// names it.
int remove(kvexec::cluster::EtcdClient& etcd, const kvexec::cluster::ClusterKeys& keys,
           const std::string& node, bool json) {
    using namespace kvexec::cluster;
    if (readClusterView(keys, etcd.getPrefix(keys.all())).rebalanceTarget) {
        std::cerr << "kvexec-cluster: a rebalance is running; remove " << node
                  << " once it is done\n";
        return 1;
    }
    int exitCode = 0;
    const auto view = readyView(etcd, keys, json, exitCode);
    if (!view) {
        return exitCode;
    }
    const auto& nodes = view->map->nodes;
    if (std::find(nodes.begin(), nodes.end(), node) == nodes.end() || nodes.size() == 1) {
        std::cerr << "kvexec-cluster: " << node
                  << " is not in the map, or is its only node: nothing to remove\n";
        return 1;
    }
    const VBucketMap target = removalTarget(*view->map, node);
    if (chainsInPlace(*view->map, target) != target.chains.size()) {
        exitCode = askAndWatch(etcd, keys, *view, target, json);
        if (exitCode != 0) {
            return exitCode;
        }
    }
    return eject(etcd, keys, node);
}

int add(kvexec::cluster::EtcdClient& etcd, const kvexec::cluster::ClusterKeys& keys,
        const std::string& node) {
    if (!etcd.del(keys.ejected(node))) {
        std::cerr << "kvexec-cluster: " << node << " was not removed: nothing to do\n";
        return 1;
    }
    std::cerr << "kvexec-cluster: " << node << " may join the map again; run rebalance to give "
              << "it vBuckets\n";
    return 0;
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
        EtcdClient etcd(parseEtcdUrl(options.etcdUrl, options.etcdCa));
        const ClusterKeys keys(options.root);
        if (options.command == "failover") {
            return failOver(etcd, keys, options.node);
        }
        if (options.command == "rebalance") {
            return rebalance(etcd, keys, options.json);
        }
        if (options.command == "remove") {
            return remove(etcd, keys, options.node, options.json);
        }
        if (options.command == "add") {
            return add(etcd, keys, options.node);
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
