// engine/stream.h: the implementation of a change stream (change_stream.h).
//
// A stream has two buffers: `backfill`, filled once by an AuxIO task from
// KVStore::scan with the persisted mutations above startSeqno (the file as
// the scan found it: at least up to the persisted seqno the stream
// registered at, backfillEnd), and `memory`, fed under the vBucket lock
// with every mutation the vBucket queues after the stream registered (plus
// the unpersisted ones it found then). Its NonIO task delivers backfill
// first, then memory without what backfill delivered, so the consumer sees
// seqnos in increasing order. The task is woken only when a
// buffer goes from empty to non-empty, or when the backfill completes or
// fails (the stream then ends: BackfillFailed), or when the vBucket stops
// being active (it ends after what came before: StateChanged).
//
// Ground rules: buffers and flags are guarded by mutex_; the consumer
// callback runs on the stream task's thread with no lock held.
#pragma once

#include <atomic>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "executor/thread_annotations.h"
#include "kvexec/engine/change_stream.h"
#include "kvexec/executor_pool.h"
#include "kvexec/task.h"

namespace kvexec::engine {

class BucketImpl;

struct StreamEntry {
    StreamEvent event;
    Clock::time_point queued;
};

class StreamImpl final : public ChangeStream, public std::enable_shared_from_this<StreamImpl> {
  public:
    // `replication`: deliver every event with snapshot markers; otherwise
    // only committed changes (onEvent then sees Mutation, Deletion and
    // Expiration).
    StreamImpl(BucketImpl& bucket, Vbid vbid, Seqno startSeqno, bool replication,
               StreamEventCallback onEvent);

    Vbid vbid() const override { return vbid_; }
    Seqno lastDelivered() const override { return lastDelivered_.load(std::memory_order_acquire); }
    std::size_t backlog() const override;
    void close() override;

    // Called once, before registration, by the bucket.
    void setTask(TaskId task) { task_ = task; }
    TaskId task() const { return task_; }
    // A backfill will read the disk, at least up to `end` (the persisted
    // seqno the stream registered at; completeBackfill sets the real end).
    void expectBackfill(Seqno end) {
        kvexec::detail::MutexLock lock(mutex_);
        backfilling_ = true;
        backfillEnd_ = end;
    }
    bool replication() const { return replication_; }
    // Under the vBucket lock: a mutation the vBucket just queued.
    void pushLocked(StreamEntry entry);
    // From the backfill task: the persisted part, the seqno it is whole at
    // (its snapshot's end) and the vBucket's purge seqno once it was read,
    // then wakes the stream.
    void completeBackfill(std::vector<StreamEntry> entries, Seqno end, Seqno purgeSeqno);
    // From the backfill task: the disk could not be read. Wakes the stream,
    // whose task ends it (endWith).
    void failBackfill();
    // Under the vBucket lock, as the vBucket stops being active: what is
    // buffered up to `lastSeqno` is delivered, then StateChanged, and the
    // stream closes. Later pushes are dropped, and later seqnos a backfill
    // may read from the file are not delivered.
    void endLocked(Seqno lastSeqno);
    // The stream task's run(): delivers what is buffered. False once closed.
    bool deliver();
    bool closed() const { return closed_.load(std::memory_order_acquire); }
    Seqno startSeqno() const { return startSeqno_; }

  private:
    // `fromWritePath`: pushLocked's wake (BucketImpl::notifyStream).
    void wake(bool fromWritePath);
    // Delivers one part of a batch (disk or memory), after its snapshot
    // marker on a replication stream. False once closed.
    bool deliverPart(std::vector<StreamEntry>& part, bool fromDisk, Seqno snapEnd,
                     Seqno purgeSeqno);
    void deliverOne(const StreamEntry& entry);
    // Tells a replication stream's owner (`kind`: BackfillFailed, as the
    // memory part cannot follow a backfill that is missing, or
    // StateChanged) and closes.
    void endWith(StreamEventKind kind);

    BucketImpl& bucket_;
    const Vbid vbid_;
    const Seqno startSeqno_;
    const bool replication_;
    const StreamEventCallback onEvent_;
    TaskId task_ = 0;
    std::atomic<bool> closed_{false};
    std::atomic<Seqno> lastDelivered_;

    mutable kvexec::detail::Mutex mutex_;
    bool backfilling_ GUARDED_BY(mutex_) = false;
    bool backfillFailed_ GUARDED_BY(mutex_) = false;
    Seqno backfillEnd_ GUARDED_BY(mutex_) = 0;
    Seqno backfillPurgeSeqno_ GUARDED_BY(mutex_) = 0;
    std::optional<Seqno> endAt_ GUARDED_BY(mutex_);  // endLocked's
    std::vector<StreamEntry> backfill_ GUARDED_BY(mutex_);
    std::deque<StreamEntry> memory_ GUARDED_BY(mutex_);
};

}  // namespace kvexec::engine
