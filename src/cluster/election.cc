#include "cluster/election.h"

namespace kvexec::cluster {

ClusterMember::ClusterMember(EtcdClient& etcd, ClusterKeys keys, std::string name,
                             std::int64_t leaseId)
    : etcd_(etcd), keys_(std::move(keys)), name_(std::move(name)), leaseId_(leaseId) {}

void ClusterMember::registerNode(std::string_view address) {
    etcd_.put(keys_.node(name_), address, leaseId_);
}

bool ClusterMember::campaign() {
    const CasResult result =
        etcd_.putIf(keys_.leader(), name_, /*expectedModRevision=*/0, leaseId_);
    if (result.succeeded) {
        return true;
    }
    // Lost the CAS: still ours if this node won an earlier campaign with
    // this lease (a retry after a lost reply).
    return result.current && result.current->value == name_ && result.current->lease == leaseId_;
}

Membership ClusterMember::membership() {
    return readMembership(keys_, etcd_.getPrefix(keys_.all()));
}

}  // namespace kvexec::cluster
