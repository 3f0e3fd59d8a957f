// The storage layer driven by the executor, as the engine will drive it:
// saves on Writer tasks while compaction runs on an AuxIO task.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>

#include "kvexec/executor_pool.h"
#include "kvexec/manual_executor_pool.h"
#include "kvexec/storage/kv_store.h"
#include "kvexec/task.h"
#include "kvexec/taskable.h"
#include "storage_test_util.h"

namespace kvexec::storage {
namespace {

using test::batchOf;

class Bucket final : public Taskable {
  public:
    const std::string& name() const override { return name_; }
    void onTaskException(const Task& task, std::exception_ptr e) override {
        try {
            std::rethrow_exception(e);
        } catch (const std::exception& ex) {
            ADD_FAILURE() << task.description() << " threw: " << ex.what();
        }
    }

  private:
    std::string name_ = "storage-test";
};

// Counts finished tasks; waits for a number of them with a deadline.
class Finished {
  public:
    void one() {
        std::lock_guard lock(mutex_);
        ++count_;
        cv_.notify_all();
    }
    bool waitFor(int n) {
        std::unique_lock lock(mutex_);
        return cv_.wait_for(lock, std::chrono::seconds(60), [&] { return count_ >= n; });
    }

  private:
    std::mutex mutex_;
    std::condition_variable cv_;
    int count_ = 0;
};

KVStoreConfig taskConfig(const test::TempDir& dir) {
    auto config = test::configFor(dir, 4);
    config.fileCacheCapacity = 2;
    return config;
}

TEST(StorageTasks, CompactionOnAuxIOWhileWritersSave) {
    test::TempDir dir;
    constexpr Seqno kBatches = 150;
    {
        KVStore store(taskConfig(dir));
        for (Vbid vb = 0; vb < 2; ++vb) {
            store.createVBucket(vb);
        }
        PoolConfig poolConfig;
        poolConfig.writers = 2;
        poolConfig.auxIO = 1;
        auto pool = ExecutorPool::create(Backend::Classic, poolConfig);
        Bucket bucket;
        pool->registerTaskable(bucket);
        Finished finished;
        std::atomic<int> writersLeft{2};
        std::atomic<int> compactions{0};
        for (Vbid vb = 0; vb < 2; ++vb) {
            pool->schedule(std::make_shared<LambdaTask>(
                bucket, TaskType::Writer, "flusher", [&, vb, next = Seqno{1}](LambdaTask&) mutable {
                    store.saveDocs(vb, batchOf(next, 2));
                    next += 2;
                    if (next <= 2 * kBatches) {
                        return true;
                    }
                    --writersLeft;
                    finished.one();
                    return false;
                }));
        }
        pool->schedule(
            std::make_shared<LambdaTask>(bucket, TaskType::AuxIO, "compactor", [&](LambdaTask&) {
                // Keep going until the writers are done and we ran a few times.
                const bool writing = writersLeft.load() > 0;
                EXPECT_FALSE(store.compact(static_cast<Vbid>(compactions % 2)).aborted);
                ++compactions;
                if (writing || compactions < 4) {
                    return true;
                }
                finished.one();
                return false;
            }));
        ASSERT_TRUE(finished.waitFor(3)) << "tasks did not finish in time";
        pool->unregisterTaskable(bucket, false);
        EXPECT_GE(compactions.load(), 4);
    }
    KVStore reopened(taskConfig(dir));
    EXPECT_TRUE(reopened.openErrors().empty());
    for (Vbid vb = 0; vb < 2; ++vb) {
        EXPECT_EQ(reopened.highSeqno(vb), 2 * kBatches);
        EXPECT_EQ(reopened.scan(
                      vb, 0, [](const Document& d) { return d.value == test::valueFor(d.seqno); }),
                  2 * kBatches);
        EXPECT_GE(reopened.revision(vb), 2u);
    }
}

// A deterministic interleaving with the Manual pool: every save is followed
// by a compaction, so each save must find the revision the last one made.
TEST(StorageTasks, ManualPoolInterleavesSavesAndCompactions) {
    test::TempDir dir;
    KVStore store(taskConfig(dir));
    store.createVBucket(0);
    ManualExecutorPool pool;
    Bucket bucket;
    pool.registerTaskable(bucket);
    Seqno next = 1;
    auto writer =
        std::make_shared<LambdaTask>(bucket, TaskType::Writer, "flusher", [&](LambdaTask& self) {
            store.saveDocs(0, batchOf(next++, 1));
            self.snooze(kForever);
            return true;
        });
    auto compactor =
        std::make_shared<LambdaTask>(bucket, TaskType::AuxIO, "compactor", [&](LambdaTask& self) {
            store.compact(0);
            self.snooze(kForever);
            return true;
        });
    pool.schedule(writer);
    pool.schedule(compactor);
    for (Revision round = 1; round <= 10; ++round) {
        pool.wake(writer->id());
        ASSERT_EQ(pool.runReady(TaskType::Writer), 1u);
        EXPECT_EQ(store.fileCacheStats().openHandles, 1u);  // the current revision's
        pool.wake(compactor->id());
        ASSERT_EQ(pool.runReady(TaskType::AuxIO), 1u);
        EXPECT_EQ(store.revision(0), round + 1);
        EXPECT_EQ(store.fileCacheStats().openHandles, 0u);  // the old revision's is gone
    }
    pool.unregisterTaskable(bucket, true);
    EXPECT_EQ(store.highSeqno(0), 10u);
    EXPECT_EQ(store.scan(0, 0, [](const Document&) { return true; }), 10u);
}

}  // namespace
}  // namespace kvexec::storage
