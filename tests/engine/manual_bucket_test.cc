// The engine driven step by step on the Manual backend: the order of
// flush, commit, timeout and stream delivery is the test's.
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "engine_test_support.h"
#include "executor/test_support.h"
#include "kvexec/manual_executor_pool.h"
#include "kvexec/storage/kv_store.h"
#include "manual_bucket_fixture.h"
#include "storage/crc32c.h"

namespace kvexec::engine {
namespace {

using namespace std::chrono_literals;
using test::getNow;
using test::pending;
using test::setRequest;
using test::storeNow;

TEST_F(ManualBucketTest, OperationsBeforeWarmupCompletesGetTempFail) {
    bucket.reset();
    bucket = Bucket::open(pool, config);  // warmup not run yet
    EXPECT_EQ(storeNow(*bucket, setRequest(0, "k", "v"))->status, Status::TempFail);
    EXPECT_EQ(getNow(*bucket, 0, "k").status, Status::TempFail);
    EXPECT_EQ(bucket->observeSeqno(0).status, Status::TempFail);
    bool rolledBack = false;
    EXPECT_EQ(bucket->rollbackReplica(0, 0, [&](Status) { rolledBack = true; }), Status::TempFail);
    EXPECT_EQ(bucket->warmupProgress().state, WarmupState::Running);
    pool.runReady(TaskType::Reader);
    EXPECT_EQ(storeNow(*bucket, setRequest(0, "k", "v"))->status, Status::Success);
    settle();
    EXPECT_FALSE(rolledBack);
}

TEST_F(ManualBucketTest, SetThenGetReturnsValueMetadataCasAndToken) {
    auto request = setRequest(3, "key", "value");
    request.flags = 0xcafe;
    request.datatype = 1;
    const auto stored = storeNow(*bucket, request);
    ASSERT_TRUE(stored);
    ASSERT_EQ(stored->status, Status::Success);
    EXPECT_NE(stored->cas, 0u);
    EXPECT_EQ(stored->token.seqno, 1u);
    EXPECT_EQ(stored->token.vbucketUuid, bucket->observeSeqno(3).vbucketUuid);
    const auto got = getNow(*bucket, 3, "key");
    ASSERT_EQ(got.status, Status::Success);
    EXPECT_EQ(got.item.value, "value");
    EXPECT_EQ(got.item.meta.flags, 0xcafeu);
    EXPECT_EQ(got.item.meta.datatype, 1);
    EXPECT_EQ(got.item.meta.cas, stored->cas);
}

TEST_F(ManualBucketTest, StatusCodesFollowMemcachedRules) {
    EXPECT_EQ(getNow(*bucket, 0, "nope").status, Status::KeyNotFound);
    EXPECT_EQ(getNow(*bucket, 99, "k").status, Status::NotMyVbucket);
    EXPECT_EQ(getNow(*bucket, 0, "").status, Status::Invalid);
    EXPECT_EQ(getNow(*bucket, 0, std::string(251, 'k')).status, Status::Invalid);

    auto add = setRequest(0, "k", "v1");
    add.operation = StoreOperation::Add;
    const auto first = storeNow(*bucket, add);
    EXPECT_EQ(first->status, Status::Success);
    EXPECT_EQ(storeNow(*bucket, add)->status, Status::KeyExists);

    auto replace = setRequest(0, "missing", "v");
    replace.operation = StoreOperation::Replace;
    EXPECT_EQ(storeNow(*bucket, replace)->status, Status::KeyNotFound);

    auto casSet = setRequest(0, "k", "v2");
    casSet.cas = first->cas + 1;
    EXPECT_EQ(storeNow(*bucket, casSet)->status, Status::KeyExists);  // CAS mismatch
    casSet.cas = first->cas;
    EXPECT_EQ(storeNow(*bucket, casSet)->status, Status::Success);

    auto append = setRequest(0, "missing", "x");
    append.operation = StoreOperation::Append;
    EXPECT_EQ(storeNow(*bucket, append)->status, Status::NotStored);

    config.maxItemSize = 4;
    reopen();
    EXPECT_EQ(storeNow(*bucket, setRequest(0, "big", "12345"))->status, Status::TooBig);
}

TEST_F(ManualBucketTest, AppendPrependKeepFlagsAndChangeCas) {
    auto set = setRequest(1, "k", "mid");
    set.flags = 7;
    const auto first = storeNow(*bucket, set);
    auto append = setRequest(1, "k", "-end");
    append.operation = StoreOperation::Append;
    auto prepend = setRequest(1, "k", "start-");
    prepend.operation = StoreOperation::Prepend;
    EXPECT_EQ(storeNow(*bucket, append)->status, Status::Success);
    const auto last = storeNow(*bucket, prepend);
    const auto got = getNow(*bucket, 1, "k");
    EXPECT_EQ(got.item.value, "start-mid-end");
    EXPECT_EQ(got.item.meta.flags, 7u);
    EXPECT_NE(last->cas, first->cas);
}

TEST_F(ManualBucketTest, IncrDecrWithInitialWrapAndClamp) {
    ArithmeticRequest incr;
    incr.vbid = 2;
    incr.key = "counter";
    incr.delta = 5;
    std::optional<ArithmeticResult> out;
    auto run = [&](const ArithmeticRequest& r) {
        out.reset();
        bucket->arithmetic(r, [&](const ArithmeticResult& a) { out = a; });
        return *out;
    };
    EXPECT_EQ(run(incr).status, Status::KeyNotFound);
    incr.createIfMissing = true;
    incr.initial = 10;
    EXPECT_EQ(run(incr).value, 10u);  // created with the initial value
    EXPECT_EQ(run(incr).value, 15u);
    auto decr = incr;
    decr.increment = false;
    decr.delta = 100;
    EXPECT_EQ(run(decr).value, 0u);  // decr stops at 0
    storeNow(*bucket, setRequest(2, "counter", "18446744073709551615"));
    incr.delta = 2;
    EXPECT_EQ(run(incr).value, 1u);  // incr wraps
    storeNow(*bucket, setRequest(2, "text", "abc"));
    incr.key = "text";
    EXPECT_EQ(run(incr).status, Status::DeltaBadValue);
    EXPECT_EQ(getNow(*bucket, 2, "counter").item.value, "1");
}

TEST_F(ManualBucketTest, RemoveLeavesATombstoneThatGetMetaReports) {
    storeNow(*bucket, setRequest(0, "k", "v"));
    std::optional<MutationResult> removed;
    bucket->remove(RemoveRequest{0, "k", 0, {}}, [&](const MutationResult& r) { removed = r; });
    ASSERT_EQ(removed->status, Status::Success);
    EXPECT_EQ(getNow(*bucket, 0, "k").status, Status::KeyNotFound);
    GetResult meta;
    bucket->getMeta(0, "k", [&](const GetResult& r) { meta = r; });
    ASSERT_EQ(meta.status, Status::Success);
    EXPECT_TRUE(meta.item.meta.deleted);
    EXPECT_EQ(meta.item.meta.cas, removed->cas);
    bucket->remove(RemoveRequest{0, "k", 0, {}}, [&](const MutationResult& r) { removed = r; });
    EXPECT_EQ(removed->status, Status::KeyNotFound);
}

TEST_F(ManualBucketTest, ExpiredDocumentIsGoneOnAccessAndThePagerRemovesOthers) {
    auto set = setRequest(0, "lazy", "v");
    set.expiry = now + 10;
    storeNow(*bucket, set);
    set.key = "paged";
    storeNow(*bucket, set);
    EXPECT_EQ(getNow(*bucket, 0, "lazy").status, Status::Success);
    now += 11;
    EXPECT_EQ(getNow(*bucket, 0, "lazy").status, Status::KeyNotFound);
    EXPECT_EQ(bucket->stats().expired, 1u);
    EXPECT_NE(pool.runNext(TaskType::NonIO), 0u);  // the pager: the only task with a wake time
    EXPECT_EQ(bucket->stats().expired, 2u);
    EXPECT_EQ(bucket->stats().currItems, 0u);
    // touch sets a new expiry
    set.key = "touched";
    set.expiry = now + 10;
    storeNow(*bucket, set);
    GetResult touched;
    bucket->touch(0, "touched", now + 100, [&](const GetResult& r) { touched = r; });
    EXPECT_EQ(touched.status, Status::Success);
    now += 50;
    EXPECT_EQ(getNow(*bucket, 0, "touched").status, Status::Success);
}

TEST_F(ManualBucketTest, TouchReturnsTheDocumentsFlagsAndNewExpiry) {
    auto set = setRequest(0, "k", "value");
    set.flags = 0xbeef;
    set.datatype = 1;
    storeNow(*bucket, set);
    GetResult touched;
    bucket->touch(0, "k", now + 100, [&](const GetResult& r) { touched = r; });
    ASSERT_EQ(touched.status, Status::Success);
    EXPECT_EQ(touched.item.value, "value");
    EXPECT_EQ(touched.item.meta.flags, 0xbeefu);
    EXPECT_EQ(touched.item.meta.datatype, 1u);
    EXPECT_EQ(touched.item.meta.expiry, now + 100);
    EXPECT_EQ(touched.item.meta.cas, getNow(*bucket, 0, "k").item.meta.cas);
}

TEST_F(ManualBucketTest, ListKeysReportsLiveDocumentsUpToTheLimit) {
    for (const char* key : {"a", "b", "c", "gone", "expiring"}) {
        auto set = setRequest(2, key, std::string(key) + "!");
        if (std::string_view(key) == "expiring") {
            set.expiry = now + 10;
        }
        storeNow(*bucket, set);
    }
    storeNow(*bucket, setRequest(3, "elsewhere", "v"));
    RemoveRequest remove;
    remove.vbid = 2;
    remove.key = "gone";
    bucket->remove(remove, [](const MutationResult&) {});
    now += 11;  // "expiring" expires; nothing removes it yet

    auto listed = bucket->listKeys(2, 100);
    std::vector<std::string> keys;
    for (const auto& summary : listed) {
        keys.push_back(summary.key);
        EXPECT_EQ(summary.valueSize, summary.key.size() + 1);
        EXPECT_NE(summary.meta.cas, 0u);
    }
    std::sort(keys.begin(), keys.end());
    EXPECT_EQ(keys, (std::vector<std::string>{"a", "b", "c"}));
    EXPECT_EQ(bucket->listKeys(2, 2).size(), 2u);
    EXPECT_TRUE(bucket->listKeys(2, 0).empty());
    EXPECT_TRUE(bucket->listKeys(9999, 10).empty());  // no such vBucket
    EXPECT_EQ(bucket->stats().expired, 0u);           // listing expired nothing
}

TEST_F(ManualBucketTest, FirstDirtyItemWakesTheShardFlusherAndOneRunPersistsTheShard) {
    auto stats = pool.stats();
    EXPECT_EQ(stats.byType[static_cast<int>(TaskType::Writer)].ready, 0u);
    storeNow(*bucket, setRequest(0, "a", "1"));  // shard 0
    storeNow(*bucket, setRequest(2, "b", "2"));  // shard 0 too
    storeNow(*bucket, setRequest(0, "c", "3"));
    stats = pool.stats();
    EXPECT_EQ(stats.byType[static_cast<int>(TaskType::Writer)].ready, 1u);
    EXPECT_EQ(bucket->observeSeqno(0).persistedSeqno, 0u);
    EXPECT_EQ(pool.runReady(TaskType::Writer), 1u);
    EXPECT_EQ(bucket->observeSeqno(0).persistedSeqno, 2u);
    EXPECT_EQ(bucket->observeSeqno(2).persistedSeqno, 1u);
    EXPECT_EQ(bucket->stats().dirtyItems, 0u);
}

TEST_F(ManualBucketTest, PlainMutationsShareADeferredFlushAndADurableWriteWakesItAtOnce) {
    config.flushBatchDelay = std::chrono::seconds(10);  // only runNext ends a window here
    reopen();
    storeNow(*bucket, setRequest(0, "a", "1"));      // shard 0
    storeNow(*bucket, setRequest(2, "b", "2"));      // shard 0 too
    EXPECT_EQ(pool.runReady(TaskType::Writer), 0u);  // deferred, not due yet
    auto durable = pending<MutationResult>();
    bucket->store(setRequest(0, "c", "3", DurabilityLevel::PersistToMajority), durable->callback());
    // Woken at once, the run saves the vBucket the durable write waits on
    // (with the plain mutation before it); vb:2 keeps its window.
    EXPECT_EQ(pool.runReady(TaskType::Writer), 1u);
    EXPECT_EQ(bucket->observeSeqno(0).persistedSeqno, 2u);
    EXPECT_EQ(bucket->observeSeqno(2).persistedSeqno, 0u);
    settle();
    ASSERT_EQ(durable->calls(), 1);
    EXPECT_EQ(durable->result().status, Status::Success);

    // The commit (seqno 3) waits in the window too, and the vBucket's next
    // durable write carries it: one save for both.
    EXPECT_EQ(bucket->observeSeqno(0).currentSeqno, 3u);
    EXPECT_EQ(bucket->observeSeqno(0).persistedSeqno, 2u);
    const auto batchesBefore = bucket->stats().flusherBatches;
    auto second = pending<MutationResult>();
    bucket->store(setRequest(0, "e", "5", DurabilityLevel::PersistToMajority), second->callback());
    EXPECT_EQ(pool.runReady(TaskType::Writer), 1u);
    EXPECT_EQ(bucket->observeSeqno(0).persistedSeqno, 4u);
    EXPECT_EQ(bucket->stats().flusherBatches, batchesBefore + 1);
    EXPECT_EQ(bucket->observeSeqno(2).persistedSeqno, 0u);
    EXPECT_NE(pool.runNext(TaskType::Writer), 0u);  // the window's end saves the rest
    EXPECT_EQ(bucket->observeSeqno(2).persistedSeqno, 1u);
    settle();
    ASSERT_EQ(second->calls(), 1);
    EXPECT_EQ(second->result().status, Status::Success);

    storeNow(*bucket, setRequest(2, "d", "4"));
    EXPECT_EQ(pool.runReady(TaskType::Writer), 0u);
    EXPECT_NE(pool.runNext(TaskType::Writer), 0u);  // the deferred run saves it
    EXPECT_EQ(bucket->observeSeqno(2).persistedSeqno, 2u);
    EXPECT_EQ(bucket->observeSeqno(0).persistedSeqno, 5u);  // and the second commit
}

TEST_F(ManualBucketTest, FlusherSavesTheLatestVersionOfEachKeyOnce) {
    for (int i = 0; i < 5; ++i) {
        storeNow(*bucket, setRequest(1, "k", storage::test::keyOf(i, "v")));
    }
    settle();
    const auto stats = bucket->stats();
    const auto& batch = stats.histograms[5];
    ASSERT_EQ(batch.name, "flusher_batch_size");
    EXPECT_EQ(batch.summary.count, 1u);
    EXPECT_EQ(batch.summary.max.count(), 1);  // one document for five versions
    reopen();
    EXPECT_EQ(getNow(*bucket, 1, "k").item.value, "v4");
    EXPECT_EQ(bucket->observeSeqno(1).currentSeqno, 5u);
}

// A FileOps that calls a hook once, during the first pwrite: a mutation
// that lands while the flusher drains.
class HookFileOps final : public storage::FileOps {
  public:
    std::function<void()> hook;
    int open(const std::string& p, int f, mode_t m) override { return real->open(p, f, m); }
    int close(int fd) override { return real->close(fd); }
    ssize_t pread(int fd, void* b, std::size_t n, off_t o) override {
        return real->pread(fd, b, n, o);
    }
    ssize_t pwrite(int fd, const void* b, std::size_t n, off_t o) override {
        if (auto h = std::exchange(hook, nullptr)) {
            h();
        }
        return real->pwrite(fd, b, n, o);
    }
    int fdatasync(int fd) override { return real->fdatasync(fd); }
    int ftruncate(int fd, off_t l) override { return real->ftruncate(fd, l); }
    off_t size(int fd) override { return real->size(fd); }
    int rename(const std::string& a, const std::string& b) override { return real->rename(a, b); }
    int unlink(const std::string& p) override { return real->unlink(p); }
    int syncDirectory(const std::string& p) override { return real->syncDirectory(p); }
    std::shared_ptr<storage::FileOps> real = storage::posixFileOps();
};

TEST_F(ManualBucketTest, WakeDuringTheDrainIsNotLost) {
    auto ops = std::make_shared<HookFileOps>();
    config.fileOps = ops;
    reopen();
    storeNow(*bucket, setRequest(0, "first", "1"));
    ops->hook = [this] { storeNow(*bucket, setRequest(2, "during", "2")); };
    pool.runReady(TaskType::Writer);  // runs again: the wake landed during its run
    EXPECT_EQ(bucket->observeSeqno(2).persistedSeqno, 1u);
    EXPECT_EQ(bucket->stats().dirtyItems, 0u);
}

// Durable writes that keep waking the flusher (each lands during the save
// of the one before) do not keep a plain mutation of another vBucket
// waiting past its batch window: once the window has ended, a woken run
// saves it too.
TEST_F(ManualBucketTest, DurableWritesWithoutEndDoNotHoldOffTheBatchWindow) {
    auto ops = std::make_shared<HookFileOps>();
    config.fileOps = ops;
    config.flushBatchDelay = 20ms;
    reopen();
    storeNow(*bucket, setRequest(2, "plain", "1"));  // shard 0: opens the window
    const auto giveUp = std::chrono::steady_clock::now() + 2s;
    std::vector<std::shared_ptr<test::Pending<MutationResult>>> durables;
    bool savedAmidDurableWrites = false;
    std::function<void()> nextDurableWrite = [&] {
        savedAmidDurableWrites = bucket->observeSeqno(2).persistedSeqno == 1;
        if (savedAmidDurableWrites || std::chrono::steady_clock::now() > giveUp) {
            return;  // the flusher stops being woken
        }
        durables.push_back(pending<MutationResult>());
        bucket->store(setRequest(0, storage::test::keyOf(durables.size(), "k"), "v",
                                 DurabilityLevel::PersistToMajority),
                      durables.back()->callback());
        ops->hook = nextDurableWrite;  // during the next save
    };
    nextDurableWrite();
    pool.runReady(TaskType::Writer);
    EXPECT_TRUE(savedAmidDurableWrites)
        << "vb:2 waited while " << durables.size() << " durable writes were saved";
    settle();
    for (const auto& durable : durables) {
        ASSERT_EQ(durable->calls(), 1);
        EXPECT_EQ(durable->result().status, Status::Success);
    }
}

TEST_F(ManualBucketTest, PersistToMajorityCommitsAfterPersistenceOnTheCompletionTask) {
    storeNow(*bucket, setRequest(0, "k", "old"));
    settle();
    auto done = pending<MutationResult>();
    bucket->store(setRequest(0, "k", "new", DurabilityLevel::PersistToMajority), done->callback());
    EXPECT_FALSE(done->done());
    // While pending: readers see the committed value, writers are refused.
    EXPECT_EQ(getNow(*bucket, 0, "k").item.value, "old");
    EXPECT_EQ(storeNow(*bucket, setRequest(0, "k", "other"))->status, Status::SyncWriteInProgress);
    EXPECT_EQ(pool.runReady(TaskType::NonIO), 0u);  // nothing to complete before the flush
    EXPECT_EQ(pool.runReady(TaskType::Writer), 1u);
    EXPECT_FALSE(done->done());  // the flusher does not complete it itself
    EXPECT_EQ(pool.runReady(TaskType::NonIO), 1u);
    ASSERT_EQ(done->calls(), 1);
    const auto result = done->result();
    EXPECT_EQ(result.status, Status::Success);
    // Seqno 2 is the prepare, 3 the commit: the token names the commit,
    // which carries the prepare's CAS.
    EXPECT_EQ(result.token.seqno, 3u);
    const auto got = getNow(*bucket, 0, "k");
    EXPECT_EQ(got.item.value, "new");
    EXPECT_EQ(got.item.meta.cas, result.cas);
    EXPECT_EQ(got.item.meta.seqno, 3u);
    EXPECT_EQ(bucket->stats().histograms[2].summary.count, 1u);  // persist_to_majority
}

TEST_F(ManualBucketTest, MajorityCommitsWithoutWaitingForTheFlusher) {
    auto done = pending<MutationResult>();
    bucket->store(setRequest(0, "k", "v", DurabilityLevel::Majority), done->callback());
    EXPECT_FALSE(done->done());
    EXPECT_EQ(pool.runReady(TaskType::NonIO), 1u);
    EXPECT_EQ(done->result().status, Status::Success);
    EXPECT_EQ(bucket->observeSeqno(0).persistedSeqno, 0u);
    EXPECT_EQ(getNow(*bucket, 0, "k").item.value, "v");
}

TEST_F(ManualBucketTest, CompletionTaskRunsOncePerFlushedBatch) {
    std::vector<std::shared_ptr<test::Pending<MutationResult>>> writes;
    for (int i = 0; i < 10; ++i) {
        writes.push_back(pending<MutationResult>());
        bucket->store(setRequest(i % 2 == 0 ? 0 : 2, storage::test::keyOf(i, "k"), "v",
                                 DurabilityLevel::PersistToMajority),
                      writes.back()->callback());
    }
    pool.runReady(TaskType::Writer);
    EXPECT_EQ(pool.runReady(TaskType::NonIO), 1u);
    for (const auto& w : writes) {
        EXPECT_EQ(w->calls(), 1);
        EXPECT_EQ(w->result().status, Status::Success);
    }
}

TEST_F(ManualBucketTest, TimeoutTaskIsArmedToTheEarliestDeadlineAndAbortsAsAmbiguous) {
    storeNow(*bucket, setRequest(0, "b", "committed"));
    settle();
    auto late = pending<MutationResult>();
    auto early = pending<MutationResult>();
    auto lateReq = setRequest(0, "a", "late", DurabilityLevel::PersistToMajority);
    lateReq.durability.timeout = 10s;
    auto earlyReq = setRequest(0, "b", "early", DurabilityLevel::PersistToMajority);
    earlyReq.durability.timeout = 1ms;
    const auto before = Clock::now();
    bucket->store(lateReq, late->callback());
    bucket->store(earlyReq, early->callback());
    auto stats = pool.stats();
    TaskId timeoutTask = 0;
    for (const auto& t : stats.tasks) {
        if (t.description == "VBucketSyncWriteTimeoutTask" && t.wakeTime < before + 1s) {
            timeoutTask = t.id;
            EXPECT_LE(t.wakeTime, Clock::now() + 1ms);
        }
    }
    ASSERT_NE(timeoutTask, 0u) << "no timeout task armed to the earliest deadline";
    ASSERT_TRUE(kvexec::test::waitFor([&] { return Clock::now() > before + 2ms; }));
    pool.runReady(TaskType::NonIO);
    ASSERT_EQ(early->calls(), 1);
    EXPECT_EQ(early->result().status, Status::SyncWriteAmbiguous);
    EXPECT_FALSE(late->done());
    EXPECT_EQ(getNow(*bucket, 0, "b").item.value, "committed");
    // The other write still completes; the aborted one never reaches disk
    // as the final value.
    settle();
    EXPECT_EQ(late->result().status, Status::Success);
    reopen();
    EXPECT_EQ(getNow(*bucket, 0, "b").item.value, "committed");
    EXPECT_EQ(getNow(*bucket, 0, "a").item.value, "late");
}

TEST_F(ManualBucketTest, MemoryQuotaGivesTempFailNotAnAbort) {
    config.memoryQuota = 4096;
    reopen();
    int stored = 0;
    Status last = Status::Success;
    for (int i = 0; i < 100 && last == Status::Success; ++i) {
        last = storeNow(*bucket, setRequest(0, storage::test::keyOf(i, "k"), std::string(100, 'x')))
                   ->status;
        stored += last == Status::Success ? 1 : 0;
    }
    EXPECT_EQ(last, Status::TempFail);
    EXPECT_GT(stored, 0);
    EXPECT_GT(bucket->stats().tempFailures, 0u);
    settle();  // persisting frees the dirty copies
    EXPECT_EQ(storeNow(*bucket, setRequest(0, "again", std::string(100, 'x')))->status,
              Status::Success);
}

TEST_F(ManualBucketTest, ItemLargerThanTheWholeQuotaGetsNoMemory) {
    config.memoryQuota = 1024;
    reopen();
    EXPECT_EQ(storeNow(*bucket, setRequest(0, "k", std::string(600, 'x')))->status,
              Status::NoMemory);
}

TEST_F(ManualBucketTest, CompactionRunsOnAuxIOAndKeepsLiveDocuments) {
    for (int i = 0; i < 20; ++i) {
        storeNow(*bucket, setRequest(0, "k", storage::test::keyOf(i, "v")));
        settle();  // one batch each: 20 versions in the file
    }
    bucket->remove(RemoveRequest{0, "k", 0, {}}, [](const MutationResult&) {});
    storeNow(*bucket, setRequest(0, "live", "v"));
    settle();
    const auto before = std::filesystem::file_size(dir.path() / "0.kv.1");
    Status compacted = Status::Internal;
    bucket->compact(0, [&](Status s) { compacted = s; });
    EXPECT_EQ(compacted, Status::Internal);  // not yet: it is an AuxIO task
    EXPECT_EQ(pool.runReady(TaskType::Writer), 0u);
    EXPECT_EQ(pool.runReady(TaskType::AuxIO), 1u);
    EXPECT_EQ(compacted, Status::Success);
    EXPECT_LT(std::filesystem::file_size(dir.path() / "0.kv.2"), before);
    // Tombstones up to the persisted seqno may be gone: the purge seqno says
    // so to streams (kept across a restart).
    EXPECT_EQ(bucket->observeSeqno(0).purgeSeqno, 22u);
    reopen();
    EXPECT_EQ(getNow(*bucket, 0, "live").item.value, "v");
    EXPECT_EQ(getNow(*bucket, 0, "k").status, Status::KeyNotFound);
    EXPECT_EQ(bucket->observeSeqno(0).purgeSeqno, 22u);
}

// A file that is mostly old versions of its keys is compacted by itself,
// on AuxIO after a save, once: the live documents and every tombstone
// stay (no purge seqno: a replica behind must not have to start again).
TEST_F(ManualBucketTest, AFileMostlyOfOldVersionsIsCompactedByItselfKeepingTombstones) {
    config.compactionMinFileBytes = 8192;
    config.compactionFragmentationPercent = 50;
    reopen();
    storeNow(*bucket, setRequest(0, "gone", "x"));
    bucket->remove(RemoveRequest{0, "gone", 0, {}}, [](const MutationResult&) {});
    settle();
    const std::string value(200, 'v');
    int saves = 0;
    while (bucket->stats().autoCompactions == 0 && saves < 200) {
        storeNow(*bucket, setRequest(0, "k", value + std::to_string(saves++)));
        settle();  // one save each: the file grows by a version of "k"
    }
    const auto stats = bucket->stats();
    ASSERT_EQ(stats.autoCompactions, 1u) << "after " << saves << " saves";
    EXPECT_EQ(stats.compactions, 1u);
    EXPECT_GE(saves, 20) << "compacted before half the file was stale";
    EXPECT_GT(stats.compactionBytesReclaimed, 4096u);
    EXPECT_FALSE(std::filesystem::exists(dir.path() / "0.kv.1"));
    EXPECT_LT(std::filesystem::file_size(dir.path() / "0.kv.2"), 4096u);
    EXPECT_EQ(bucket->observeSeqno(0).purgeSeqno, 0u);
    reopen();
    EXPECT_EQ(getNow(*bucket, 0, "k").item.value, value + std::to_string(saves - 1));
    auto tombstone = pending<GetResult>();
    bucket->getIncludingDeleted(0, DocKey{"gone"}, tombstone->callback());
    ASSERT_TRUE(tombstone->done());
    EXPECT_EQ(tombstone->result().status, Status::Success);
    EXPECT_TRUE(tombstone->result().item.meta.deleted);
}

// Off (0), or below the minimum size, a file is never compacted by itself.
TEST_F(ManualBucketTest, AutomaticCompactionOffOrBelowTheMinimumLeavesTheFile) {
    config.compactionMinFileBytes = 8192;
    config.compactionFragmentationPercent = 0;
    reopen();
    for (int i = 0; i < 100; ++i) {
        storeNow(*bucket, setRequest(0, "k", std::string(200, 'v')));
        settle();
    }
    EXPECT_GT(std::filesystem::file_size(dir.path() / "0.kv.1"), 8192u);
    config.compactionFragmentationPercent = 50;
    config.compactionMinFileBytes = std::uint64_t{1} << 30;
    reopen();
    storeNow(*bucket, setRequest(0, "k", "last"));
    settle();
    EXPECT_EQ(bucket->stats().compactions, 0u);
    EXPECT_TRUE(std::filesystem::exists(dir.path() / "0.kv.1"));
}

TEST_F(ManualBucketTest, WarmupRestoresValuesCasSeqnosAndTombstones) {
    const auto a = storeNow(*bucket, setRequest(1, "a", "va"));
    storeNow(*bucket, setRequest(1, "gone", "x"));
    bucket->remove(RemoveRequest{1, "gone", 0, {}}, [](const MutationResult&) {});
    settle();
    reopen();
    const auto progress = bucket->warmupProgress();
    EXPECT_EQ(progress.vbucketsLoaded, config.numVBuckets);
    EXPECT_EQ(progress.itemsLoaded, 2u);
    const auto got = getNow(*bucket, 1, "a");
    EXPECT_EQ(got.item.value, "va");
    EXPECT_EQ(got.item.meta.cas, a->cas);
    EXPECT_EQ(getNow(*bucket, 1, "gone").status, Status::KeyNotFound);
    EXPECT_EQ(bucket->observeSeqno(1).currentSeqno, 3u);
    const auto next = storeNow(*bucket, setRequest(1, "b", "vb"));
    EXPECT_EQ(next->token.seqno, 4u);
    EXPECT_GT(next->cas, a->cas);
}

TEST_F(ManualBucketTest, DataFileOfFormatVersionOneFailsWarmupWithAnErrorNamingIt) {
    storeNow(*bucket, setRequest(0, "k", "v"));
    settle();
    bucket.reset();
    const auto path = dir.path() / "0.kv.1";
    auto bytes = storage::test::readFile(path);
    bytes[8] = 1;  // the header's version field
    const std::uint32_t crc = storage::crc32c(bytes.data() + 4, 28);
    for (int i = 0; i < 4; ++i) {
        bytes[static_cast<std::size_t>(i)] = static_cast<char>(crc >> (8 * i));
    }
    storage::test::writeFile(path, bytes);
    bucket = Bucket::open(pool, config);
    pool.runReady(TaskType::Reader);
    const auto progress = bucket->warmupProgress();
    EXPECT_EQ(progress.state, WarmupState::Failed);
    EXPECT_NE(progress.error.find("format version 1"), std::string::npos) << progress.error;
    EXPECT_NE(progress.error.find(path.string()), std::string::npos) << progress.error;
    EXPECT_EQ(getNow(*bucket, 0, "k").status, Status::TempFail);
}

TEST_F(ManualBucketTest, StreamDeliversInSeqnoOrderOnlyAfterItsTaskRuns) {
    std::vector<Item> seen;
    auto stream = bucket->openStream({0, 0}, [&](const Item& i) { seen.push_back(i); });
    ASSERT_TRUE(stream);
    storeNow(*bucket, setRequest(0, "a", "1"));
    storeNow(*bucket, setRequest(0, "b", "2"));
    storeNow(*bucket, setRequest(1, "other", "x"));  // another vBucket
    EXPECT_TRUE(seen.empty());
    EXPECT_EQ(stream->backlog(), 2u);
    EXPECT_EQ(pool.runReady(TaskType::NonIO), 1u);  // one wake for both
    ASSERT_EQ(seen.size(), 2u);
    EXPECT_EQ(seen[0].key, "a");
    EXPECT_EQ(seen[1].meta.seqno, 2u);
    stream->close();
    storeNow(*bucket, setRequest(0, "c", "3"));
    pool.runReady(TaskType::NonIO);
    EXPECT_EQ(seen.size(), 2u);
}

TEST_F(ManualBucketTest, StreamBehindMemoryIsBackfilledFromDiskThenFollowsMemory) {
    for (int i = 1; i <= 4; ++i) {
        storeNow(*bucket, setRequest(0, storage::test::keyOf(i, "k"), "v"));
    }
    settle();
    storeNow(*bucket, setRequest(0, "k5", "v"));  // in memory only
    std::vector<Seqno> seen;
    auto stream = bucket->openStream({0, 1}, [&](const Item& i) { seen.push_back(i.meta.seqno); });
    EXPECT_EQ(pool.runReady(TaskType::NonIO), 0u);  // waits for the backfill
    EXPECT_EQ(pool.runReady(TaskType::AuxIO), 1u);
    storeNow(*bucket, setRequest(0, "k6", "v"));
    pool.runReady(TaskType::NonIO);
    EXPECT_EQ(seen, (std::vector<Seqno>{2, 3, 4, 5, 6}));
}

TEST_F(ManualBucketTest, FlushDeletesEverythingDurably) {
    storeNow(*bucket, setRequest(0, "a", "1"));
    storeNow(*bucket, setRequest(5, "b", "2"));
    Status flushed = Status::Internal;
    bucket->flush([&](Status s) { flushed = s; });
    EXPECT_EQ(flushed, Status::Success);
    EXPECT_EQ(getNow(*bucket, 0, "a").status, Status::KeyNotFound);
    settle();
    reopen();
    EXPECT_EQ(getNow(*bucket, 5, "b").status, Status::KeyNotFound);
    EXPECT_EQ(bucket->stats().currItems, 0u);
}

TEST_F(ManualBucketTest, ShutdownPersistsDirtyItemsAndCompletesPendingSyncWrites) {
    auto done = pending<MutationResult>();
    storeNow(*bucket, setRequest(0, "plain", "v"));
    bucket->store(setRequest(0, "durable", "v", DurabilityLevel::PersistToMajority),
                  done->callback());
    bucket.reset();  // flushes on the way out
    ASSERT_EQ(done->calls(), 1);
    EXPECT_EQ(done->result().status, Status::Success);
    open();
    EXPECT_EQ(getNow(*bucket, 0, "plain").status, Status::Success);
    EXPECT_EQ(getNow(*bucket, 0, "durable").status, Status::Success);
}

TEST_F(ManualBucketTest, StatsPrintAsCbstatsTextAndJson) {
    bucket->store(setRequest(0, "k", "v", DurabilityLevel::Majority), [](const MutationResult&) {});
    settle();
    const auto stats = bucket->stats();
    const auto text = formatBucketStatsText(stats);
    EXPECT_NE(text.find("sync_write_commit_majority (1 total)"), std::string::npos) << text;
    EXPECT_NE(text.find("Avg"), std::string::npos);
    EXPECT_NE(text.find("curr_items"), std::string::npos);
    const auto json = formatBucketStatsJson(stats);
    EXPECT_NE(json.find("\"sync_write_commit_persist_to_majority\":{\"count\":0"),
              std::string::npos)
        << json;
    EXPECT_NE(json.find("\"curr_items\":1"), std::string::npos) << json;
}

}  // namespace
}  // namespace kvexec::engine
