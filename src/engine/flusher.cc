// Per-shard flushers. A vBucket that gets a dirty item is pushed onto its
// shard's ready queue (once: VBucket::inReadyQueue), and the flusher is
// nudged at most once per drain (Shard::nudge): the first plain mutation
// snoozes it for flushBatchDelay so that the mutations of that window share
// one save (waking a writer thread per mutation cost more CPU than the
// mutation), and a durable write wakes it at once. A run woken that way
// saves only the vBuckets that durable writes wait on; the rest keep their
// window. The flusher snoozes itself before it clears the nudge and
// drains, so a nudge that lands during the drain makes it run again
// instead of being lost (MB-36380).
#include <algorithm>
#include <deque>
#include <iostream>
#include <iterator>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

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
    kvexec::detail::MutexLock lock(shard.mutex);
    bool urgent = !batched;
    if (!queued) {
        shard.ready.push_back(vb.id);
        // A durable write may have flagged it between this call's flag
        // exchange and its push.
        urgent = urgent || shard.urgent[vb.id];
    } else if (!vb.inReadyQueue.load(std::memory_order_seq_cst)) {
        // Cleared meanwhile: the flusher has taken the vBucket, and this
        // change (queued before the flag was cleared) is in its save.
        return;
    }
    if (urgent) {
        shard.urgent[vb.id] = true;
    }
    nudgeLocked(shard, urgent ? FlusherNudge::Woken : FlusherNudge::Deferred);
}

void BucketImpl::nudgeLocked(Shard& shard, FlusherNudge wanted) {
    if (shard.nudge >= wanted) {
        return;
    }
    if (shard.nudge == FlusherNudge::None) {
        shard.deferredUntil = Clock::now() + config_.flushBatchDelay;  // a window opens
    }
    shard.nudge = wanted;
    if (wanted == FlusherNudge::Woken) {
        pool_.wake(shard.flusher);
    } else {
        pool_.snooze(shard.flusher, config_.flushBatchDelay);
    }
}

// The vBuckets this run saves, taken off the ready queue. A run woken for
// a durable change before the batch window ends takes only the vBuckets
// that asked for one, and leaves the others for the window's end: a
// commit, queued once its prepare is saved, then rides along with its
// vBucket's next save instead of making a save of its own. The window is
// not moved while vBuckets wait in it, so however many durable writes
// come, none waits longer than flushBatchDelay.
std::vector<Vbid> BucketImpl::takeFlushWork(Shard& shard, bool shutdown) {
    kvexec::detail::MutexLock lock(shard.mutex);
    const bool urgentOnly =
        !shutdown && shard.nudge == FlusherNudge::Woken && Clock::now() < shard.deferredUntil;
    const auto taken = [&](Vbid v) REQUIRES(shard.mutex) { return !urgentOnly || shard.urgent[v]; };
    std::vector<Vbid> todo;
    std::copy_if(shard.ready.begin(), shard.ready.end(), std::back_inserter(todo), taken);
    std::erase_if(shard.ready, taken);
    // After the run's own snooze: see the file comment. The deferred run
    // still owed to what is left is armed again when this run ends.
    shard.nudge = shard.ready.empty() ? FlusherNudge::None : FlusherNudge::Deferred;
    return todo;
}

bool BucketImpl::runFlusher(std::size_t shardIndex) {
    auto& shard = *shards_[shardIndex];
    const bool shutdown = shuttingDown_.load();
    if (!shutdown) {
        pool_.snooze(shard.flusher, kForever);  // before draining: see the file comment
    }
    std::vector<Vbid> failed;
    for (const Vbid v : takeFlushWork(shard, shutdown)) {
        auto& vb = vbucket(v);
        {
            // Cleared before the dirty queue is read: a mutation after
            // this point pushes the vBucket again.
            kvexec::detail::MutexLock lock(shard.mutex);
            shard.urgent[v] = false;
            vb.inReadyQueue.store(false, std::memory_order_seq_cst);
        }
        if (!flushVBucket(vb)) {
            failed.push_back(v);
        }
    }
    kvexec::detail::MutexLock lock(shard.mutex);
    if (shutdown) {
        return failed.empty() && !shard.ready.empty();  // best effort: no retries
    }
    // Failed vBuckets go back without a wake: they are retried after
    // flushRetryDelay or with the next window's run, not in a busy loop.
    for (const Vbid v : failed) {
        if (!vbucket(v).inReadyQueue.exchange(true, std::memory_order_acq_rel)) {
            shard.ready.push_back(v);
        }
    }
    std::optional<Clock::duration> next;
    if (!failed.empty()) {
        next = config_.flushRetryDelay;
    }
    if (shard.nudge == FlusherNudge::Deferred) {
        // Nudges during the run were sent as they came (a wake is kept
        // however the run snoozes); the deferral the run's own snooze
        // overrode is sent again. vBuckets left in the window keep its end
        // when a save failed too: the failed ones are then retried with
        // them, at most once per window, as a new window would anyway.
        const auto left = std::max(shard.deferredUntil - Clock::now(), Clock::duration::zero());
        next = std::min(next.value_or(left), left);
    }
    if (next) {
        pool_.snooze(shard.flusher, *next);
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
bool BucketImpl::takeBatchLocked(VBucket& vb, std::vector<storage::Document>& items) {
    const Seqno limit = vb.wholeSeqnoLocked();
    for (const auto& item : vb.dirty) {
        if (items.size() == kMaxBatchItems || item.doc.seqno > limit) {
            return true;
        }
        items.push_back(item.doc);
    }
    return false;
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
    bool leftBehind = false;
    for (;;) {
        bool purgeUnsaved = false;
        {
            // Checked where the batch is taken: a marker that raises the
            // purge seqno cannot come between the check and the batch.
            kvexec::detail::MutexLock lock(vb.mutex);
            purgeUnsaved = vb.purgeSeqno > vb.savedPurgeSeqno;
            if (!purgeUnsaved) {
                leftBehind = takeBatchLocked(vb, items);
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
    }
    reportReplicaProgress(vb.id, replicaMoved);
    for (auto& waiter : persisted) {
        waiter.done(true);
    }
    // What was queued after the batch was taken pushed the vBucket itself.
    // The rest waits for the window: a vBucket with a long queue would
    // otherwise keep the shard's other vBuckets waiting (urgentOnly).
    if (leftBehind) {
        notifyFlusher(vb, FlushUrgency::Batched);
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
