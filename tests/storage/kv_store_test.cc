// KVStore: saves, reads, scans, vBucket lifecycle, reopening.
#include <gtest/gtest.h>

#include "kvexec/storage/kv_store.h"
#include "storage_test_util.h"

namespace kvexec::storage {
namespace {

using test::batchOf;
using test::doc;

class KVStoreTest : public ::testing::Test {
  protected:
    std::unique_ptr<KVStore> open(SyncMode mode = SyncMode::None) {
        return std::make_unique<KVStore>(test::configFor(dir, 4, mode));
    }
    std::vector<Document> scanAll(const KVStore& store, Vbid vb, Seqno from = 0) {
        std::vector<Document> out;
        store.scan(vb, from, [&](const Document& d) {
            out.push_back(d);
            return true;
        });
        return out;
    }

    test::TempDir dir;
};

TEST_F(KVStoreTest, SaveThenGetAndScan) {
    auto store = open();
    ASSERT_TRUE(store->createVBucket(1));
    EXPECT_FALSE(store->createVBucket(1));
    EXPECT_EQ(store->saveDocs(1, batchOf(1, 3)), 3u);
    const std::vector<Document> second{doc("k1", "new", 4), doc("k2", "", 5, true)};
    EXPECT_EQ(store->saveDocs(1, second), 5u);
    EXPECT_EQ(store->get(1, "k1"), doc("k1", "new", 4));
    EXPECT_EQ(store->get(1, "k2"), doc("k2", "", 5, true));
    EXPECT_EQ(store->get(1, "k3")->value, test::valueFor(3));
    EXPECT_FALSE(store->get(1, "nope"));
    const auto all = scanAll(*store, 1);
    ASSERT_EQ(all.size(), 3u);
    EXPECT_EQ(all[0].seqno, 3u);
    EXPECT_EQ(all[1].seqno, 4u);
    EXPECT_EQ(all[2].seqno, 5u);
    EXPECT_EQ(scanAll(*store, 1, 5).size(), 1u);
    EXPECT_EQ(store->highSeqno(1), 5u);
}

TEST_F(KVStoreTest, ScanStopsWhenTheCallbackSaysSo) {
    auto store = open();
    store->createVBucket(0);
    store->saveDocs(0, batchOf(1, 10));
    int seen = 0;
    EXPECT_EQ(store->scan(0, 0, [&](const Document&) { return ++seen < 4; }), 4u);
}

TEST_F(KVStoreTest, EmptyBatchWritesNothing) {
    auto store = open();
    store->createVBucket(0);
    const auto size = store->fileSize(0);
    EXPECT_EQ(store->saveDocs(0, {}), 0u);
    EXPECT_EQ(store->fileSize(0), size);
}

TEST_F(KVStoreTest, RejectsBadInput) {
    auto store = open();
    store->createVBucket(0);
    store->saveDocs(0, batchOf(1, 2));
    EXPECT_THROW(store->saveDocs(0, batchOf(2, 1)), std::invalid_argument);
    const std::vector<Document> unordered{doc("a", "", 5), doc("b", "", 4)};
    EXPECT_THROW(store->saveDocs(0, unordered), std::invalid_argument);
    const std::vector<Document> emptyKey{doc("", "", 9)};
    EXPECT_THROW(store->saveDocs(0, emptyKey), std::invalid_argument);
    EXPECT_THROW(store->saveDocs(99, batchOf(3, 1)), std::invalid_argument);
    EXPECT_EQ(store->highSeqno(0), 2u);
}

TEST_F(KVStoreTest, MissingVBucketIsAClearError) {
    auto store = open();
    try {
        store->saveDocs(2, batchOf(1, 1));
        FAIL();
    } catch (const StorageError& e) {
        EXPECT_EQ(e.kind(), StorageError::Kind::NoSuchVBucket);
    }
    EXPECT_THROW(store->get(2, "k"), StorageError);
}

TEST_F(KVStoreTest, DataSurvivesReopen) {
    for (SyncMode mode : {SyncMode::None, SyncMode::Fdatasync}) {
        test::TempDir local;
        {
            KVStore store(test::configFor(local, 4, mode));
            store.createVBucket(0);
            store.createVBucket(3);
            store.saveDocs(0, batchOf(1, 5));
            store.saveDocs(3, batchOf(10, 2));
            store.saveDocs(0, std::vector<Document>{doc("k2", "x", 6, true)});
        }
        KVStore store(test::configFor(local, 4, mode));
        EXPECT_TRUE(store.recoveryEvents().empty());
        EXPECT_TRUE(store.exists(0));
        EXPECT_FALSE(store.exists(1));
        EXPECT_EQ(store.highSeqno(0), 6u);
        EXPECT_EQ(store.highSeqno(3), 11u);
        EXPECT_TRUE(store.get(0, "k2")->deleted);
        EXPECT_EQ(store.get(3, "k11")->value, test::valueFor(11));
        EXPECT_EQ(store.saveDocs(0, batchOf(7, 1)), 7u);
    }
}

TEST_F(KVStoreTest, DeleteRemovesFileAndRecreateStartsANewRevision) {
    auto store = open();
    store->createVBucket(2);
    store->saveDocs(2, batchOf(1, 3));
    const auto oldPath = store->filePath(2);
    const auto oldRevision = store->revision(2);
    EXPECT_TRUE(store->deleteVBucket(2));
    EXPECT_FALSE(store->deleteVBucket(2));
    EXPECT_FALSE(std::filesystem::exists(oldPath));
    EXPECT_THROW(store->get(2, "k1"), StorageError);
    ASSERT_TRUE(store->createVBucket(2));
    EXPECT_GT(store->revision(2), oldRevision);
    EXPECT_FALSE(store->get(2, "k1"));
    EXPECT_EQ(store->saveDocs(2, batchOf(1, 1)), 1u);
    EXPECT_EQ(store->get(2, "k1")->seqno, 1u);
}

TEST_F(KVStoreTest, CacheKeepsFilesOpenAcrossSaves) {
    auto store = open();
    store->createVBucket(0);
    for (Seqno s = 1; s <= 10; ++s) {
        store->saveDocs(0, batchOf(s, 1));
    }
    const auto st = store->fileCacheStats();
    EXPECT_EQ(st.misses, 1u);  // the first save opens the file, the others reuse it
    EXPECT_EQ(st.hits, 9u);
    EXPECT_EQ(st.openHandles, 1u);
}

TEST_F(KVStoreTest, CacheOffOpensPerSave) {
    auto config = test::configFor(dir);
    config.fileCacheEnabled = false;
    KVStore store(config);
    store.createVBucket(0);
    for (Seqno s = 1; s <= 10; ++s) {
        store.saveDocs(0, batchOf(s, 1));
    }
    EXPECT_EQ(store.fileCacheStats().hits, 0u);
    EXPECT_EQ(store.fileCacheStats().misses, 10u);
    EXPECT_EQ(store.fileCacheStats().openHandles, 0u);
}

TEST_F(KVStoreTest, SmallCacheOverManyVBucketsStaysBounded) {
    auto config = test::configFor(dir, 16);
    config.fileCacheCapacity = 3;
    KVStore store(config);
    for (Vbid vb = 0; vb < 16; ++vb) {
        store.createVBucket(vb);
    }
    for (int round = 0; round < 3; ++round) {
        for (Vbid vb = 0; vb < 16; ++vb) {
            store.saveDocs(vb, batchOf(static_cast<Seqno>(round + 1), 1));
        }
    }
    EXPECT_LE(store.fileCacheStats().openHandles, 3u);
    EXPECT_GT(store.fileCacheStats().evictions, 0u);
    for (Vbid vb = 0; vb < 16; ++vb) {
        EXPECT_EQ(store.highSeqno(vb), 3u);
        EXPECT_EQ(store.get(vb, "k2")->seqno, 2u);
    }
}

}  // namespace
}  // namespace kvexec::storage
