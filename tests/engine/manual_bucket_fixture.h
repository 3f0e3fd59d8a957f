// manual_bucket_fixture.h: the fixture of the engine tests that drive a
// Bucket step by step on the Manual backend, with a clock of their own
// (`now`, seconds since the epoch, for expiry and locks).
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <string_view>

#include "engine_test_support.h"
#include "kvexec/engine/bucket.h"
#include "kvexec/manual_executor_pool.h"

namespace kvexec::engine {

class ManualBucketTest : public ::testing::Test {
  protected:
    void SetUp() override { open(); }
    void TearDown() override { bucket.reset(); }

    void open() {
        config.unixTime = [this] { return now.load(); };
        bucket = Bucket::open(pool, config);
        pool.runReady(TaskType::Reader);
        ASSERT_EQ(bucket->warmupProgress().state, WarmupState::Complete)
            << bucket->warmupProgress().error;
    }
    void reopen() {
        bucket.reset();
        open();
    }
    // Runs flushers and NonIO tasks until nothing is due.
    void settle() {
        while (pool.runReady(TaskType::Writer) + pool.runReady(TaskType::NonIO) +
                   pool.runReady(TaskType::AuxIO) !=
               0) {
        }
    }
    // Opens a second bucket (on `crashPool`) on a copy of the data
    // directory as it is on disk now, while this one runs: what a crash at
    // this moment leaves. `of`: another bucket of the test's (its config).
    std::unique_ptr<Bucket> openCrashCopy(const test::TempDir& copy) {
        return openCrashCopy(copy, config);
    }
    std::unique_ptr<Bucket> openCrashCopy(const test::TempDir& copy, const BucketConfig& of) {
        std::filesystem::copy(of.dataDir, copy.path(),
                              std::filesystem::copy_options::recursive |
                                  std::filesystem::copy_options::overwrite_existing);
        auto copyConfig = of;
        copyConfig.dataDir = copy.path();
        auto crashed = Bucket::open(crashPool, copyConfig);
        crashPool.runReady(TaskType::Reader);
        EXPECT_EQ(crashed->warmupProgress().state, WarmupState::Complete)
            << crashed->warmupProgress().error;
        return crashed;
    }
    const TaskInfo* task(std::string_view description, PoolStats& stats) {
        for (const auto& t : stats.tasks) {
            if (t.description == description) {
                return &t;
            }
        }
        return nullptr;
    }

    test::TempDir dir;
    BucketConfig config = test::testConfig(dir);
    std::atomic<std::uint32_t> now{1'700'000'000};
    ManualExecutorPool pool;
    std::unique_ptr<Bucket> bucket;
    ManualExecutorPool crashPool;  // openCrashCopy's
};

}  // namespace kvexec::engine
