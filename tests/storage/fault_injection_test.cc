// Injected ENOSPC, EIO and short writes: the failing call reports a clear
// error, nothing acknowledged is lost, nothing half-written is served, and a
// retry once the fault clears succeeds.
#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>

#include "kvexec/storage/kv_store.h"
#include "storage_test_util.h"

namespace kvexec::storage {
namespace {

using test::batchOf;
using Op = test::FaultyFileOps::Op;

class FaultInjectionTest : public ::testing::TestWithParam<SyncMode> {
  protected:
    KVStoreConfig config() {
        auto c = test::configFor(dir, 2, GetParam());
        c.fileOps = ops;
        return c;
    }
    std::unique_ptr<KVStore> openWithData() {
        auto store = std::make_unique<KVStore>(config());
        store->createVBucket(0);
        store->saveDocs(0, batchOf(1, 3));  // acknowledged
        return store;
    }
    void expectSaveFails(KVStore& store, std::span<const Document> batch, int err) {
        try {
            store.saveDocs(0, batch);
            FAIL() << "save should have failed";
        } catch (const StorageError& e) {
            EXPECT_EQ(e.kind(), StorageError::Kind::Io);
            EXPECT_EQ(e.sysError(), err);
            EXPECT_NE(std::string(e.what()).find(store.filePath(0).string()), std::string::npos)
                << e.what();
        }
    }
    // Acknowledged batch 1..3 is intact, the failed batch 4.. is not served.
    void expectOnlyAcknowledged(const KVStore& store) {
        EXPECT_EQ(store.highSeqno(0), 3u);
        for (Seqno s = 1; s <= 3; ++s) {
            EXPECT_EQ(store.get(0, test::keyOf(s))->value, test::valueFor(s));
        }
        EXPECT_FALSE(store.get(0, "k4"));
        EXPECT_EQ(store.scan(0, 0, [](const Document&) { return true; }), 3u);
    }
    void expectReopenHasEverything(Seqno high) {
        KVStore reopened(config());
        EXPECT_TRUE(reopened.openErrors().empty());
        EXPECT_EQ(reopened.highSeqno(0), high);
        for (Seqno s = 1; s <= high; ++s) {
            EXPECT_EQ(reopened.get(0, test::keyOf(s))->value, test::valueFor(s)) << s;
        }
    }

    test::TempDir dir;
    std::shared_ptr<test::FaultyFileOps> ops = std::make_shared<test::FaultyFileOps>();
};

TEST_P(FaultInjectionTest, EnospcOnWrite) {
    auto store = openWithData();
    ops->failNext(Op::Pwrite, ENOSPC);
    expectSaveFails(*store, batchOf(4, 5), ENOSPC);
    expectOnlyAcknowledged(*store);
    EXPECT_EQ(store->saveDocs(0, batchOf(4, 5)), 8u);
    store.reset();
    expectReopenHasEverything(8);
}

TEST_P(FaultInjectionTest, ShortWriteThenEnospcWithFailedCleanup) {
    auto store = openWithData();
    ops->shortWriteNext(40);                  // a partial record lands in the file
    ops->failNext(Op::Pwrite, ENOSPC, 1, 1);  // then the disk is full
    ops->failNext(Op::Ftruncate, EIO);        // and the cleanup fails too
    expectSaveFails(*store, batchOf(4, 5), ENOSPC);
    expectOnlyAcknowledged(*store);
    // A smaller retry must not leave the old partial batch behind it.
    EXPECT_EQ(store->saveDocs(0, batchOf(4, 1)), 4u);
    EXPECT_EQ(std::filesystem::file_size(store->filePath(0)), store->fileSize(0));
    store.reset();
    KVStore reopened(config());
    EXPECT_TRUE(reopened.recoveryEvents().empty());
    expectReopenHasEverything(4);
}

TEST_P(FaultInjectionTest, PartialBatchLeftByAFailedSaveIsCutAtReopen) {
    auto store = openWithData();
    ops->shortWriteNext(100);
    ops->failNext(Op::Pwrite, EIO, 1, 1);
    ops->failNext(Op::Ftruncate, EIO);
    expectSaveFails(*store, batchOf(4, 5), EIO);
    store.reset();  // "crash" with the partial batch still in the file
    KVStore reopened(config());
    EXPECT_TRUE(reopened.openErrors().empty());
    ASSERT_EQ(reopened.recoveryEvents().size(), 1u);
    EXPECT_EQ(reopened.recoveryEvents()[0].bytesDropped, 100u);
    expectOnlyAcknowledged(reopened);
}

TEST_P(FaultInjectionTest, ShortWritesAloneAreContinued) {
    auto store = openWithData();
    ops->shortWriteNext(7);
    EXPECT_EQ(store->saveDocs(0, batchOf(4, 2)), 5u);
    store.reset();
    expectReopenHasEverything(5);
}

TEST_P(FaultInjectionTest, SyncOrOpenFailure) {
    auto store = openWithData();
    const bool syncing = GetParam() == SyncMode::Fdatasync;
    if (syncing) {
        ops->failNext(Op::Fdatasync, EIO);
    } else {
        store->compact(0);  // new revision: the next save must open it
        ops->failNext(Op::Open, EIO);
    }
    expectSaveFails(*store, batchOf(4, 2), EIO);
    EXPECT_EQ(store->fileCacheStats().openHandles, 0u);  // the suspect handle was dropped
    expectOnlyAcknowledged(*store);
    EXPECT_EQ(store->saveDocs(0, batchOf(4, 2)), 5u);
    store.reset();
    expectReopenHasEverything(5);
}

TEST_P(FaultInjectionTest, ReadErrorIsReported) {
    auto store = openWithData();
    ops->failNext(Op::Pread, EIO);
    try {
        store->get(0, "k1");
        FAIL();
    } catch (const StorageError& e) {
        EXPECT_EQ(e.kind(), StorageError::Kind::Io);
        EXPECT_EQ(e.sysError(), EIO);
    }
    EXPECT_EQ(store->get(0, "k1")->seqno, 1u);
}

TEST_P(FaultInjectionTest, CompactionFailuresLeaveTheOldRevisionServing) {
    auto store = openWithData();
    struct Fault {
        Op op;
        int err;
        int skip;  // calls of op that succeed first
    };
    // Fdatasync twice: the copy's sync (before the write lock), then the
    // switch's (under it).
    for (const Fault f : {Fault{Op::Rename, EIO, 0}, Fault{Op::Pwrite, ENOSPC, 0},
                          Fault{Op::Fdatasync, EIO, 0}, Fault{Op::Fdatasync, EIO, 1}}) {
        ops->failNext(f.op, f.err, 1, f.skip);
        EXPECT_THROW(store->compact(0), StorageError);
        EXPECT_EQ(store->revision(0), 1u);
        for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
            EXPECT_FALSE(e.path().string().ends_with(".compact")) << e.path();
        }
        expectOnlyAcknowledged(*store);
    }
    EXPECT_EQ(store->compact(0).newRevision, 2u);
    EXPECT_EQ(store->saveDocs(0, batchOf(4, 1)), 4u);
    store.reset();
    expectReopenHasEverything(4);
}

TEST_P(FaultInjectionTest, CreateFailureLeavesNoVBucket) {
    KVStore store(config());
    ops->failNext(Op::Pwrite, ENOSPC);
    EXPECT_THROW(store.createVBucket(1), StorageError);
    EXPECT_FALSE(store.exists(1));
    EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
    EXPECT_TRUE(store.createVBucket(1));
}

TEST(DescriptorExhaustion, CreateAndCompactionEvictCachedHandlesOnEmfile) {
    test::TempDir dir;
    auto ops = std::make_shared<test::FaultyFileOps>();
    auto config = test::configFor(dir, 4);
    config.fileOps = ops;
    config.fileCacheCapacity = 8;
    KVStore store(config);
    store.createVBucket(0);
    store.createVBucket(1);
    store.saveDocs(0, batchOf(1, 2));
    store.saveDocs(1, batchOf(1, 2));
    ops->setOpenLimit(2);  // both descriptors are held by the cache
    EXPECT_TRUE(store.createVBucket(2));
    EXPECT_EQ(store.compact(0).newRevision, 2u);
    EXPECT_EQ(store.saveDocs(2, batchOf(1, 1)), 1u);
    EXPECT_EQ(store.get(0, "k2")->seqno, 2u);
    EXPECT_GE(store.fileCacheStats().evictions, 2u);
    EXPECT_LE(ops->openDescriptors(), 2u);
}

INSTANTIATE_TEST_SUITE_P(SyncModes, FaultInjectionTest,
                         ::testing::Values(SyncMode::None, SyncMode::Fdatasync),
                         [](const auto& info) { return std::string(to_string(info.param)); });

}  // namespace
}  // namespace kvexec::storage
