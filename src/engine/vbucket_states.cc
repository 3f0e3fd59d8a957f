// vBucket states and topologies as a cluster map sets them, their
// failover logs, persisting both (vbucket_state_file.h), and the replicas'
// acknowledgements that feed each active's durability monitor.
#include <iostream>
#include <stdexcept>

#include "engine/ep_bucket.h"
#include "engine/stream.h"

namespace kvexec::engine {

Status BucketImpl::setVBucketState(Vbid vbid, VBucketState state, Topology topology) {
    return setVBucketStates({VBucketStateChange{vbid, state, std::move(topology)}});
}

Status BucketImpl::setVBucketStates(const std::vector<VBucketStateChange>& requested) {
    if (warmupState_.load(std::memory_order_acquire) != WarmupState::Complete) {
        return Status::TempFail;
    }
    std::vector<VBucketStateChange> changes = requested;
    for (auto& change : changes) {
        if (change.vbid >= vbuckets_.size()) {
            return Status::NotMyVbucket;
        }
        if (change.topology.chain.empty()) {
            change.topology.chain.push_back(config_.nodeName);
        }
        if (change.state == VBucketState::Active &&
            !DurabilityMonitor::validTopology(change.topology, config_.nodeName)) {
            return Status::Invalid;
        }
    }
    for (const auto& change : changes) {
        auto& vb = vbucket(change.vbid);
        std::vector<FinishedSyncWrite> aborted;
        bool queued = false;
        {
            kvexec::detail::MutexLock lock(vb.mutex);
            queued = changeStateLocked(vb, change, aborted);
        }
        if (!aborted.empty() || queued) {
            finish(aborted);
            notifyFlusher(vb);
        }
    }
    try {
        persistVBucketStates(false);
    } catch (const std::exception& error) {
        std::cerr << "kvexec engine: saving the vBucket states failed: " << error.what() << '\n';
        return Status::Internal;
    }
    return Status::Success;
}

bool BucketImpl::changeStateLocked(VBucket& vb, const VBucketStateChange& change,
                                   std::vector<FinishedSyncWrite>& aborted) {
    bool unblocked = false;
    if (change.state == VBucketState::Active) {
        if (vb.state != VBucketState::Active) {
            // Inside a disk snapshot the copy is whole only at its base: a
            // replica that holds more of the old history than that may
            // hold versions this copy lacks, and must roll back to it.
            vb.failover.branch(newVBucketUuid(), vb.wholeSeqnoLocked());
            // What it holds is its history now; the flusher may save it.
            unblocked = vb.diskSnapshot.has_value() && !vb.dirty.empty();
            vb.diskSnapshot.reset();
            // Positions and acknowledgements from an earlier term (before a
            // rollback, say) say nothing about this one.
            vb.durability = DurabilityMonitor(config_.nodeName);
            adoptReplicaPreparesLocked(vb);
        }
        vb.durability.setTopology(change.topology);  // checked by the caller
        localProgressLocked(vb);                     // the new chain may already hold some
        if (change.handingOver && !vb.handingOver) {
            // No new client write after this but the aborts: the next active
            // catches up with a high seqno that no longer moves. Inherited
            // prepares stay: they may have been acknowledged in an earlier
            // term, and the next active adopts them from its stream.
            abortClientWritesLocked(vb, Status::SyncWriteAmbiguous, aborted);
        }
    } else if (vb.state == VBucketState::Active) {
        endReplicationStreamsLocked(vb);
        // No other node has these prepares to commit: end them here.
        abortAllLocked(vb, Status::SyncWriteAmbiguous, aborted);
        vb.locks.clear();
    }
    vb.state = change.state;
    vb.handingOver = change.state == VBucketState::Active && change.handingOver;
    armTimeoutLocked(vb);
    return deleteDroppedCollectionsLocked(vb, aborted) || unblocked;
}

// They stay listed (the bucket's destructor closes what is listed) but
// take nothing more; each leaves the list as it closes. Observers' streams
// follow this copy on.
void BucketImpl::endReplicationStreamsLocked(VBucket& vb) {
    for (const auto& stream : vb.streams) {
        if (stream->replication()) {
            stream->endLocked(vb.highSeqno);
        }
    }
}

// A replica promoted to active inherits the prepares its old active had
// not ended: they may have been acknowledged by a majority, so they wait,
// with no client and no deadline, for the new chain to hold them (and
// commit then), as Couchbase's promoted replicas do.
void BucketImpl::adoptReplicaPreparesLocked(VBucket& vb) {
    const auto now = steadyNow();
    for (auto& [seqno, prepare] : vb.replicaPrepares) {
        accountMemory(
            static_cast<std::int64_t>(footprint(prepare.key.size(), prepare.value.value.size())));
        vb.pendingByKey[prepare.key] = seqno;
        vb.durability.addPrepare(seqno, prepare.level, Clock::time_point::max());
        vb.syncWrites.emplace(seqno, SyncWrite{prepare.key,
                                               std::move(prepare.value),
                                               prepare.level,
                                               now,
                                               Clock::time_point::max(),
                                               false,
                                               {},
                                               /*inherited=*/true});
    }
    vb.replicaPrepares.clear();
    vb.reportedHighPrepared = 0;
}

std::optional<FailoverLog> BucketImpl::failoverLog(Vbid vbid) const {
    if (vbid >= vbuckets_.size()) {
        return std::nullopt;
    }
    auto& vb = vbucket(vbid);
    kvexec::detail::MutexLock lock(vb.mutex);
    return vb.failover;
}

std::uint64_t BucketImpl::newVBucketUuid() {
    kvexec::detail::MutexLock lock(uuidMutex_);
    std::uint64_t uuid = 0;
    while (uuid == 0) {
        uuid = uuidSource_();
    }
    return uuid;
}

void BucketImpl::persistVBucketStates(bool cleanShutdown) {
    kvexec::detail::MutexLock fileLock(vbucketStateFileMutex_);
    PersistedVBuckets states;
    states.cleanShutdown = cleanShutdown;
    for (const auto& vbPtr : vbuckets_) {
        kvexec::detail::MutexLock lock(vbPtr->mutex);
        states.vbuckets.push_back(PersistedVBucket{vbPtr->state, vbPtr->durability.topology(),
                                                   vbPtr->failover, vbPtr->purgeSeqno});
    }
    saveVBucketStates(config_.dataDir, states);
    for (std::size_t i = 0; i < vbuckets_.size(); ++i) {
        kvexec::detail::MutexLock lock(vbuckets_[i]->mutex);
        vbuckets_[i]->savedPurgeSeqno = states.vbuckets[i].purgeSeqno;
    }
}

void BucketImpl::persistVBucketStatesSoon() {
    if (shuttingDown_.load()) {
        return;  // the destructor's last write takes this change
    }
    if (vbucketStatesWriteScheduled_.exchange(true)) {
        return;  // the scheduled write has not started: it takes this change too
    }
    auto body = [this](LambdaTask&) {
        vbucketStatesWriteScheduled_.store(false);
        try {
            persistVBucketStates(false);
        } catch (const std::exception& error) {
            std::cerr << "kvexec engine: the vBucket states were not persisted: " << error.what()
                      << '\n';
        }
        return false;
    };
    try {
        pool_.schedule(std::make_shared<LambdaTask>(*this, TaskType::Writer, "PersistVBucketStates",
                                                    std::move(body)));
    } catch (const std::logic_error&) {
        vbucketStatesWriteScheduled_.store(false);  // unregistering: as above
    }
}

void BucketImpl::restoreVBucketStateLocked(VBucket& vb) {
    restorePersistedStateLocked(vb);
    if (config_.awaitAssignment) {
        vb.state = VBucketState::Dead;
    }
}

void BucketImpl::restorePersistedStateLocked(VBucket& vb) {
    if (!persistedVBuckets_) {
        return;  // a new bucket: active, [nodeName], the branch it was made with
    }
    const auto& persisted = persistedVBuckets_->vbuckets[vb.id];
    vb.state = persisted.state;
    vb.failover = persisted.failover;
    vb.purgeSeqno = vb.savedPurgeSeqno = persisted.purgeSeqno;
    if (vb.durability.setTopology(persisted.topology) != Status::Success &&
        vb.state == VBucketState::Active) {
        throw std::runtime_error("vb:" + std::to_string(vb.id) +
                                 " was active with a chain this node (" + config_.nodeName +
                                 ") does not lead");
    }
    if (!persistedVBuckets_->cleanShutdown && vb.state == VBucketState::Active) {
        // What followed the persisted seqno may differ from what others saw.
        // (A replica's history is its active's: it asks to resume from its
        // persisted seqno on that history.)
        vb.failover.branch(newVBucketUuid(), vb.persistedSeqno);
    }
}

std::optional<VBucketAssignment> BucketImpl::vbucketAssignment(Vbid vbid) const {
    if (vbid >= vbuckets_.size()) {
        return std::nullopt;
    }
    auto& vb = vbucket(vbid);
    kvexec::detail::MutexLock lock(vb.mutex);
    return VBucketAssignment{vb.state, vb.durability.topology(), vb.handingOver};
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
