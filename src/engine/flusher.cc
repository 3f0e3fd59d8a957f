// Per-shard flushers. A vBucket that gets a dirty item is pushed onto its
// shard's ready queue (once: VBucket::inReadyQueue), and the flusher is
// nudged at most once per drain (Shard::nudge): a durable write wakes it at
// once, the first other mutation snoozes it for flushBatchDelay so that the
// mutations of that window share one save (waking a writer thread per
// mutation cost more CPU than the mutation). The flusher snoozes itself
// before it clears the nudge and drains, so a nudge that lands during the
// drain makes it run again instead of being lost (MB-36380).
#include <iostream>
#include <iterator>
#include <string_view>
#include <unordered_map>

#include "engine/ep_bucket.h"

namespace kvexec::engine {
namespace {

// After a failed automatic compaction (a full or failing disk), the
// vBucket's next one waits this long rather than start at every save.
constexpr std::chrono::seconds kCompactionRetryAfterFailure{10};

// Items per saveDocs; the rest of a long dirty queue goes in the next one,
// so one vBucket does not hold the lock (copying) or the flusher for long.
constexpr std::size_t kMaxBatchItems = 10'000;

// The batch with one version per key (the latest), in seqno order. The
// map views the items' keys, so nothing is moved out of them until every
// lookup is done (a moved-from key can read as another key: a collection's
// "\x08k" becomes "\0k", the default collection's).
std::vector<storage::Document> deduplicated(std::vector<storage::Document> items) {
    std::vector<bool> keep(items.size(), false);
    {
        std::unordered_map<std::string_view, std::size_t> latest;
        for (std::size_t i = 0; i < items.size(); ++i) {
            latest[items[i].key] = i;  // items are in seqno order: later wins
        }
        for (const auto& entry : latest) {
            keep[entry.second] = true;
        }
    }
    std::vector<storage::Document> out;
    for (std::size_t i = 0; i < items.size(); ++i) {
        if (keep[i]) {
            out.push_back(std::move(items[i]));
        }
    }
    return out;
}

}  // namespace

void BucketImpl::notifyFlusher(VBucket& vb, FlushUrgency urgency) {
    const bool queued = vb.inReadyQueue.exchange(true, std::memory_order_acq_rel);
    const bool batched = urgency == FlushUrgency::Batched && config_.flushBatchDelay.count() > 0;
    if (queued && batched) {
        return;  // the flusher is already nudged for this vBucket
    }
    auto& shard = shardOf(vb.id);
    const FlusherNudge wanted = batched ? FlusherNudge::Deferred : FlusherNudge::Woken;
    bool send = false;
    {
        kvexec::detail::MutexLock lock(shard.mutex);
        if (!queued) {
            shard.ready.push_back(vb.id);
        }
        send = shard.nudge < wanted;
        if (send) {
            shard.nudge = wanted;
        }
    }
    if (!send) {
        return;
    }
    if (batched) {
        pool_.snooze(shard.flusher, config_.flushBatchDelay);
    } else {
        pool_.wake(shard.flusher);
    }
}

bool BucketImpl::runFlusher(std::size_t shardIndex) {
    auto& shard = *shards_[shardIndex];
    const bool shutdown = shuttingDown_.load();
    if (!shutdown) {
        pool_.snooze(shard.flusher, kForever);  // before draining: see the file comment
    }
    std::size_t todo = 0;
    {
        kvexec::detail::MutexLock lock(shard.mutex);
        shard.nudge = FlusherNudge::None;  // after the snooze: see the file comment
        todo = shard.ready.size();
    }
    std::vector<Vbid> failed;
    for (std::size_t i = 0; i < todo; ++i) {
        Vbid v = 0;
        {
            kvexec::detail::MutexLock lock(shard.mutex);
            v = shard.ready.front();
            shard.ready.pop_front();
        }
        auto& vb = vbucket(v);
        // Cleared before the dirty queue is read: a mutation after this
        // point pushes the vBucket again.
        vb.inReadyQueue.store(false, std::memory_order_seq_cst);
        if (!flushVBucket(vb)) {
            failed.push_back(v);
        }
    }
    if (shutdown) {
        kvexec::detail::MutexLock lock(shard.mutex);
        return failed.empty() && !shard.ready.empty();  // best effort: no retries
    }
    bool more = false;
    {
        // Failed vBuckets go back without a wake: they are retried after
        // flushRetryDelay, not in a busy loop.
        kvexec::detail::MutexLock lock(shard.mutex);
        for (const Vbid v : failed) {
            if (!vbucket(v).inReadyQueue.exchange(true, std::memory_order_acq_rel)) {
                shard.ready.push_back(v);
            }
        }
        more = !shard.ready.empty();
    }
    if (!failed.empty()) {
        pool_.snooze(shard.flusher, config_.flushRetryDelay);
    } else if (more) {
        pool_.snooze(shard.flusher, Clock::duration::zero());
    }
    return true;
}

// Writes vbuckets.json for a purge seqno a disk snapshot raised, before any
// of the snapshot's items reach the file. False if it could not be written.
bool BucketImpl::savePurgeSeqno(VBucket& vb) {
    try {
        persistVBucketStates(false);
    } catch (const std::exception& error) {
        flushFailures_.fetch_add(1, std::memory_order_relaxed);
        std::cerr << "kvexec engine: saving vb:" << vb.id
                  << "'s purge seqno failed: " << error.what() << '\n';
        return false;
    }
    return true;
}

// The front of the dirty queue, up to kMaxBatchItems. A replica's file
// holds only whole states of its active's history (a restart resumes from
// it): nothing past an unfinished disk snapshot's base.
void BucketImpl::takeBatchLocked(VBucket& vb, std::vector<storage::Document>& items) {
    const Seqno limit = vb.wholeSeqnoLocked();
    for (const auto& item : vb.dirty) {
        if (items.size() == kMaxBatchItems || item.doc.seqno > limit) {
            break;
        }
        items.push_back(item.doc);
    }
}

// Saves the vBucket's dirty queue (up to kMaxBatchItems). On success the
// batch leaves the queue and the persisted seqno advances in one critical
// section, and the SyncWrites it covers are resolved. On failure nothing
// leaves the queue (the next attempt saves it again) and the unresolved
// SyncWrites of the batch are aborted with Status::Internal: nothing is
// acknowledged that is not on disk. Returns false on failure.
bool BucketImpl::flushVBucket(VBucket& vb) {
    if (warmupState_.load(std::memory_order_acquire) != WarmupState::Complete) {
        return true;
    }
    if (!finishPendingRollback(vb)) {
        return false;
    }
    std::vector<storage::Document> items;
    for (;;) {
        bool purgeUnsaved = false;
        {
            // Checked where the batch is taken: a marker that raises the
            // purge seqno cannot come between the check and the batch.
            kvexec::detail::MutexLock lock(vb.mutex);
            purgeUnsaved = vb.purgeSeqno > vb.savedPurgeSeqno;
            if (!purgeUnsaved) {
                takeBatchLocked(vb, items);
            }
        }
        if (!purgeUnsaved) {
            break;
        }
        if (!savePurgeSeqno(vb)) {
            return false;
        }
    }
    if (items.empty()) {
        return true;
    }
    const Seqno batchHigh = items.back().seqno;
    const auto batch = deduplicated(std::move(items));
    try {
        if (batch.empty()) {
            return true;
        }
        if (!store_->exists(vb.id)) {
            store_->createVBucket(vb.id);
        }
        const auto start = Clock::now();
        store_->saveDocs(vb.id, batch);
        diskCommit_.record(Clock::now() - start);
    } catch (const std::exception& error) {
        flushFailures_.fetch_add(1, std::memory_order_relaxed);
        std::cerr << "kvexec engine: flush of vb:" << vb.id << " failed: " << error.what() << '\n';
        std::vector<FinishedSyncWrite> failed;
        {
            kvexec::detail::MutexLock lock(vb.mutex);
            std::vector<Seqno> inBatch;
            for (const auto& [seqno, write] : vb.syncWrites) {
                if (seqno <= batchHigh && !write.resolved) {
                    inBatch.push_back(seqno);
                }
            }
            for (const Seqno seqno : inBatch) {
                failed.push_back(abortLocked(vb, seqno, Status::Internal));
            }
        }
        if (!failed.empty()) {
            {
                kvexec::detail::MutexLock lock(completionMutex_);
                std::move(failed.begin(), failed.end(), std::back_inserter(failedWrites_));
            }
            wakeCompletion();
        }
        return false;
    }
    batchSize_.record(static_cast<std::uint64_t>(batch.size()));
    flusherBatches_.fetch_add(1, std::memory_order_relaxed);
    bool moreDirty = false;
    std::optional<Seqno> replicaMoved;
    std::vector<PersistenceWaiter> persisted;
    {
        // A rollback asked for while saving is done by the next flush,
        // which cuts this batch off the file again: the batch still counts
        // as saved until then.
        kvexec::detail::MutexLock lock(vb.mutex);
        const auto now = Clock::now();
        while (!vb.dirty.empty() && vb.dirty.front().doc.seqno <= batchHigh) {
            const auto& item = vb.dirty.front();
            storageAge_.record(now - item.queued);
            accountMemory(
                -static_cast<std::int64_t>(footprint(item.doc.key.size(), item.doc.value.size())));
            vb.dirty.pop_front();
        }
        vb.persistedSeqno = batchHigh;
        persisted = vb.takePersistedWaitersLocked();
        localProgressLocked(vb);
        replicaMoved = replicaProgressLocked(vb);
        moreDirty = !vb.dirty.empty();
    }
    reportReplicaProgress(vb.id, replicaMoved);
    for (auto& waiter : persisted) {
        waiter.done(true);
    }
    if (moreDirty) {
        notifyFlusher(vb);
    }
    maybeCompact(vb);
    return true;
}

}  // namespace kvexec::engine

namespace kvexec::engine {

// Compaction rewrites the file under the store's vBucket write lock only
// at its switch; it runs on AuxIO so that flushers (Writer) never wait
// behind a whole-file copy.
void BucketImpl::compact(Vbid vbid, StatusCallback done) {
    if (vbid >= vbuckets_.size()) {
        done(Status::NotMyVbucket);
        return;
    }
    scheduleCompaction(vbid, true, std::move(done));
}

// On the flusher, after a save: two numbers the store keeps, no I/O.
void BucketImpl::maybeCompact(VBucket& vb) {
    const std::uint64_t percent = config_.compactionFragmentationPercent;
    if (percent == 0 || vb.autoCompacting.load(std::memory_order_relaxed) ||
        steadyNow().time_since_epoch().count() <
            vb.autoCompactionNotBefore.load(std::memory_order_relaxed)) {
        return;
    }
    std::uint64_t size = 0, live = 0;
    try {
        size = store_->fileSize(vb.id);
        live = store_->liveBytes(vb.id);
    } catch (const std::exception&) {
        return;  // deleted meanwhile: nothing to compact
    }
    if (size < config_.compactionMinFileBytes ||
        (size - std::min(size, live)) * 100 < percent * size) {
        return;
    }
    if (vb.autoCompacting.exchange(true, std::memory_order_acq_rel)) {
        return;
    }
    scheduleCompaction(vb.id, false, [this, &vb](Status status) {
        if (status == Status::Internal) {
            // A disk that is full or failing: not again at every save.
            vb.autoCompactionNotBefore.store(
                (steadyNow() + kCompactionRetryAfterFailure).time_since_epoch().count(),
                std::memory_order_relaxed);
        }
        vb.autoCompacting.store(false, std::memory_order_release);
    });
}

void BucketImpl::scheduleCompaction(Vbid vbid, bool purgeTombstones, StatusCallback done) {
    if (warmupState_.load(std::memory_order_acquire) != WarmupState::Complete ||
        shuttingDown_.load()) {
        done(Status::TempFail);
        return;
    }
    auto body = [this, vbid, purgeTombstones, done](LambdaTask&) {
        Seqno purgeBefore = 0;
        bool purgeMoved = false;
        if (purgeTombstones) {
            auto& vb = vbucket(vbid);
            kvexec::detail::MutexLock lock(vb.mutex);
            purgeBefore = vb.persistedSeqno;
            purgeMoved = purgeBefore > vb.purgeSeqno;
            vb.purgeSeqno = std::max(vb.purgeSeqno, purgeBefore);
        }
        Status status = Status::Success;
        try {
            if (purgeMoved && !shuttingDown_.load()) {
                // On disk before any tombstone is gone: a crash after the
                // purge must not forget it (a larger one only costs rollbacks).
                persistVBucketStates(false);
            }
            if (store_->exists(vbid)) {
                countCompaction(store_->compact(vbid, purgeBefore), !purgeTombstones);
            }
        } catch (const std::exception& error) {
            std::cerr << "kvexec engine: compaction of vb:" << vbid << " failed: " << error.what()
                      << '\n';
            status = Status::Internal;
        }
        done(status);
        return false;
    };
    try {
        pool_.schedule(std::make_shared<LambdaTask>(
            *this, TaskType::AuxIO, "Compaction vb:" + std::to_string(vbid), std::move(body)));
    } catch (const std::logic_error&) {
        // The bucket began to shut down after the check above: the pool
        // takes no more of its tasks (a flusher must not die of it).
        done(Status::TempFail);
    }
}

void BucketImpl::countCompaction(const storage::CompactionResult& result, bool automatic) {
    if (result.aborted) {
        return;
    }
    compactions_.fetch_add(1, std::memory_order_relaxed);
    if (automatic) {
        autoCompactions_.fetch_add(1, std::memory_order_relaxed);
    }
    if (result.bytesBefore > result.bytesAfter) {
        compactionBytesReclaimed_.fetch_add(result.bytesBefore - result.bytesAfter,
                                            std::memory_order_relaxed);
    }
}

}  // namespace kvexec::engine
