// A replica vBucket applying its active's replication stream
// (Bucket::applyReplicated): changes keep the active's seqnos and CAS,
// prepares wait for their commit or abort, and the replica's high
// prepared seqno is reported as it moves (after applying, and after the
// flusher persisted a PersistToMajority prepare).
#include <iostream>

#include "engine/ep_bucket.h"

namespace kvexec::engine {
namespace {

bool isReplicaState(VBucketState state) {
    return state == VBucketState::Replica || state == VBucketState::Pending;
}

}  // namespace

Status BucketImpl::applyReplicated(Vbid vbid, const StreamEvent& event) {
    if (vbid >= vbuckets_.size()) {
        return Status::NotMyVbucket;
    }
    if (warmupState_.load(std::memory_order_acquire) != WarmupState::Complete) {
        return Status::TempFail;
    }
    auto& vb = vbucket(vbid);
    std::optional<Seqno> moved;
    Status status = Status::Success;
    bool flushable = false;
    {
        kvexec::detail::MutexLock lock(vb.mutex);
        if (!isReplicaState(vb.state)) {
            return Status::NotMyVbucket;
        }
        const Seqno wholeBefore = vb.wholeSeqnoLocked();
        status = applyReplicatedLocked(vb, event);
        if (status == Status::Success) {
            if (vb.diskSnapshot && vb.highSeqno >= vb.diskSnapshot->end) {
                vb.diskSnapshot.reset();
            }
            moved = replicaProgressLocked(vb);
            flushable = vb.wholeSeqnoLocked() > wholeBefore;
        }
    }
    if (flushable) {
        notifyFlusher(vb, FlushUrgency::Now);
    }
    reportReplicaProgress(vbid, moved);
    return status;
}

Status BucketImpl::applyReplicatedLocked(VBucket& vb, const StreamEvent& event) {
    if (event.kind == StreamEventKind::Snapshot) {
        beginReplicaSnapshotLocked(vb, event);
        return Status::Success;
    }
    const Seqno seqno = event.item.meta.seqno;
    if (seqno <= vb.highSeqno) {
        return Status::Invalid;  // out of order, or applied already
    }
    const std::string key = encodeCollectionKey(event.item.collection, event.item.key);
    StoredValue value{event.item.value, event.item.meta};
    switch (event.kind) {
        case StreamEventKind::Mutation:
        case StreamEventKind::Deletion:
        case StreamEventKind::Expiration:
        case StreamEventKind::Commit: {
            // A commit writes its prepare's value (DCP's COMMIT carries
            // none): a replica that does not hold the prepare has missed
            // part of the stream.
            if (event.kind == StreamEventKind::Commit) {
                const auto prepare = vb.replicaPrepares.find(event.preparedSeqno);
                if (prepare == vb.replicaPrepares.end() || prepare->second.key != key) {
                    return Status::Invalid;
                }
                value.value = prepare->second.value.value;
                value.meta = prepare->second.value.meta;
                value.meta.seqno = seqno;
            }
            // An expiration is the deletion it is, kept as its expiry's so
            // that this copy streams it on as one (if promoted, say).
            value.deletedByExpiry = event.kind == StreamEventKind::Expiration;
            value.meta.deleted = event.kind == StreamEventKind::Deletion || value.deletedByExpiry ||
                                 value.meta.deleted;
            endReplicaPreparesLocked(vb, key);
            accountMemory(static_cast<std::int64_t>(vb.queueReplicatedLocked(
                key, value, event.kind == StreamEventKind::Commit ? event.preparedSeqno : 0,
                DurabilityLevel::None)));
            accountMemory(vb.setCommittedLocked(key, std::move(value)));
            return Status::Success;
        }
        case StreamEventKind::Prepare: {
            if (event.level == DurabilityLevel::None ||
                event.level > DurabilityLevel::PersistToMajority) {
                return Status::Invalid;
            }
            endReplicaPreparesLocked(vb, key);
            accountMemory(static_cast<std::int64_t>(
                vb.queueReplicatedLocked(prepareKeyOf(key), value, 0, event.level)));
            vb.replicaPrepares.emplace(seqno, ReplicaPrepare{key, std::move(value), event.level});
            return Status::Success;
        }
        case StreamEventKind::Abort: {
            endReplicaPreparesLocked(vb, key);
            StoredValue tombstone = abortTombstone(event.preparedSeqno);
            tombstone.meta.cas = event.item.meta.cas;
            tombstone.meta.seqno = seqno;
            accountMemory(static_cast<std::int64_t>(vb.queueReplicatedLocked(
                prepareKeyOf(key), tombstone, event.preparedSeqno, DurabilityLevel::None)));
            return Status::Success;
        }
        case StreamEventKind::Snapshot:
        case StreamEventKind::BackfillFailed:  // the active's own news, not a change
        case StreamEventKind::StateChanged:
            break;
    }
    return Status::Invalid;
}

// A memory snapshot holds every change in order: any prefix of it is a
// state of the active's history. A disk snapshot is whole only at its end
// (applyReplicated clears it once the high seqno reaches the end). A
// snapshot that follows an unfinished one (the stream was asked for again
// from inside it, maybe of another active, which may hold the versions the
// first one left out as older seqnos) is whole no earlier than the first
// one's end, nor from before the first one's base. A disk snapshot may lack
// tombstones its active purged: the replica takes that purge seqno, so
// that promoted it rolls back a consumer that would miss them.
void BucketImpl::beginReplicaSnapshotLocked(VBucket& vb, const StreamEvent& marker) {
    if (!marker.fromDisk) {
        return;
    }
    vb.purgeSeqno = std::max(vb.purgeSeqno, marker.purgeSeqno);
    if (vb.diskSnapshot) {
        vb.diskSnapshot->end = std::max(vb.diskSnapshot->end, marker.snapEnd);
    } else if (marker.snapEnd > vb.highSeqno) {
        vb.diskSnapshot = VBucket::DiskSnapshot{vb.highSeqno, marker.snapEnd};
    }
}

// A key has at most one prepare in flight: whatever comes next for it
// (its commit, its abort, a later change) ends the one before.
void BucketImpl::endReplicaPreparesLocked(VBucket& vb, const std::string& key) {
    std::erase_if(vb.replicaPrepares, [&](const auto& entry) { return entry.second.key == key; });
}

std::optional<Seqno> BucketImpl::replicaProgressLocked(VBucket& vb) {
    if (!isReplicaState(vb.state)) {
        return std::nullopt;
    }
    const Seqno high = vb.replicaHighPreparedLocked();
    if (high <= vb.reportedHighPrepared) {
        return std::nullopt;
    }
    vb.reportedHighPrepared = high;
    return high;
}

void BucketImpl::reportReplicaProgress(Vbid vbid, std::optional<Seqno> moved) {
    if (moved && config_.onReplicaPrepared) {
        config_.onReplicaPrepared(vbid, *moved);
    }
}

Status BucketImpl::adoptFailoverLog(Vbid vbid, const FailoverLog& log) {
    if (vbid >= vbuckets_.size()) {
        return Status::NotMyVbucket;
    }
    if (warmupState_.load(std::memory_order_acquire) != WarmupState::Complete) {
        return Status::TempFail;
    }
    {
        auto& vb = vbucket(vbid);
        kvexec::detail::MutexLock lock(vb.mutex);
        if (!isReplicaState(vb.state)) {
            return Status::NotMyVbucket;
        }
        if (vb.failover == log) {
            return Status::Success;
        }
        vb.failover = log;
    }
    // Not waited for: one write per stream would make opening a node's
    // hundreds of streams take seconds. Lost in a crash, the adopted log
    // costs a rollback, never a wrong resume (docs/replication.md).
    persistVBucketStatesSoon();
    return Status::Success;
}

Status BucketImpl::rollbackReplica(Vbid vbid, Seqno to, StatusCallback done) {
    if (vbid >= vbuckets_.size()) {
        return Status::NotMyVbucket;
    }
    // A flusher saves nothing before warmup completes, and what warmup
    // then nudges is what is dirty: a rollback asked for earlier would wait
    // for an unrelated change.
    if (warmupState_.load(std::memory_order_acquire) != WarmupState::Complete) {
        return Status::TempFail;
    }
    auto& vb = vbucket(vbid);
    StatusCallback replaced;
    {
        kvexec::detail::MutexLock lock(vb.mutex);
        if (!isReplicaState(vb.state)) {
            return Status::NotMyVbucket;
        }
        if (vb.pendingRollback) {
            replaced = std::move(vb.pendingRollback->done);
        }
        vb.pendingRollback = VBucket::PendingRollback{to, std::move(done)};
    }
    if (replaced) {
        replaced(Status::TempFail);
    }
    notifyFlusher(vb);
    return Status::Success;
}

// Under the vBucket's lock from the state check to the reload: a
// promotion cannot come between the file's rollback and the memory's,
// and nothing streams into a replica while it waits for this. The lock is
// held across the store's I/O, as warmup holds it; only this replica
// vBucket's readers wait.
bool BucketImpl::finishPendingRollback(VBucket& vb) {
    StatusCallback done;
    Status status = Status::Success;
    {
        kvexec::detail::MutexLock lock(vb.mutex);
        if (!vb.pendingRollback) {
            return true;
        }
        if (isReplicaState(vb.state)) {
            try {
                store_->rollback(vb.id, vb.pendingRollback->to);
                forgetContentsLocked(vb);
                loadVBucketLocked(vb);
                trackWarmedUpPreparesLocked(vb);
            } catch (const std::exception& error) {
                flushFailures_.fetch_add(1, std::memory_order_relaxed);
                std::cerr << "kvexec engine: rollback of vb:" << vb.id
                          << " failed: " << error.what() << '\n';
                return false;
            }
        } else {
            status = Status::NotMyVbucket;
        }
        done = std::move(vb.pendingRollback->done);
        vb.pendingRollback.reset();
    }
    if (done) {
        done(status);
    }
    return true;
}

void BucketImpl::forgetContentsLocked(VBucket& vb) {
    std::vector<std::string> keys;
    keys.reserve(vb.committed.size());
    for (const auto& [key, value] : vb.committed) {
        keys.emplace_back(key);
    }
    for (const auto& key : keys) {
        accountMemory(vb.eraseCommittedLocked(key));
    }
    for (const auto& item : vb.dirty) {
        accountMemory(
            -static_cast<std::int64_t>(footprint(item.doc.key.size(), item.doc.value.size())));
    }
    vb.dirty.clear();
    vb.replicaPrepares.clear();
    vb.locks.clear();
    vb.highSeqno = vb.persistedSeqno = vb.reportedHighPrepared = 0;
    vb.diskSnapshot.reset();
    vb.durability = DurabilityMonitor(config_.nodeName);
}

Seqno BucketImpl::replicaHighPrepared(Vbid vbid) const {
    if (vbid >= vbuckets_.size()) {
        return 0;
    }
    auto& vb = vbucket(vbid);
    kvexec::detail::MutexLock lock(vb.mutex);
    return vb.replicaHighPreparedLocked();
}

std::optional<StreamStart> BucketImpl::replicaResumePoint(Vbid vbid) const {
    if (vbid >= vbuckets_.size()) {
        return std::nullopt;
    }
    auto& vb = vbucket(vbid);
    kvexec::detail::MutexLock lock(vb.mutex);
    if (!isReplicaState(vb.state)) {
        return std::nullopt;
    }
    StreamStart point;
    point.start = vb.highSeqno;
    point.snapStart = vb.wholeSeqnoLocked();
    point.snapEnd = vb.diskSnapshot ? vb.diskSnapshot->end : vb.highSeqno;  // end > highSeqno
    // A replica that never streamed has only its own branch: from 0 it
    // asks with no history at all.
    point.uuid = point.start == 0 ? 0 : vb.failover.uuid();
    return point;
}

}  // namespace kvexec::engine
