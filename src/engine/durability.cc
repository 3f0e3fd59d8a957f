// The durability monitor of a single node (majority = the active alone):
// tracking SyncWrites, resolving them when their level is met (Majority at
// once, the persist levels when the flusher has persisted their seqno),
// the DurabilityCompletion task that commits resolved writes, and the
// per-vBucket timeout tasks that abort expired ones.
#include "engine/ep_bucket.h"

namespace kvexec::engine {

void BucketImpl::trackSyncWriteLocked(VBucket& vb, Seqno seqno, SyncWrite write) {
    accountMemory(static_cast<std::int64_t>(footprint(write.key.size(), write.value.value.size())));
    vb.pendingByKey[write.key] = seqno;
    auto& tracked = vb.syncWrites.emplace(seqno, std::move(write)).first->second;
    if (tracked.level == DurabilityLevel::Majority) {
        resolveLocked(vb, tracked);  // queued on the active: majority met
        return;
    }
    // Snoozed under the vBucket lock, so concurrent writers re-arm the task
    // in the order of their deadlines' comparison (the last snooze wins).
    if (tracked.deadline < vb.armedDeadline) {
        vb.armedDeadline = tracked.deadline;
        pool_.snooze(vb.timeoutTask, tracked.deadline - Clock::now());
    }
}

// Marks the write resolved and makes sure the completion task will see its
// vBucket; the task is woken only by the call that sets completionPending_,
// so a batch of resolutions costs one wake.
void BucketImpl::resolveLocked(VBucket& vb, SyncWrite& write) {
    write.resolved = true;
    if (!vb.inCompletionQueue) {
        vb.inCompletionQueue = true;
        kvexec::detail::MutexLock lock(completionMutex_);
        completionQueue_.push_back(vb.id);
    }
    wakeCompletion();
}

void BucketImpl::wakeCompletion() {
    if (!completionPending_.exchange(true, std::memory_order_acq_rel)) {
        pool_.wake(completionTask_);
    }
}

void BucketImpl::resolvePersistedLocked(VBucket& vb, Seqno persisted) {
    for (auto& [seqno, write] : vb.syncWrites) {
        if (seqno > persisted) {
            break;
        }
        if (!write.resolved) {
            resolveLocked(vb, write);
        }
    }
}

std::vector<FinishedSyncWrite> BucketImpl::commitResolvedLocked(VBucket& vb) {
    std::vector<FinishedSyncWrite> done;
    vb.inCompletionQueue = false;
    const auto now = Clock::now();
    for (auto it = vb.syncWrites.begin(); it != vb.syncWrites.end();) {
        if (!it->second.resolved) {
            ++it;
            continue;
        }
        SyncWrite write = std::move(it->second);
        it = vb.syncWrites.erase(it);
        vb.pendingByKey.erase(write.key);
        accountMemory(
            -static_cast<std::int64_t>(footprint(write.key.size(), write.value.value.size())));
        accountMemory(vb.setCommittedLocked(write.key, write.value));
        commitHistogram(write.level).record(now - write.accepted);
        syncWritesCommitted_.fetch_add(1, std::memory_order_relaxed);
        done.push_back(FinishedSyncWrite{std::move(write), Status::Success, vb.uuid});
    }
    return done;
}

FinishedSyncWrite BucketImpl::abortLocked(VBucket& vb, Seqno seqno, Status status) {
    auto node = vb.syncWrites.extract(seqno);
    SyncWrite write = std::move(node.mapped());
    vb.pendingByKey.erase(write.key);
    accountMemory(
        -static_cast<std::int64_t>(footprint(write.key.size(), write.value.value.size())));
    // The prepare may already be (or be about to be) on disk: queue the
    // committed value again, keeping its CAS, so the disk converges to it.
    StoredValue restore;
    const auto it = vb.committed.find(write.key);
    if (it != vb.committed.end()) {
        restore = it->second;
    } else {
        restore.meta.deleted = true;
    }
    accountMemory(
        static_cast<std::int64_t>(vb.queueLocked(write.key, restore, it == vb.committed.end())));
    accountMemory(vb.setCommittedLocked(write.key, std::move(restore)));
    syncWritesAborted_.fetch_add(1, std::memory_order_relaxed);
    return FinishedSyncWrite{std::move(write), status, vb.uuid};
}

void BucketImpl::finish(std::vector<FinishedSyncWrite>& done) {
    for (auto& f : done) {
        const bool ok = f.status == Status::Success;
        f.write.done(f.status, ok ? f.write.value.meta.cas : 0,
                     ok ? MutationToken{f.vbucketUuid, f.write.value.meta.seqno} : MutationToken{});
    }
    done.clear();
}

// The completion task: clears the pending flag before taking the queue, so
// a resolution that lands after the take wakes it again (contract rule 5:
// a wake during a run makes it run once more).
bool BucketImpl::runCompletion() {
    pool_.snooze(completionTask_, kForever);
    completionPending_.store(false, std::memory_order_release);
    std::vector<Vbid> vbids;
    std::vector<FinishedSyncWrite> failed;
    {
        kvexec::detail::MutexLock lock(completionMutex_);
        vbids.swap(completionQueue_);
        failed.swap(failedWrites_);
    }
    finish(failed);
    for (const Vbid v : vbids) {
        auto& vb = vbucket(v);
        std::vector<FinishedSyncWrite> done;
        {
            kvexec::detail::MutexLock lock(vb.mutex);
            done = commitResolvedLocked(vb);
        }
        finish(done);
    }
    return true;
}

// A vBucket's timeout task: aborts the unresolved writes whose deadline has
// passed and snoozes to the earliest remaining one.
bool BucketImpl::runTimeout(Vbid vbid) {
    auto& vb = vbucket(vbid);
    std::vector<FinishedSyncWrite> done;
    {
        kvexec::detail::MutexLock lock(vb.mutex);
        const auto now = Clock::now();
        std::vector<Seqno> expired;
        auto earliest = Clock::time_point::max();
        for (const auto& [seqno, write] : vb.syncWrites) {
            if (write.resolved || write.level == DurabilityLevel::Majority) {
                continue;
            }
            if (write.deadline <= now) {
                expired.push_back(seqno);
            } else {
                earliest = std::min(earliest, write.deadline);
            }
        }
        for (const Seqno seqno : expired) {
            done.push_back(abortLocked(vb, seqno, Status::SyncWriteAmbiguous));
        }
        vb.armedDeadline = earliest;
        pool_.snooze(vb.timeoutTask,
                     earliest == Clock::time_point::max() ? kForever : earliest - now);
    }
    if (!done.empty()) {
        finish(done);
        notifyFlusher(vb);
    }
    return true;
}

}  // namespace kvexec::engine
