// kvexec-cluster: the operator's view of a kvexec cluster kept in etcd
// (see `kvexec-cluster --help` and cluster_tool.h). One read of the
// cluster's keys, printed.
#include <iostream>

#include "cluster/cluster_tool.h"
#include "cluster/etcd_client.h"

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
        const StatusReport report =
            statusReport(options.root, readClusterView(keys, etcd.getPrefix(keys.all())));
        std::cout << (options.json ? statusJson(report) + "\n" : statusText(report));
    } catch (const std::exception& error) {
        std::cerr << "kvexec-cluster: " << error.what() << "\n";
        return 1;
    }
    return 0;
}
