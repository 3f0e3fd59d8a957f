// kvexec-cluster: the operator's view of a kvexec cluster kept in etcd
// (see `kvexec-cluster --help` and cluster_tool.h). One read of the
// cluster's keys, printed.
#include <iostream>

#include "cluster/cluster_tool.h"
#include "cluster/etcd_client.h"

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
        const StatusReport report =
            statusReport(options.root, readClusterView(keys, etcd.getPrefix(keys.all())));
        std::cout << (options.json ? statusJson(report) + "\n" : statusText(report));
    } catch (const std::exception& error) {
        std::cerr << "kvexec-cluster: " << error.what() << "\n";
        return 1;
    }
    return 0;
}
