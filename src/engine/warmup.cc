// Warmup: the first Reader task opens the KVStore (which reads every
// vBucket file's index), then one Reader task per shard loads its vBuckets
// into memory in parallel. The last shard to finish publishes
// WarmupState::Complete (release), which is what admit() checks: until
// then every data operation gets TempFail.
#include <iostream>

#include "engine/ep_bucket.h"

namespace kvexec::engine {

namespace {

void failWarmup(std::atomic<WarmupState>& state, std::mutex& mutex, std::string& error,
                const std::string& why) {
    {
        std::lock_guard lock(mutex);
        if (error.empty()) {
            error = why;
        }
    }
    state.store(WarmupState::Failed, std::memory_order_release);
    std::cerr << "kvexec engine: warmup failed: " << why << '\n';
}

}  // namespace

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
            failWarmup(warmupState_, warmupErrorMutex_, warmupError_, errors.front().what());
            return false;
        }
    } catch (const std::exception& error) {
        failWarmup(warmupState_, warmupErrorMutex_, warmupError_, error.what());
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
            loadVBucket(*vbuckets_[v]);
            vbucketsLoaded_.fetch_add(1);
        }
    } catch (const std::exception& error) {
        failWarmup(warmupState_, warmupErrorMutex_, warmupError_, error.what());
        return false;
    }
    if (shardsLoading_.fetch_sub(1) == 1) {
        auto expected = WarmupState::Running;
        warmupState_.compare_exchange_strong(expected, WarmupState::Complete,
                                             std::memory_order_release);
    }
    return false;
}

// Nobody else touches the vBucket before warmup completes; the lock is
// taken for the rule's sake (and for TSan).
void BucketImpl::loadVBucket(VBucket& vb) {
    if (!store_->exists(vb.id)) {
        return;
    }
    std::lock_guard lock(vb.mutex);
    std::uint64_t items = 0;
    store_->scan(vb.id, 0, [&](const storage::Document& doc) {
        StoredValue value{doc.value, ItemMeta{doc.cas, doc.seqno, doc.flags, doc.expiry,
                                              doc.datatype, doc.deleted}};
        vb.maxCas = std::max(vb.maxCas, doc.cas);
        accountMemory(vb.setCommittedLocked(doc.key, std::move(value)));
        ++items;
        return true;
    });
    vb.highSeqno = vb.persistedSeqno = store_->highSeqno(vb.id);
    itemsLoaded_.fetch_add(items);
}

}  // namespace kvexec::engine
