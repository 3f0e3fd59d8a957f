// Applying the durability monitor's decisions (durability_monitor.h) to
// the SyncWrites: tracking them, feeding it the vBucket's own progress and
// the replicas' acknowledgements, the DurabilityCompletion task that
// commits what it decided, and the per-vBucket timeout tasks that make it
// abort expired writes.
#include "engine/ep_bucket.h"

namespace kvexec::engine {

void BucketImpl::trackSyncWriteLocked(VBucket& vb, Seqno seqno, SyncWrite write) {
    accountMemory(static_cast<std::int64_t>(footprint(write.key.size(), write.value.value.size())));
    vb.pendingByKey[write.key] = seqno;
    const auto deadline = write.deadline;
    vb.durability.addPrepare(seqno, write.level, deadline);
    vb.syncWrites.emplace(seqno, std::move(write));
    localProgressLocked(vb);
    if (vb.durability.pending() != 0 && deadline < vb.armedDeadline) {
        armTimeoutLocked(vb);
    }
}

void BucketImpl::localProgressLocked(VBucket& vb) {
    vb.durability.localProgress(vb.highSeqno, vb.persistedSeqno);
    std::vector<FinishedSyncWrite> none;
    applyDecisionsLocked(vb, none);
}

void BucketImpl::applyDecisionsLocked(VBucket& vb, std::vector<FinishedSyncWrite>& aborted) {
    for (const auto& decision : vb.durability.takeDecisions()) {
        if (decision.outcome == DurabilityDecision::Outcome::Abort) {
            aborted.push_back(abortLocked(vb, decision.seqno, Status::SyncWriteAmbiguous));
            continue;
        }
        const auto it = vb.syncWrites.find(decision.seqno);
        if (it != vb.syncWrites.end()) {
            resolveLocked(vb, it->second);
        }
    }
}

// Snoozed under the vBucket lock, so concurrent writers re-arm the task in
// the order of their deadlines' comparison (the last snooze wins).
// The task wakes at the earliest deadline of a SyncWrite or a persistence
// waiter.
void BucketImpl::armTimeoutLocked(VBucket& vb) {
    auto next = vb.durability.nextDeadline();
    for (const auto& waiter : vb.persistenceWaiters) {
        next = std::min(next.value_or(waiter.deadline), waiter.deadline);
    }
    vb.armedDeadline = next.value_or(Clock::time_point::max());
    pool_.snooze(vb.timeoutTask,
                 next ? std::max(*next - steadyNow(), Clock::duration::zero()) : kForever);
}

void BucketImpl::abortAllLocked(VBucket& vb, Status status,
                                std::vector<FinishedSyncWrite>& aborted) {
    while (!vb.syncWrites.empty()) {
        aborted.push_back(abortLocked(vb, vb.syncWrites.begin()->first, status));
    }
}

void BucketImpl::abortClientWritesLocked(VBucket& vb, Status status,
                                         std::vector<FinishedSyncWrite>& aborted) {
    std::vector<Seqno> ofClients;
    for (const auto& [seqno, write] : vb.syncWrites) {
        if (!write.inherited) {
            ofClients.push_back(seqno);
        }
    }
    for (const Seqno seqno : ofClients) {
        aborted.push_back(abortLocked(vb, seqno, status));
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

std::vector<FinishedSyncWrite> BucketImpl::commitResolvedLocked(VBucket& vb) {
    std::vector<FinishedSyncWrite> done;
    vb.inCompletionQueue = false;
    const auto now = steadyNow();
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
        // The commit is a mutation of its own (a new seqno, the prepare's
        // CAS); the prepare on disk is then superseded.
        const Seqno prepared = write.value.meta.seqno;
        accountMemory(
            static_cast<std::int64_t>(vb.queueLocked(write.key, write.value, false, {}, prepared)));
        accountMemory(vb.setCommittedLocked(write.key, write.value));
        commitHistogram(write.level).record(now - write.accepted);
        syncWritesCommitted_.fetch_add(1, std::memory_order_relaxed);
        done.push_back(FinishedSyncWrite{std::move(write), Status::Success, vb.failover.uuid()});
    }
    return done;
}

FinishedSyncWrite BucketImpl::abortLocked(VBucket& vb, Seqno seqno, Status status) {
    auto node = vb.syncWrites.extract(seqno);
    SyncWrite write = std::move(node.mapped());
    vb.durability.forget(seqno);
    vb.pendingByKey.erase(write.key);
    accountMemory(
        -static_cast<std::int64_t>(footprint(write.key.size(), write.value.value.size())));
    // The prepare may already be (or be about to be) on disk: end it there
    // too, so warmup does not take it for a pending one.
    accountMemory(static_cast<std::int64_t>(vb.queueAbortLocked(write.key, seqno)));
    syncWritesAborted_.fetch_add(1, std::memory_order_relaxed);
    return FinishedSyncWrite{std::move(write), status, vb.failover.uuid()};
}

void BucketImpl::finish(std::vector<FinishedSyncWrite>& done) {
    for (auto& f : done) {
        if (!f.write.done) {
            continue;  // a prepare warmup found: its client is gone
        }
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
        if (!done.empty()) {
            notifyFlusher(vb, FlushUrgency::Batched);  // the commits
        }
        finish(done);
    }
    return true;
}

// A vBucket's timeout task: lets the monitor abort the writes whose
// deadline has passed and snoozes to the earliest remaining one.
bool BucketImpl::runTimeout(Vbid vbid) {
    auto& vb = vbucket(vbid);
    std::vector<FinishedSyncWrite> done;
    std::vector<PersistenceWaiter> expired;
    {
        kvexec::detail::MutexLock lock(vb.mutex);
        vb.durability.expire(steadyNow());
        applyDecisionsLocked(vb, done);
        expired = vb.takeExpiredWaitersLocked(steadyNow());
        armTimeoutLocked(vb);
    }
    for (auto& waiter : expired) {
        waiter.done(false);
    }
    if (!done.empty()) {
        finish(done);
        notifyFlusher(vb);
    }
    return true;
}

}  // namespace kvexec::engine
