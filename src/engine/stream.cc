// Change streams: opening (registration under the vBucket lock, backfill
// from disk on AuxIO when the stream starts below what memory holds),
// delivery on the stream's NonIO task, closing.
#include "engine/stream.h"

#include <algorithm>
#include <iostream>

#include "engine/ep_bucket.h"

namespace kvexec::engine {

std::string_view to_string(StreamEventKind kind) {
    switch (kind) {
        case StreamEventKind::Snapshot:
            return "snapshot";
        case StreamEventKind::Mutation:
            return "mutation";
        case StreamEventKind::Deletion:
            return "deletion";
        case StreamEventKind::Expiration:
            return "expiration";
        case StreamEventKind::Prepare:
            return "prepare";
        case StreamEventKind::Commit:
            return "commit";
        case StreamEventKind::Abort:
            return "abort";
        case StreamEventKind::BackfillFailed:
            return "backfill failed";
        case StreamEventKind::StateChanged:
            return "state changed";
    }
    return "unknown";
}

StreamImpl::StreamImpl(BucketImpl& bucket, Vbid vbid, Seqno startSeqno, bool replication,
                       StreamEventCallback onEvent)
    : bucket_(bucket),
      vbid_(vbid),
      startSeqno_(startSeqno),
      replication_(replication),
      onEvent_(std::move(onEvent)),
      lastDelivered_(startSeqno) {}

std::size_t StreamImpl::backlog() const {
    kvexec::detail::MutexLock lock(mutex_);
    return backfill_.size() + memory_.size();
}

std::string_view to_string(StreamNotify notify) {
    switch (notify) {
        case StreamNotify::Wake:
            return "Wake";
        case StreamNotify::WakeAndWait:
            return "WakeAndWait";
    }
    return "unknown";
}

void StreamImpl::wake(bool fromWritePath) {
    bucket_.notifyStream(task_, fromWritePath);
}

void StreamImpl::pushLocked(StreamEntry entry) {
    bool wakeNow = false;
    {
        kvexec::detail::MutexLock lock(mutex_);
        if (endAt_) {
            return;  // the vBucket is no longer active: not this stream's history
        }
        wakeNow = memory_.empty() && !backfilling_;
        memory_.push_back(std::move(entry));
    }
    if (wakeNow) {
        wake(true);
    }
}

void StreamImpl::completeBackfill(std::vector<StreamEntry> entries, Seqno end, Seqno purgeSeqno) {
    {
        kvexec::detail::MutexLock lock(mutex_);
        backfill_ = std::move(entries);
        backfillEnd_ = end;
        backfillPurgeSeqno_ = purgeSeqno;
        backfilling_ = false;
    }
    wake(false);
}

void StreamImpl::failBackfill() {
    {
        kvexec::detail::MutexLock lock(mutex_);
        backfilling_ = false;
        backfillFailed_ = true;
    }
    wake(false);
}

bool StreamImpl::deliver() {
    if (closed()) {
        return false;
    }
    bucket_.pool().snooze(task_, kForever);  // before taking: a push meanwhile wakes us
    std::vector<StreamEntry> disk, memory;
    Seqno diskEnd = 0;
    Seqno diskPurgeSeqno = 0;
    bool backfillFailed = false;
    std::optional<Seqno> endAt;
    {
        kvexec::detail::MutexLock lock(mutex_);
        if (backfilling_) {
            return true;  // completeBackfill() or failBackfill() wakes us
        }
        backfillFailed = backfillFailed_;
        disk = std::move(backfill_);
        backfill_.clear();
        diskEnd = backfillEnd_;
        diskPurgeSeqno = backfillPurgeSeqno_;
        memory.assign(std::make_move_iterator(memory_.begin()),
                      std::make_move_iterator(memory_.end()));
        memory_.clear();
        endAt = endAt_;
    }
    if (backfillFailed) {
        endWith(StreamEventKind::BackfillFailed);
        return false;
    }
    if (endAt) {
        if (!disk.empty() && diskEnd > *endAt) {
            // The scan read the file after the vBucket changed: a key's
            // version from before may have been replaced there. Cut at
            // endAt, the snapshot would not be whole; sent nothing, the
            // consumer asks again (of the vBucket's next active).
            disk.clear();
            memory.clear();
        }
        std::erase_if(memory,
                      [&](const StreamEntry& e) { return e.event.item.meta.seqno > *endAt; });
    }
    if (!deliverPart(disk, true, diskEnd, diskPurgeSeqno) || !deliverPart(memory, false, 0, 0)) {
        return false;
    }
    if (endAt) {
        endWith(StreamEventKind::StateChanged);
        return false;
    }
    return true;
}

void StreamImpl::endLocked(Seqno lastSeqno) {
    bool wakeNow = false;
    {
        kvexec::detail::MutexLock lock(mutex_);
        endAt_ = lastSeqno;
        wakeNow = memory_.empty() && !backfilling_;
    }
    if (wakeNow) {
        wake(false);
    }
}

namespace {

// The last committed change of a snapshot's events (0: none), what DCP
// calls its max visible seqno: prepares and aborts are not visible.
Seqno maxVisibleSeqno(const std::vector<StreamEntry>& part) {
    for (auto it = part.rbegin(); it != part.rend(); ++it) {
        const auto kind = it->event.kind;
        if (kind != StreamEventKind::Prepare && kind != StreamEventKind::Abort) {
            return it->event.item.meta.seqno;
        }
    }
    return 0;
}

}  // namespace

// Entries at or below what was delivered (the memory part repeats what the
// backfill read) are dropped first, so a snapshot marker covers exactly
// the events that follow it.
bool StreamImpl::deliverPart(std::vector<StreamEntry>& part, bool fromDisk, Seqno snapEnd,
                             Seqno purgeSeqno) {
    const Seqno delivered = lastDelivered();
    std::erase_if(part, [&](const StreamEntry& e) { return e.event.item.meta.seqno <= delivered; });
    if (part.empty()) {
        return !closed();
    }
    if (replication_ && !closed()) {
        StreamEvent marker;
        marker.kind = StreamEventKind::Snapshot;
        marker.item.vbid = vbid_;
        marker.snapStart = part.front().event.item.meta.seqno;
        marker.snapEnd = std::max(snapEnd, part.back().event.item.meta.seqno);
        marker.fromDisk = fromDisk;
        marker.maxVisibleSeqno = maxVisibleSeqno(part);
        marker.purgeSeqno = purgeSeqno;
        onEvent_(marker);
    }
    for (const auto& entry : part) {
        if (closed()) {
            return false;
        }
        deliverOne(entry);
    }
    return !closed();
}

void StreamImpl::deliverOne(const StreamEntry& entry) {
    const auto& event = entry.event;
    if (replication_ || event.kind == StreamEventKind::Mutation ||
        event.kind == StreamEventKind::Deletion || event.kind == StreamEventKind::Expiration) {
        onEvent_(event);
    } else if (event.kind == StreamEventKind::Commit) {
        StreamEvent committed = event;  // a commit is a change like any other here
        committed.kind =
            event.item.meta.deleted ? StreamEventKind::Deletion : StreamEventKind::Mutation;
        committed.preparedSeqno = 0;
        onEvent_(committed);
    }
    lastDelivered_.store(event.item.meta.seqno, std::memory_order_release);
    bucket_.recordStreamDelivery(Clock::now() - entry.queued);
}

void StreamImpl::endWith(StreamEventKind kind) {
    if (replication_ && !closed()) {
        StreamEvent ended;
        ended.kind = kind;
        ended.item.vbid = vbid_;
        onEvent_(ended);
    }
    close();
}

void StreamImpl::close() {
    if (closed_.exchange(true)) {
        return;
    }
    bucket_.closeStream(*this);
}

std::shared_ptr<ChangeStream> BucketImpl::openStream(StreamRequest request,
                                                     StreamItemCallback onItem, Status* status) {
    return openStreamOf(
        request, false, [onItem = std::move(onItem)](const StreamEvent& e) { onItem(e.item); },
        status);
}

std::shared_ptr<ChangeStream> BucketImpl::openReplicationStream(StreamRequest request,
                                                                StreamEventCallback onEvent,
                                                                Status* status) {
    return openStreamOf(request, true, std::move(onEvent), status);
}

std::shared_ptr<ChangeStream> BucketImpl::openStreamOf(StreamRequest request, bool replication,
                                                       StreamEventCallback onEvent,
                                                       Status* status) {
    Status result = Status::Success;
    if (request.vbid >= vbuckets_.size()) {
        result = Status::NotMyVbucket;
    } else if (warmupState_.load(std::memory_order_acquire) != WarmupState::Complete ||
               shuttingDown_.load()) {
        result = Status::TempFail;
    } else if (replication) {
        auto& vb = vbucket(request.vbid);
        kvexec::detail::MutexLock lock(vb.mutex);
        result = vb.state == VBucketState::Active ? Status::Success : Status::NotMyVbucket;
    }
    if (status != nullptr) {
        *status = result;
    }
    if (result != Status::Success) {
        return nullptr;
    }
    auto stream = std::make_shared<StreamImpl>(*this, request.vbid, request.startSeqno, replication,
                                               std::move(onEvent));
    stream->setTask(pool_.schedule(std::make_shared<LambdaTask>(
        *this, TaskType::NonIO, "ChangeStream vb:" + std::to_string(request.vbid),
        [stream](LambdaTask&) { return stream->deliver(); }, 0, kForever)));
    auto& vb = vbucket(request.vbid);
    Seqno backfillEnd = 0;
    if (!registerStream(vb, stream, backfillEnd)) {
        // Demoted since the check above: what it queues now (its aborts)
        // is not the history a replica follows.
        pool_.cancel(stream->task(), true);
        if (status != nullptr) {
            *status = Status::NotMyVbucket;
        }
        return nullptr;
    }
    streamsOpen_.fetch_add(1, std::memory_order_relaxed);
    if (request.startSeqno < backfillEnd) {
        scheduleBackfill(stream, backfillEnd);
    }
    return stream;
}

bool BucketImpl::registerStream(VBucket& vb, const std::shared_ptr<StreamImpl>& stream,
                                Seqno& backfillEnd) {
    kvexec::detail::MutexLock lock(vb.mutex);
    if (stream->replication() && vb.state != VBucketState::Active) {
        return false;
    }
    // dirty holds exactly the seqnos above persistedSeqno (vbucket.h): the
    // disk has the rest.
    backfillEnd = vb.persistedSeqno;
    if (stream->startSeqno() < backfillEnd) {
        stream->expectBackfill(backfillEnd);
    }
    const auto now = Clock::now();
    for (const auto& dirty : vb.dirty) {
        if (dirty.doc.seqno > stream->startSeqno()) {
            stream->pushLocked(StreamEntry{eventOf(vb.id, dirty.doc, dirty.preparedSeqno), now});
        }
    }
    vb.streams.push_back(stream);
    return true;
}

// The scan reads the file as it was when the scan began, which may hold
// saves made after the stream registered at `registeredAt`: it is taken
// whole, to its last seqno, since a key saved again meanwhile has only
// its newer version there (cut at `registeredAt`, the snapshot would lack
// the key until the memory part, which drops what the disk part
// delivered, brought it).
void BucketImpl::scheduleBackfill(const std::shared_ptr<StreamImpl>& stream, Seqno registeredAt) {
    auto body = [this, stream, registeredAt](LambdaTask&) {
        const Vbid vbid = stream->vbid();
        std::vector<StreamEntry> entries;
        std::vector<PrepareOnDisk> prepares;  // those a later version may have ended
        const auto now = Clock::now();
        try {
            store_->scan(vbid, stream->startSeqno() + 1, [&](const storage::Document& doc) {
                if (stream->replication() && isPrepareKey(doc.key) && !isAbortTombstone(doc)) {
                    prepares.push_back({doc.key, doc.seqno});
                }
                entries.push_back(StreamEntry{eventOf(vbid, doc, 0), now});
                return !stream->closed();
            });
        } catch (const std::exception& error) {
            std::cerr << "kvexec engine: backfill of vb:" << vbid
                      << " failed, ending the stream: " << error.what() << '\n';
            stream->failBackfill();
            return false;
        }
        // Read after the scan: a compaction that switched files before the
        // scan began had raised it already (it records the purge seqno
        // first). One that came after the stream's request was answered
        // may have purged deletions the consumer needs: the stream ends, and
        // the consumer's next request is answered with a rollback.
        const Seqno purgeSeqno = observeSeqno(vbid).purgeSeqno;
        if (stream->startSeqno() != 0 && stream->startSeqno() < purgeSeqno) {
            std::cerr << "kvexec engine: vb:" << vbid << " purged tombstones above seqno "
                      << stream->startSeqno()
                      << " while a stream from it waited for its backfill\n";
            stream->failBackfill();
            return false;
        }
        const Seqno end = entries.empty()
                              ? registeredAt
                              : std::max(registeredAt, entries.back().event.item.meta.seqno);
        dropCompletedPrepares(vbid, prepares, end, entries);
        stream->completeBackfill(std::move(entries), end, purgeSeqno);
        return false;
    };
    pool_.schedule(std::make_shared<LambdaTask>(
        *this, TaskType::AuxIO, "Backfill vb:" + std::to_string(stream->vbid()), std::move(body)));
}

// A version that ended the prepare but lies beyond the backfill comes in
// the memory part, maybe as the prepare's commit, which the consumer can
// apply only if it got the prepare: then the prepare is sent. One ended
// within the backfill is left out (its commit, or a later write, is there).
void BucketImpl::dropCompletedPrepares(Vbid vbid, const std::vector<PrepareOnDisk>& prepares,
                                       Seqno end, std::vector<StreamEntry>& entries) const {
    std::vector<Seqno> ended;  // ascending, as the scan found them
    for (const auto& prepare : prepares) {
        const auto committed = store_->get(vbid, committedKeyOf(prepare.key));
        if (committed && committed->seqno > prepare.seqno && committed->seqno <= end) {
            ended.push_back(prepare.seqno);
        }
    }
    std::erase_if(entries, [&](const StreamEntry& e) {
        return std::binary_search(ended.begin(), ended.end(), e.event.item.meta.seqno);
    });
}

// The measured interval is the pool call alone, between two steady-clock
// reads; what a set spends on it is the sum over its streams.
void BucketImpl::notifyStream(TaskId task, bool fromWritePath) {
    const bool measure = fromWritePath && config_.measureStreamNotify;
    const auto start = measure ? Clock::now() : Clock::time_point{};
    if (config_.streamNotify == StreamNotify::WakeAndWait) {
        pool_.wakeAndWait(task);  // whether it was found: not needed here
    } else {
        pool_.wake(task);
    }
    if (measure) {
        const auto ns =
            std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
        streamNotifies_.fetch_add(1, std::memory_order_relaxed);
        streamNotifyNs_.fetch_add(static_cast<std::uint64_t>(ns), std::memory_order_relaxed);
    }
}

void BucketImpl::closeStream(StreamImpl& stream) {
    auto& vb = vbucket(stream.vbid());
    {
        kvexec::detail::MutexLock lock(vb.mutex);
        std::erase_if(vb.streams, [&](const auto& s) { return s.get() == &stream; });
    }
    pool_.cancel(stream.task(), true);  // the pool's reference to the task (and stream) goes
    streamsOpen_.fetch_sub(1, std::memory_order_relaxed);
}

}  // namespace kvexec::engine
