// Change streams: opening (registration under the vBucket lock, backfill
// from disk on AuxIO when the stream starts below what memory holds),
// delivery on the stream's NonIO task, closing.
#include "engine/stream.h"

#include <iostream>

#include "engine/ep_bucket.h"

namespace kvexec::engine {
namespace {

Item itemOf(Vbid vbid, const storage::Document& doc) {
    return itemOf(vbid, doc.key, doc.value,
                  ItemMeta{doc.cas, doc.seqno, doc.flags, doc.expiry, doc.datatype, doc.deleted});
}

}  // namespace

StreamImpl::StreamImpl(BucketImpl& bucket, Vbid vbid, Seqno startSeqno, StreamItemCallback onItem)
    : bucket_(bucket),
      vbid_(vbid),
      startSeqno_(startSeqno),
      onItem_(std::move(onItem)),
      lastDelivered_(startSeqno) {}

std::size_t StreamImpl::backlog() const {
    kvexec::detail::MutexLock lock(mutex_);
    return backfill_.size() + memory_.size();
}

void StreamImpl::wake() {
    bucket_.pool().wake(task_);
}

void StreamImpl::pushLocked(StreamEntry entry) {
    bool wakeNow = false;
    {
        kvexec::detail::MutexLock lock(mutex_);
        wakeNow = memory_.empty() && !backfilling_;
        memory_.push_back(std::move(entry));
    }
    if (wakeNow) {
        wake();
    }
}

void StreamImpl::completeBackfill(std::vector<StreamEntry> entries) {
    {
        kvexec::detail::MutexLock lock(mutex_);
        backfill_ = std::move(entries);
        backfilling_ = false;
    }
    wake();
}

bool StreamImpl::deliver() {
    if (closed()) {
        return false;
    }
    bucket_.pool().snooze(task_, kForever);  // before taking: a push meanwhile wakes us
    std::vector<StreamEntry> batch;
    {
        kvexec::detail::MutexLock lock(mutex_);
        if (backfilling_) {
            return true;  // completeBackfill() wakes us
        }
        batch = std::move(backfill_);
        backfill_.clear();
        for (auto& entry : memory_) {
            batch.push_back(std::move(entry));
        }
        memory_.clear();
    }
    for (const auto& entry : batch) {
        if (closed()) {
            return false;
        }
        if (entry.item.meta.seqno <= lastDelivered()) {
            continue;
        }
        onItem_(entry.item);
        lastDelivered_.store(entry.item.meta.seqno, std::memory_order_release);
        bucket_.recordStreamDelivery(Clock::now() - entry.queued);
    }
    return !closed();
}

void StreamImpl::close() {
    if (closed_.exchange(true)) {
        return;
    }
    bucket_.closeStream(*this);
}

std::shared_ptr<ChangeStream> BucketImpl::openStream(StreamRequest request,
                                                     StreamItemCallback onItem, Status* status) {
    Status result = Status::Success;
    if (request.vbid >= vbuckets_.size()) {
        result = Status::NotMyVbucket;
    } else if (warmupState_.load(std::memory_order_acquire) != WarmupState::Complete ||
               shuttingDown_.load()) {
        result = Status::TempFail;
    }
    if (status != nullptr) {
        *status = result;
    }
    if (result != Status::Success) {
        return nullptr;
    }
    auto stream =
        std::make_shared<StreamImpl>(*this, request.vbid, request.startSeqno, std::move(onItem));
    stream->setTask(pool_.schedule(std::make_shared<LambdaTask>(
        *this, TaskType::NonIO, "ChangeStream vb:" + std::to_string(request.vbid),
        [stream](LambdaTask&) { return stream->deliver(); }, 0, kForever)));
    auto& vb = vbucket(request.vbid);
    Seqno backfillEnd = 0;
    {
        kvexec::detail::MutexLock lock(vb.mutex);
        // dirty holds exactly the seqnos above persistedSeqno (vbucket.h):
        // the disk has the rest.
        backfillEnd = vb.persistedSeqno;
        const bool backfill = request.startSeqno < backfillEnd;
        if (backfill) {
            stream->expectBackfill();
        }
        const auto now = Clock::now();
        for (const auto& dirty : vb.dirty) {
            if (dirty.doc.seqno > request.startSeqno && !isPrepareKey(dirty.doc.key)) {
                stream->pushLocked(StreamEntry{itemOf(vb.id, dirty.doc), now});
            }
        }
        vb.streams.push_back(stream);
    }
    streamsOpen_.fetch_add(1, std::memory_order_relaxed);
    if (request.startSeqno < backfillEnd) {
        scheduleBackfill(stream, backfillEnd);
    }
    return stream;
}

void BucketImpl::scheduleBackfill(const std::shared_ptr<StreamImpl>& stream, Seqno backfillEnd) {
    auto body = [this, stream, backfillEnd](LambdaTask&) {
        std::vector<StreamEntry> entries;
        const auto now = Clock::now();
        try {
            store_->scan(stream->vbid(), stream->startSeqno() + 1,
                         [&](const storage::Document& doc) {
                             if (doc.seqno > backfillEnd || stream->closed()) {
                                 return false;  // the rest is in the stream's memory part
                             }
                             if (!isPrepareKey(doc.key)) {
                                 entries.push_back(StreamEntry{itemOf(stream->vbid(), doc), now});
                             }
                             return true;
                         });
        } catch (const std::exception& error) {
            std::cerr << "kvexec engine: backfill of vb:" << stream->vbid()
                      << " failed, closing the stream: " << error.what() << '\n';
            stream->close();
            return false;
        }
        stream->completeBackfill(std::move(entries));
        return false;
    };
    pool_.schedule(std::make_shared<LambdaTask>(
        *this, TaskType::AuxIO, "Backfill vb:" + std::to_string(stream->vbid()), std::move(body)));
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
