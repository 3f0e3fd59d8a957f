// engine_test_support.h: helpers of the engine tests: a result slot that a
// completion callback fills (from any thread), synchronous wrappers for the
// operations that complete inline, and the bucket configuration the tests
// share.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "executor/test_support.h"
#include "kvexec/engine/bucket.h"
#include "storage/storage_test_util.h"

namespace kvexec::engine::test {

using storage::test::TempDir;

// Filled by the callback it hands out (from any thread); counts calls, so a
// test can assert that a completion ran exactly once.
template <class Result>
class Pending : public std::enable_shared_from_this<Pending<Result>> {
  public:
    std::function<void(const Result&)> callback() {
        return [self = this->shared_from_this()](const Result& r) { self->set(r); };
    }
    bool done() const { return calls_.load() > 0; }
    int calls() const { return calls_.load(); }
    Result result() const {
        std::lock_guard lock(mutex_);
        return result_.value();
    }

  private:
    void set(const Result& r) {
        {
            std::lock_guard lock(mutex_);
            result_ = r;
        }
        calls_.fetch_add(1);
    }

    mutable std::mutex mutex_;
    std::optional<Result> result_;
    std::atomic<int> calls_{0};
};

template <class Result>
std::shared_ptr<Pending<Result>> pending() {
    return std::make_shared<Pending<Result>>();
}

inline BucketConfig testConfig(const TempDir& dir) {
    BucketConfig config;
    config.name = "test";
    config.dataDir = dir.path();
    config.numVBuckets = 8;
    config.numShards = 2;
    config.syncMode = storage::SyncMode::None;
    config.expiryPagerInterval = std::chrono::hours(1);
    // Every mutation wakes its flusher at once: the deterministic tests
    // count flusher runs (the batched nudge has its own test).
    config.flushBatchDelay = std::chrono::microseconds::zero();
    return config;
}

// Opens a bucket on a pool that runs its tasks, and waits until its warmup
// has ended; throws std::runtime_error if it is still running at
// kvexec::test's deadline.
inline std::unique_ptr<Bucket> openWarmedUp(ExecutorPool& pool, const BucketConfig& config) {
    auto bucket = Bucket::open(pool, config);
    if (!kvexec::test::waitFor(
            [&] { return bucket->warmupProgress().state != WarmupState::Running; })) {
        throw std::runtime_error("warmup did not complete");
    }
    return bucket;
}

inline StoreRequest setRequest(Vbid vbid, std::string key, std::string value,
                               DurabilityLevel level = DurabilityLevel::None) {
    StoreRequest r;
    r.vbid = vbid;
    r.key = std::move(key);
    r.value = std::move(value);
    r.durability.level = level;
    return r;
}

// For operations that complete inline: the result, or nullopt if the
// callback was not called before the call returned.
inline std::optional<MutationResult> storeNow(Bucket& bucket, StoreRequest request) {
    std::optional<MutationResult> out;
    bucket.store(std::move(request), [&](const MutationResult& r) { out = r; });
    return out;
}

inline GetResult getNow(Bucket& bucket, Vbid vbid, DocKey key) {
    GetResult out{Status::Internal, {}};
    bucket.get(vbid, std::move(key), [&](const GetResult& r) { out = r; });
    return out;
}

}  // namespace kvexec::engine::test
