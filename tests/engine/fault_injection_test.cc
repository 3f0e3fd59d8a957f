// ENOSPC during a flush, through the storage seam (FileOps): the durable
// writes of the failed batch fail with a clear status, nothing that is not
// on disk is acknowledged, and writes succeed again once the fault clears.
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

#include "engine_test_support.h"
#include "kvexec/manual_executor_pool.h"
#include "support/wait.h"

namespace kvexec::engine {
namespace {

using storage::test::FaultyFileOps;
using test::getNow;
using test::pending;
using test::setRequest;
using test::storeNow;

class FaultInjectionTest : public ::testing::Test {
  protected:
    void SetUp() override { open(); }
    void open() {
        config.fileOps = ops;
        bucket = Bucket::open(pool, config);
        pool.runReady(TaskType::Reader);
        ASSERT_EQ(bucket->warmupProgress().state, WarmupState::Complete);
    }

    test::TempDir dir;
    std::shared_ptr<FaultyFileOps> ops = std::make_shared<FaultyFileOps>();
    BucketConfig config = test::testConfig(dir);
    ManualExecutorPool pool;
    std::unique_ptr<Bucket> bucket;
};

TEST_F(FaultInjectionTest, EnospcFailsTheBatchSyncWritesAndWritesResumeOnceItClears) {
    storeNow(*bucket, setRequest(0, "k", "before"));
    pool.runReady(TaskType::Writer);
    ASSERT_EQ(bucket->observeSeqno(0).persistedSeqno, 1u);

    ops->failNext(FaultyFileOps::Op::Pwrite, ENOSPC, 1000);
    auto durable = pending<MutationResult>();
    bucket->store(setRequest(0, "k", "lost", DurabilityLevel::PersistToMajority),
                  durable->callback());
    const auto plain = storeNow(*bucket, setRequest(0, "plain", "kept in memory"));
    pool.runReady(TaskType::Writer);  // the save fails
    EXPECT_FALSE(durable->done());    // told by the completion task, not the flusher
    pool.runReady(TaskType::NonIO);
    ASSERT_EQ(durable->calls(), 1);
    EXPECT_EQ(durable->result().status, Status::Internal);
    EXPECT_EQ(getNow(*bucket, 0, "k").item.value, "before");  // rolled back
    EXPECT_EQ(bucket->observeSeqno(0).persistedSeqno, 1u);
    EXPECT_EQ(bucket->stats().flushFailures, 1u);

    // Still failing: the flusher retries after flushRetryDelay, nothing
    // is acknowledged meanwhile.
    auto second = pending<MutationResult>();
    bucket->store(setRequest(0, "k2", "also lost", DurabilityLevel::PersistToMajority),
                  second->callback());
    pool.runNext(TaskType::Writer);
    pool.runReady(TaskType::NonIO);
    EXPECT_EQ(second->result().status, Status::Internal);

    ops->clear();
    pool.runNext(TaskType::Writer);  // the retry succeeds
    auto after = pending<MutationResult>();
    bucket->store(setRequest(0, "k", "after", DurabilityLevel::PersistToMajority),
                  after->callback());
    while (pool.runReady(TaskType::Writer) + pool.runReady(TaskType::NonIO) != 0) {
    }
    ASSERT_EQ(after->calls(), 1);
    EXPECT_EQ(after->result().status, Status::Success);

    bucket.reset();
    open();
    EXPECT_EQ(getNow(*bucket, 0, "k").item.value, "after");
    EXPECT_EQ(getNow(*bucket, 0, "k2").status, Status::KeyNotFound);
    const auto kept = getNow(*bucket, 0, "plain");
    EXPECT_EQ(kept.item.value, "kept in memory");
    EXPECT_EQ(kept.item.meta.cas, plain->cas);
}

// A save that fails in a run woken for a durable write does not put off
// the vBuckets that run left in the batch window: they are saved at the
// window's end, not after flushRetryDelay.
TEST_F(FaultInjectionTest, AFailedDurableSaveLeavesTheBatchWindowOfTheOthersAsItWas) {
    // Long enough that the woken run below starts inside the window also
    // on a slow sanitizer build (else it saves vb:2 first and vb:2 fails).
    config.flushBatchDelay = std::chrono::seconds(3);
    config.flushRetryDelay = std::chrono::hours(1);
    bucket.reset();
    open();
    const auto windowStart = std::chrono::steady_clock::now();
    storeNow(*bucket, setRequest(2, "plain", "v"));  // shard 0: opens the window
    ops->failNext(FaultyFileOps::Op::Pwrite, ENOSPC, 1);
    auto durable = pending<MutationResult>();
    bucket->store(setRequest(0, "k", "v", DurabilityLevel::PersistToMajority),
                  durable->callback());              // shard 0 too: wakes the flusher
    EXPECT_EQ(pool.runReady(TaskType::Writer), 1u);  // vb:0 only, and its save fails
    if (std::chrono::steady_clock::now() - windowStart >= config.flushBatchDelay) {
        GTEST_SKIP() << "stalled past the window: the run took every vBucket";
    }
    pool.runReady(TaskType::NonIO);
    ASSERT_EQ(durable->calls(), 1);
    EXPECT_EQ(durable->result().status, Status::Internal);
    ASSERT_EQ(bucket->observeSeqno(2).persistedSeqno, 0u) << "vb:2 was left in the window";

    EXPECT_TRUE(kvexec::test::waitUntil(
        [&] {
            pool.runReady(TaskType::Writer);
            return bucket->observeSeqno(2).persistedSeqno == 1;
        },
        std::chrono::seconds(30)))
        << "vb:2 waits for the failed save's retry delay";
    const auto vb0 = bucket->observeSeqno(0);  // retried with them, the disk mended
    EXPECT_EQ(vb0.persistedSeqno, vb0.currentSeqno);
    EXPECT_EQ(getNow(*bucket, 0, "k").status, Status::KeyNotFound);
}

// A stream that starts below memory reads the disk first; when that read
// fails, the memory part cannot follow (seqnos would be missing): the
// stream tells its owner (BackfillFailed) and closes.
TEST_F(FaultInjectionTest, AReplicationStreamWhoseBackfillCannotReadTheDiskEnds) {
    storeNow(*bucket, setRequest(0, "a", "v"));
    storeNow(*bucket, setRequest(0, "b", "v"));
    pool.runReady(TaskType::Writer);
    ASSERT_EQ(bucket->observeSeqno(0).persistedSeqno, 2u);
    storeNow(*bucket, setRequest(0, "c", "v"));  // in memory only

    ops->failNext(FaultyFileOps::Op::Pread, EIO);
    std::vector<StreamEventKind> kinds;
    auto stream = bucket->openReplicationStream(
        {0, 0}, [&](const StreamEvent& e) { kinds.push_back(e.kind); });
    ASSERT_NE(stream, nullptr);
    EXPECT_EQ(pool.runReady(TaskType::AuxIO), 1u);  // the backfill fails
    pool.runReady(TaskType::NonIO);
    EXPECT_EQ(kinds, std::vector<StreamEventKind>{StreamEventKind::BackfillFailed});
    EXPECT_EQ(bucket->stats().streamsOpen, 0u);
    storeNow(*bucket, setRequest(0, "d", "v"));
    pool.runReady(TaskType::NonIO);
    EXPECT_EQ(kinds.size(), 1u) << "a closed stream delivers nothing more";

    // Opened again once the disk reads, a stream gets everything.
    auto again = bucket->openReplicationStream(
        {0, 0}, [&](const StreamEvent& e) { kinds.push_back(e.kind); });
    pool.runReady(TaskType::AuxIO);
    pool.runReady(TaskType::NonIO);
    EXPECT_EQ(std::count(kinds.begin(), kinds.end(), StreamEventKind::Mutation), 4);
}

TEST_F(FaultInjectionTest, FailedFdatasyncAcknowledgesNothing) {
    config.syncMode = storage::SyncMode::Fdatasync;
    bucket.reset();
    open();
    ops->failNext(FaultyFileOps::Op::Fdatasync, EIO, 1000);
    auto durable = pending<MutationResult>();
    bucket->store(setRequest(1, "k", "v", DurabilityLevel::MajorityAndPersistToActive),
                  durable->callback());
    pool.runReady(TaskType::Writer);
    pool.runReady(TaskType::NonIO);
    ASSERT_EQ(durable->calls(), 1);
    EXPECT_NE(durable->result().status, Status::Success);
    ops->clear();
}

// An automatic compaction that fails (the disk refuses its switch) leaves
// the file as it was, and the vBucket's next one waits 10 s instead of
// starting again at every save; then it runs and succeeds.
TEST_F(FaultInjectionTest, AFailedAutomaticCompactionWaitsBeforeTheNextOne) {
    Clock::time_point now{};
    config.steadyTime = [&now] { return now; };
    config.compactionMinFileBytes = 4096;
    config.compactionFragmentationPercent = 50;
    bucket.reset();
    open();
    const auto save = [&](int i) {
        storeNow(*bucket, setRequest(0, "k", std::string(300, 'v') + std::to_string(i)));
        pool.runReady(TaskType::Writer);
    };
    ops->failNext(FaultyFileOps::Op::Rename, ENOSPC);  // the compaction's switch
    int i = 0;
    std::size_t ran = 0;
    while (ran == 0 && i < 100) {
        save(i++);
        ran = pool.runReady(TaskType::AuxIO);
    }
    ASSERT_EQ(ran, 1u) << "no compaction after " << i << " saves";
    EXPECT_EQ(bucket->stats().compactions, 0u) << "the switch should have failed";
    EXPECT_EQ(ops->calls(FaultyFileOps::Op::Rename), 1u);
    for (int more = 0; more < 5; ++more) {
        save(i++);
        EXPECT_EQ(pool.runReady(TaskType::AuxIO), 0u) << "compacting again at once";
    }
    now += std::chrono::seconds(11);
    save(i++);
    EXPECT_EQ(pool.runReady(TaskType::AuxIO), 1u);
    EXPECT_EQ(bucket->stats().autoCompactions, 1u);
    EXPECT_EQ(getNow(*bucket, 0, "k").item.value, std::string(300, 'v') + std::to_string(i - 1));
}

}  // namespace
}  // namespace kvexec::engine
