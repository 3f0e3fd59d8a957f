// Warmup: the first Reader task opens the KVStore (which reads every
// vBucket file's index), then one Reader task per shard loads its vBuckets
// into memory in parallel. The last shard to finish publishes
// WarmupState::Complete (release), which is what admit() checks: until
// then every data operation gets TempFail.
#include <iostream>

#include "engine/ep_bucket.h"

namespace kvexec::engine {

void BucketImpl::failWarmup(const std::string& why) {
    {
        kvexec::detail::MutexLock lock(warmupErrorMutex_);
        if (warmupError_.empty()) {
            warmupError_ = why;
        }
    }
    warmupState_.store(WarmupState::Failed, std::memory_order_release);
    std::cerr << "kvexec engine: warmup failed: " << why << '\n';
}

bool BucketImpl::runWarmup() {
    try {
        storage::KVStoreConfig storeConfig;
        storeConfig.dir = config_.dataDir;
        storeConfig.numVBuckets = config_.numVBuckets;
        storeConfig.syncMode = config_.syncMode;
        storeConfig.fileCacheEnabled = config_.fileCacheEnabled;
        storeConfig.fileOps = config_.fileOps;
        store_ = std::make_unique<storage::KVStore>(std::move(storeConfig));
        if (const auto errors = store_->openErrors(); !errors.empty()) {
            failWarmup(errors.front().what());
            return false;
        }
        loadManifestState();
        persistedVBuckets_ = loadVBucketStates(config_.dataDir, vbuckets_.size());
    } catch (const std::exception& error) {
        failWarmup(error.what());
        return false;
    }
    shardsLoading_.store(shards_.size());
    for (std::size_t s = 0; s < shards_.size(); ++s) {
        pool_.schedule(std::make_shared<LambdaTask>(
            *this, TaskType::Reader, "Warmup shard " + std::to_string(s),
            [this, s](LambdaTask&) { return runWarmupShard(s); }));
    }
    return false;
}

bool BucketImpl::runWarmupShard(std::size_t shard) {
    try {
        for (std::size_t v = shard; v < vbuckets_.size(); v += shards_.size()) {
            if (warmupState_.load(std::memory_order_acquire) == WarmupState::Failed ||
                shuttingDown_.load()) {
                return false;
            }
            auto& vb = *vbuckets_[v];
            loadVBucket(vb);
            kvexec::detail::MutexLock lock(vb.mutex);
            restoreVBucketStateLocked(vb);
            trackWarmedUpPreparesLocked(vb);
            std::vector<FinishedSyncWrite> none;  // warmup kept no prepare of a dropped one
            deleteDroppedCollectionsLocked(vb, none);
            vbucketsLoaded_.fetch_add(1);
        }
    } catch (const std::exception& error) {
        failWarmup(error.what());
        return false;
    }
    if (shardsLoading_.fetch_sub(1) == 1) {
        try {
            persistVBucketStates(false);  // running: a crash from now on is unclean
        } catch (const std::exception& error) {
            failWarmup(error.what());
            return false;
        }
        auto expected = WarmupState::Running;
        if (warmupState_.compare_exchange_strong(expected, WarmupState::Complete,
                                                 std::memory_order_release)) {
            nudgeFlushersOfDirtyVBuckets();
        }
    }
    return false;
}

// What warmup queued (the deletions of a dropped collection's documents)
// is saved only now: a flusher that runs before warmup completes saves
// nothing and takes its vBuckets off the ready queue.
void BucketImpl::nudgeFlushersOfDirtyVBuckets() {
    for (auto& vbPtr : vbuckets_) {
        bool dirty = false;
        {
            kvexec::detail::MutexLock lock(vbPtr->mutex);
            dirty = !vbPtr->dirty.empty();
        }
        if (dirty) {
            notifyFlusher(*vbPtr, FlushUrgency::Batched);
        }
    }
}

// Nobody else touches the vBucket before warmup completes; the lock is
// taken for the rule's sake (and for TSan).
void BucketImpl::loadVBucket(VBucket& vb) {
    kvexec::detail::MutexLock lock(vb.mutex);
    loadVBucketLocked(vb);
}

// The vBucket's documents and pending prepares as the store holds them
// (warmup, and a replica's rollback). Documents of a collection the
// manifest no longer holds (dropped just before a crash, before their
// tombstones were persisted, or while the vBucket was a replica) are
// loaded hidden and left to deleteDroppedCollectionsLocked: deleted once
// the vBucket is a plain active, never at a replica's own seqnos.
void BucketImpl::loadVBucketLocked(VBucket& vb) {
    if (!store_->exists(vb.id)) {
        return;
    }
    std::uint64_t items = 0;
    std::vector<storage::Document> prepares;
    store_->scan(vb.id, 0, [&](const storage::Document& doc) {
        vb.mutex.assertHeld();  // scan() calls back on this thread, under the lock
        vb.maxCas = std::max(vb.maxCas, doc.cas);
        if (isPrepareKey(doc.key)) {
            if (!isAbortTombstone(doc) &&
                vb.collections.contains(collectionOf(committedKeyOf(doc.key)))) {
                prepares.push_back(doc);
            }
            return true;
        }
        if (!vb.collections.contains(collectionOf(doc.key))) {
            vb.droppedPending.insert(collectionOf(doc.key));
        } else {
            ++items;
        }
        accountMemory(vb.setCommittedLocked(doc.key, storedValueOf(doc)));
        return true;
    });
    vb.highSeqno = vb.persistedSeqno = store_->highSeqno(vb.id);
    keepPendingPreparesLocked(vb, prepares);
    itemsLoaded_.fetch_add(items);
}

// A prepare on disk is complete when a later version of its committed key
// is there too (its commit, or a write after it) or its prepare key holds
// an abort (scan() then gives the tombstone, which loadVBucket skips). The
// others were pending at the crash, maybe acknowledged by a majority: they
// are kept as pending SyncWrites with no client and no deadline, and
// commit once the vBucket's topology holds them again (at once on a
// single node), as Couchbase's warmup does.
void BucketImpl::keepPendingPreparesLocked(VBucket& vb, std::vector<storage::Document>& prepares) {
    const auto now = steadyNow();
    for (auto& doc : prepares) {
        std::string key(committedKeyOf(doc.key));
        const auto* committed = vb.committed.find(key);
        if (committed != nullptr && committed->meta.seqno > doc.seqno) {
            continue;
        }
        SyncWrite write{key, storedValueOf(doc),       static_cast<DurabilityLevel>(doc.level),
                        now, Clock::time_point::max(), false,
                        {},  /*inherited=*/true};
        accountMemory(
            static_cast<std::int64_t>(footprint(write.key.size(), write.value.value.size())));
        vb.pendingByKey[write.key] = doc.seqno;
        vb.syncWrites.emplace(doc.seqno, std::move(write));
    }
}

// After the vBucket's topology is restored: the monitor takes over the
// prepares warmup kept, and those it commits at once (every one on a
// single node) are committed before warmup completes, so that the first
// read sees them.
void BucketImpl::trackWarmedUpPreparesLocked(VBucket& vb) {
    if (vb.syncWrites.empty()) {
        return;
    }
    if (vb.state != VBucketState::Active) {
        // A replica's prepares wait for its active's commit or abort (and a
        // dead vBucket's too: it becomes a replica or active later, which
        // adopts them).
        for (auto& [seqno, write] : vb.syncWrites) {
            accountMemory(
                -static_cast<std::int64_t>(footprint(write.key.size(), write.value.value.size())));
            vb.replicaPrepares.emplace(
                seqno, ReplicaPrepare{write.key, std::move(write.value), write.level});
        }
        vb.syncWrites.clear();
        vb.pendingByKey.clear();
        return;
    }
    for (const auto& [seqno, write] : vb.syncWrites) {
        vb.durability.addPrepare(seqno, write.level, write.deadline);
    }
    if (vb.state == VBucketState::Active) {
        localProgressLocked(vb);
        commitResolvedLocked(vb);  // no client waits for these
    }
}

}  // namespace kvexec::engine
