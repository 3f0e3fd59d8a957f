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
// taken for the rule's sake (and for TSan). Documents of a collection the
// manifest no longer holds (dropped just before a crash, before their
// tombstones were persisted) are not loaded, and are deleted on disk.
void BucketImpl::loadVBucket(VBucket& vb) {
    if (!store_->exists(vb.id)) {
        return;
    }
    kvexec::detail::MutexLock lock(vb.mutex);
    std::uint64_t items = 0;
    std::vector<std::string> dropped;
    store_->scan(vb.id, 0, [&](const storage::Document& doc) {
        vb.mutex.assertHeld();  // scan() calls back on this thread, under the lock
        vb.maxCas = std::max(vb.maxCas, doc.cas);
        if (!vb.collections.contains(collectionOf(doc.key))) {
            if (!doc.deleted) {
                dropped.push_back(doc.key);
            }
            return true;
        }
        StoredValue value{doc.value, ItemMeta{doc.cas, doc.seqno, doc.flags, doc.expiry,
                                              doc.datatype, doc.deleted}};
        accountMemory(vb.setCommittedLocked(doc.key, std::move(value)));
        ++items;
        return true;
    });
    vb.highSeqno = vb.persistedSeqno = store_->highSeqno(vb.id);
    for (const auto& key : dropped) {
        StoredValue tombstone;
        tombstone.meta.deleted = true;
        accountMemory(static_cast<std::int64_t>(vb.queueLocked(key, tombstone)));
    }
    itemsLoaded_.fetch_add(items);
}

}  // namespace kvexec::engine
