// ep_bucket.cc: Bucket::open and its config checks, the read path (get,
// get-meta, list-keys), stats.
#include "engine/ep_bucket.h"

#include <chrono>
#include <iostream>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>

#include "engine/stored_key.h"

namespace kvexec::engine {
namespace {

std::uint32_t systemUnixTime() {
    return static_cast<std::uint32_t>(std::chrono::duration_cast<std::chrono::seconds>(
                                          std::chrono::system_clock::now().time_since_epoch())
                                          .count());
}

void validate(const BucketConfig& config) {
    if (config.numVBuckets == 0 || config.numShards == 0) {
        throw std::invalid_argument("BucketConfig: numVBuckets and numShards must be > 0");
    }
    if (config.dataDir.empty()) {
        throw std::invalid_argument("BucketConfig: dataDir is empty");
    }
    if (config.memoryQuota == 0) {
        throw std::invalid_argument("BucketConfig: memoryQuota is 0");
    }
}

TaskPtr makeTask(Taskable& owner, TaskType type, std::string description,
                 std::function<bool()> body, Clock::duration initialSleep,
                 bool blockShutdown = false) {
    return std::make_shared<LambdaTask>(
        owner, type, std::move(description),
        [body = std::move(body)](LambdaTask&) { return body(); }, 0, initialSleep, blockShutdown);
}

}  // namespace

std::unique_ptr<Bucket> Bucket::open(ExecutorPool& pool, BucketConfig config) {
    return std::make_unique<BucketImpl>(pool, std::move(config));
}

BucketImpl::BucketImpl(ExecutorPool& pool, BucketConfig config)
    : pool_(pool), config_(std::move(config)) {
    validate(config_);
    if (!config_.unixTime) {
        config_.unixTime = systemUnixTime;
    }
    if (!config_.steadyTime) {
        config_.steadyTime = [] { return Clock::now(); };
    }
    std::mt19937_64 random{std::random_device{}()};
    for (Vbid v = 0; v < config_.numVBuckets; ++v) {
        vbuckets_.push_back(std::make_unique<VBucket>(v, random() | 1, config_.nodeName));
    }
    for (std::size_t s = 0; s < config_.numShards; ++s) {
        shards_.push_back(std::make_unique<Shard>(vbuckets_.size()));
    }
    pool_.registerTaskable(*this);
    // Flushers block shutdown: unregistering runs them until they have
    // persisted what is dirty (the destructor's first step).
    for (std::size_t s = 0; s < shards_.size(); ++s) {
        shards_[s]->flusher = pool_.schedule(makeTask(
            *this, TaskType::Writer, "Flusher shard " + std::to_string(s),
            [this, s] { return runFlusher(s); }, kForever, true));
    }
    completionTask_ = pool_.schedule(makeTask(
        *this, TaskType::NonIO, "DurabilityCompletionTask", [this] { return runCompletion(); },
        kForever));
    for (auto& vb : vbuckets_) {
        const Vbid v = vb->id;
        vb->timeoutTask = pool_.schedule(makeTask(
            *this, TaskType::NonIO, "VBucketSyncWriteTimeoutTask",
            [this, v] { return runTimeout(v); }, kForever));
    }
    expiryPager_ = pool_.schedule(makeTask(
        *this, TaskType::NonIO, "ExpiryPager", [this] { return runExpiryPager(); },
        config_.expiryPagerInterval));
    pool_.schedule(makeTask(
        *this, TaskType::Reader, "Warmup", [this] { return runWarmup(); },
        Clock::duration::zero()));
}

// Shutdown, in order:
// 1. Refuse new work (shuttingDown_: admit() returns TempFail).
// 2. Unregister: the pool cancels our tasks and runs the flushers (they
//    block shutdown) until they have tried to persist what is dirty.
// 3. Commit the SyncWrites that final flush resolved, abort the others
//    (SyncWriteAmbiguous): no task will complete them any more.
// 4. Close the streams.
// 5. Persist the vBucket states, marked clean only if nothing is left
//    unsaved (otherwise the next warmup starts new history branches).
BucketImpl::~BucketImpl() {
    shuttingDown_.store(true);
    pool_.unregisterTaskable(*this, false);
    {
        std::vector<FinishedSyncWrite> failed;
        {
            kvexec::detail::MutexLock lock(completionMutex_);
            failed.swap(failedWrites_);
        }
        finish(failed);
    }
    for (auto& vbPtr : vbuckets_) {
        auto& vb = *vbPtr;
        std::vector<FinishedSyncWrite> done;
        std::vector<std::shared_ptr<StreamImpl>> streams;
        std::vector<PersistenceWaiter> waiters;
        {
            kvexec::detail::MutexLock lock(vb.mutex);
            done = commitResolvedLocked(vb);
            abortAllLocked(vb, Status::SyncWriteAmbiguous, done);
            streams.swap(vb.streams);
            waiters.swap(vb.persistenceWaiters);
        }
        finish(done);
        for (auto& waiter : waiters) {
            waiter.done(false);
        }
        for (auto& stream : streams) {
            stream->close();
        }
    }
    // Only a bucket that warmed up knows the states: one whose warmup
    // failed must not overwrite what it could not read.
    if (warmupState_.load(std::memory_order_acquire) == WarmupState::Complete) {
        bool allSaved = true;
        for (auto& vbPtr : vbuckets_) {
            kvexec::detail::MutexLock lock(vbPtr->mutex);
            // A replica's items past an unfinished disk snapshot's base are
            // held back by design, not lost: they do not make it unclean.
            allSaved = allSaved && (vbPtr->dirty.empty() ||
                                    vbPtr->dirty.front().doc.seqno > vbPtr->wholeSeqnoLocked());
        }
        try {
            persistVBucketStates(allSaved);
        } catch (const std::exception& error) {
            std::cerr << "kvexec engine: saving the vBucket states at shutdown failed: "
                      << error.what() << '\n';
        }
    }
}

WarmupProgress BucketImpl::warmupProgress() const {
    WarmupProgress out;
    out.state = warmupState_.load(std::memory_order_acquire);
    out.vbucketsLoaded = vbucketsLoaded_.load();
    out.vbucketsTotal = vbuckets_.size();
    out.itemsLoaded = itemsLoaded_.load();
    if (out.state == WarmupState::Failed) {
        kvexec::detail::MutexLock lock(warmupErrorMutex_);
        out.error = warmupError_;
    }
    return out;
}

Status BucketImpl::admit(Vbid vbid, const DocKey& key) {
    if (const Status status = admitVBucket(vbid); status != Status::Success) {
        return status;
    }
    if (key.key.empty() || key.key.size() > kMaxKeySize) {
        return Status::Invalid;
    }
    return Status::Success;
}

Status BucketImpl::admitVBucket(Vbid vbid) {
    if (vbid >= vbuckets_.size()) {
        return Status::NotMyVbucket;
    }
    if (warmupState_.load(std::memory_order_acquire) != WarmupState::Complete ||
        shuttingDown_.load(std::memory_order_relaxed)) {
        tempFailures_.fetch_add(1, std::memory_order_relaxed);
        return Status::TempFail;
    }
    return Status::Success;
}

Status BucketImpl::admit(Vbid vbid, const DocKey& key, std::string& stored) {
    const Status status = admit(vbid, key);
    if (status == Status::Success) {
        stored = encodeCollectionKey(key.collection, key.key);
    }
    return status;
}

Status BucketImpl::admitLocked(const VBucket& vb, const DocKey& key) {
    return admitLocked(vb, key.collection);
}

Status BucketImpl::admitLocked(const VBucket& vb, CollectionId collection) {
    if (vb.state != VBucketState::Active) {
        return vb.state == VBucketState::Pending ? Status::TempFail : Status::NotMyVbucket;
    }
    if (vb.handingOver) {
        return Status::TempFail;
    }
    return vb.collections.contains(collection) ? Status::Success : Status::UnknownCollection;
}

void BucketImpl::get(Vbid vbid, DocKey docKey, GetCallback done) {
    read(vbid, docKey, Sees::Live, std::move(done));
}

void BucketImpl::getIncludingDeleted(Vbid vbid, DocKey docKey, GetCallback done) {
    read(vbid, docKey, Sees::LiveOrTombstone, std::move(done));
}

// Reads look their key up without allocating it (stored_key.h).
void BucketImpl::read(Vbid vbid, const DocKey& docKey, Sees sees, GetCallback done) {
    GetResult result{admit(vbid, docKey), {}};
    if (result.status != Status::Success) {
        done(result);
        return;
    }
    const StoredKey storedKey(docKey.collection, docKey.key);
    const std::string_view key = storedKey.view();
    auto& vb = vbucket(vbid);
    bool expiredNow = false;
    {
        kvexec::detail::MutexLock lock(vb.mutex);
        const auto* stored = vb.committed.find(key);
        const auto now = unixNow();
        result.status = admitLocked(vb, docKey);
        if (result.status != Status::Success) {
            // not active here, or the collection is gone
        } else if (vb.pendingOnLocked(key) == Status::SyncWriteReCommitInProgress) {
            result.status = Status::SyncWriteReCommitInProgress;
        } else if (stored == nullptr || (stored->meta.deleted && sees == Sees::Live)) {
            result.status = Status::KeyNotFound;
        } else if (stored->meta.deleted) {
            result.item = itemOf(vbid, key, stored->value, stored->meta);
        } else if (!VBucket::isLive(*stored, now)) {  // expired
            result.status = Status::KeyNotFound;
            if (!vb.pendingByKey.contains(key)) {
                expireLocked(vb, std::string(key));
                expiredNow = true;
            }
        } else {
            result.item = itemOf(vbid, key, stored->value, stored->meta);
            if (vb.lockCasLocked(key, now) != 0) {
                result.item.meta.cas = kLockedCas;
            }
        }
    }
    if (expiredNow) {
        notifyFlusher(vb, FlushUrgency::Batched);
    }
    done(result);
}

void BucketImpl::getReplica(Vbid vbid, DocKey docKey, GetCallback done) {
    readReplica(vbid, docKey, Sees::Live, std::move(done));
}

void BucketImpl::getReplicaIncludingDeleted(Vbid vbid, DocKey docKey, GetCallback done) {
    readReplica(vbid, docKey, Sees::LiveOrTombstone, std::move(done));
}

// A replica never changes its data itself: an expired document reads as
// absent and stays until its active's deletion arrives.
void BucketImpl::readReplica(Vbid vbid, const DocKey& docKey, Sees sees, GetCallback done) {
    GetResult result{admit(vbid, docKey), {}};
    if (result.status == Status::Success) {
        const StoredKey storedKey(docKey.collection, docKey.key);
        const std::string_view key = storedKey.view();
        auto& vb = vbucket(vbid);
        kvexec::detail::MutexLock lock(vb.mutex);
        if (vb.state != VBucketState::Replica) {
            result.status = Status::NotMyVbucket;
        } else if (!vb.collections.contains(docKey.collection)) {
            result.status = Status::UnknownCollection;
        } else if (const auto* found = sees == Sees::Live
                                           ? vb.liveLocked(key, unixNow())
                                           : vb.liveOrTombstoneLocked(key, unixNow());
                   found == nullptr) {
            result.status = Status::KeyNotFound;
        } else {
            result.item = itemOf(vbid, key, found->value, found->meta);
        }
    }
    done(result);
}

void BucketImpl::getMeta(Vbid vbid, DocKey docKey, GetCallback done) {
    GetResult result{admit(vbid, docKey), {}};
    if (result.status == Status::Success) {
        const StoredKey storedKey(docKey.collection, docKey.key);
        const std::string_view key = storedKey.view();
        auto& vb = vbucket(vbid);
        kvexec::detail::MutexLock lock(vb.mutex);
        const auto* stored = vb.committed.find(key);
        result.status = admitLocked(vb, docKey);
        if (result.status != Status::Success) {
            // not active here, or the collection is gone
        } else if (vb.pendingOnLocked(key) == Status::SyncWriteReCommitInProgress) {
            result.status = Status::SyncWriteReCommitInProgress;
        } else if (stored == nullptr) {
            result.status = Status::KeyNotFound;
        } else {
            result.item = itemOf(vbid, key, {}, stored->meta);
        }
    }
    done(result);
}

std::vector<KeySummary> BucketImpl::listKeys(Vbid vbid, std::size_t limit) const {
    std::vector<KeySummary> out;
    if (vbid >= vbuckets_.size()) {
        return out;
    }
    const auto now = unixNow();
    auto& vb = vbucket(vbid);
    kvexec::detail::MutexLock lock(vb.mutex);
    for (const auto& [key, stored] : vb.committed) {
        if (out.size() >= limit) {
            break;
        }
        // Expired ones are left for the expiry pager: listing changes nothing.
        const bool expired = stored.meta.expiry != 0 && stored.meta.expiry <= now;
        if (!stored.meta.deleted && !expired) {
            auto item = itemOf(vbid, key, {}, stored.meta);
            out.push_back(
                KeySummary{std::move(item.key), stored.meta, stored.value.size(), item.collection});
        }
    }
    return out;
}

ObserveSeqnoResult BucketImpl::observeSeqno(Vbid vbid) const {
    ObserveSeqnoResult out;
    if (vbid >= vbuckets_.size()) {
        out.status = Status::NotMyVbucket;
        return out;
    }
    if (warmupState_.load(std::memory_order_acquire) != WarmupState::Complete) {
        out.status = Status::TempFail;
        return out;
    }
    auto& vb = vbucket(vbid);
    kvexec::detail::MutexLock lock(vb.mutex);
    out.vbucketUuid = vb.failover.uuid();
    out.persistedSeqno = vb.persistedSeqno;
    out.currentSeqno = vb.highSeqno;
    out.purgeSeqno = vb.purgeSeqno;
    return out;
}

BucketStats BucketImpl::stats() const {
    BucketStats out;
    out.name = config_.name;
    out.warmupComplete = warmupState_.load(std::memory_order_acquire) == WarmupState::Complete;
    for (const auto& vbPtr : vbuckets_) {
        kvexec::detail::MutexLock lock(vbPtr->mutex);
        out.currItems += vbPtr->liveCount;
        out.tombstones += vbPtr->tombstoneCount;
        out.dirtyItems += vbPtr->dirty.size();
        out.syncWritesPending += vbPtr->syncWrites.size();
    }
    out.memUsed = static_cast<std::uint64_t>(std::max<std::int64_t>(0, memUsed_.load()));
    out.memoryQuota = config_.memoryQuota;
    out.flusherBatches = flusherBatches_.load();
    out.flushFailures = flushFailures_.load();
    out.tempFailures = tempFailures_.load();
    out.expired = expired_.load();
    out.syncWritesCommitted = syncWritesCommitted_.load();
    out.syncWritesAborted = syncWritesAborted_.load();
    out.streamsOpen = streamsOpen_.load();
    out.rangeScansOpen = rangeScans_.size();
    out.compactions = compactions_.load();
    out.autoCompactions = autoCompactions_.load();
    out.compactionBytesReclaimed = compactionBytesReclaimed_.load();
    out.streamNotifies = streamNotifies_.load();
    out.streamNotifyNs = streamNotifyNs_.load();
    for (const auto* h : {&commitMajority_, &commitMajorityPersistActive_, &commitPersistMajority_,
                          &diskCommit_, &storageAge_, &batchSize_, &streamDelivery_}) {
        out.histograms.push_back(h->snapshot());
    }
    return out;
}

EngineHistogram& BucketImpl::commitHistogram(DurabilityLevel level) {
    switch (level) {
        case DurabilityLevel::MajorityAndPersistToActive:
            return commitMajorityPersistActive_;
        case DurabilityLevel::PersistToMajority:
            return commitPersistMajority_;
        default:
            return commitMajority_;
    }
}

}  // namespace kvexec::engine
