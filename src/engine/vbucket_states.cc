// vBucket states and topologies as a cluster map sets them, and the
// replicas' acknowledgements that feed each active's durability monitor.
#include "engine/ep_bucket.h"

namespace kvexec::engine {

Status BucketImpl::setVBucketState(Vbid vbid, VBucketState state, Topology topology) {
    if (vbid >= vbuckets_.size()) {
        return Status::NotMyVbucket;
    }
    if (topology.chain.empty()) {
        topology.chain.push_back(config_.nodeName);
    }
    auto& vb = vbucket(vbid);
    std::vector<FinishedSyncWrite> aborted;
    {
        kvexec::detail::MutexLock lock(vb.mutex);
        if (state == VBucketState::Active) {
            if (const Status s = vb.durability.setTopology(std::move(topology));
                s != Status::Success) {
                return s;
            }
            std::vector<FinishedSyncWrite> none;
            applyDecisionsLocked(vb, none);  // the new chain may already hold some
        } else if (vb.state == VBucketState::Active) {
            // No other node has these prepares to commit: end them here.
            abortAllLocked(vb, Status::SyncWriteAmbiguous, aborted);
            vb.locks.clear();
        }
        vb.state = state;
        armTimeoutLocked(vb);
    }
    if (!aborted.empty()) {
        finish(aborted);
        notifyFlusher(vb);
    }
    return Status::Success;
}

std::optional<VBucketAssignment> BucketImpl::vbucketAssignment(Vbid vbid) const {
    if (vbid >= vbuckets_.size()) {
        return std::nullopt;
    }
    auto& vb = vbucket(vbid);
    kvexec::detail::MutexLock lock(vb.mutex);
    return VBucketAssignment{vb.state, vb.durability.topology()};
}

Status BucketImpl::seqnoAcknowledged(Vbid vbid, const std::string& node, Seqno preparedSeqno) {
    if (vbid >= vbuckets_.size()) {
        return Status::NotMyVbucket;
    }
    auto& vb = vbucket(vbid);
    kvexec::detail::MutexLock lock(vb.mutex);
    if (vb.state != VBucketState::Active) {
        return Status::NotMyVbucket;
    }
    if (!vb.durability.acknowledge(node, preparedSeqno)) {
        return Status::Invalid;
    }
    std::vector<FinishedSyncWrite> none;
    applyDecisionsLocked(vb, none);
    return Status::Success;
}

}  // namespace kvexec::engine
