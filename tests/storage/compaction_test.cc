// Compaction: what it keeps and drops, the revision switch, and its
// interlock with saves, reads, the file cache and delete/recreate.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include "kvexec/storage/kv_store.h"
#include "storage_test_util.h"

namespace kvexec::storage {
namespace {

using test::batchOf;
using test::doc;

class CompactionTest : public ::testing::Test {
  protected:
    KVStoreConfig config() {
        auto c = test::configFor(dir);
        c.fileOps = ops;
        return c;
    }
    bool anyCompactFile() const {
        for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
            if (e.path().string().ends_with(".compact")) {
                return true;
            }
        }
        return false;
    }

    test::TempDir dir;
    std::shared_ptr<test::FaultyFileOps> ops = std::make_shared<test::FaultyFileOps>();
};

// 20 keys written 5 times each (seqnos 1..100), then keys 0..9 deleted
// (seqnos 101..110).
void fill(KVStore& store) {
    Seqno s = 0;
    for (int round = 0; round < 5; ++round) {
        std::vector<Document> batch;
        for (int k = 0; k < 20; ++k) {
            ++s;
            batch.push_back(doc(test::keyOf(k, "key"), test::valueFor(s, 200), s));
        }
        store.saveDocs(0, batch);
    }
    std::vector<Document> deletes;
    for (int k = 0; k < 10; ++k) {
        deletes.push_back(doc(test::keyOf(k, "key"), "", ++s, true));
    }
    store.saveDocs(0, deletes);
}

TEST_F(CompactionTest, KeepsLatestVersionsAndPurgesOldTombstones) {
    KVStore store(config());
    store.createVBucket(0);
    fill(store);
    const auto oldPath = store.filePath(0);
    const auto result = store.compact(0, 106);  // purge tombstones 101..105
    EXPECT_FALSE(result.aborted);
    EXPECT_EQ(result.newRevision, 2u);
    EXPECT_EQ(result.tombstonesPurged, 5u);
    EXPECT_EQ(result.documentsKept, 15u);
    EXPECT_LT(result.bytesAfter, result.bytesBefore / 3);
    EXPECT_EQ(store.revision(0), 2u);
    EXPECT_EQ(store.fileSize(0), result.bytesAfter);
    EXPECT_FALSE(std::filesystem::exists(oldPath));
    EXPECT_TRUE(std::filesystem::exists(store.filePath(0)));
    EXPECT_FALSE(anyCompactFile());
    EXPECT_EQ(store.highSeqno(0), 110u);

    auto check = [](const KVStore& s, std::size_t live) {
        for (int k = 0; k < 5; ++k) {
            EXPECT_FALSE(s.get(0, test::keyOf(k, "key"))) << k;  // purged
        }
        for (int k = 5; k < 10; ++k) {
            EXPECT_TRUE(s.get(0, test::keyOf(k, "key"))->deleted) << k;
        }
        for (int k = 10; k < 20; ++k) {
            const auto d = s.get(0, test::keyOf(k, "key"));
            ASSERT_TRUE(d);
            EXPECT_EQ(d->seqno, static_cast<Seqno>(80 + k + 1));
            EXPECT_EQ(d->value, test::valueFor(d->seqno, 200));
        }
        EXPECT_EQ(s.scan(0, 0, [](const Document&) { return true; }), live);
    };
    check(store, 15);
    store.saveDocs(0, batchOf(111, 1));
    KVStore reopened(config());
    EXPECT_TRUE(reopened.recoveryEvents().empty());
    check(reopened, 16);
    EXPECT_EQ(reopened.get(0, "k111")->seqno, 111u);
    EXPECT_EQ(reopened.highSeqno(0), 111u);
}

// liveBytes() is what a compaction that purges nothing keeps of the
// file's records: the rest of fileSize() is old versions, commit records
// and the header. It holds after a reopen, and the compacted file is
// almost all of it.
TEST_F(CompactionTest, LiveBytesAreWhatACompactionKeeps) {
    KVStore store(config());
    store.createVBucket(0);
    fill(store);  // 20 keys, 5 versions each, 10 then deleted
    const std::uint64_t live = store.liveBytes(0);
    EXPECT_GT(live, 0u);
    EXPECT_LT(live, store.fileSize(0) / 3) << "four of five versions are stale";
    EXPECT_EQ(KVStore(config()).liveBytes(0), live);  // rebuilt by the loader

    const auto result = store.compact(0);  // purges no tombstone
    EXPECT_EQ(result.documentsKept, 20u);
    EXPECT_EQ(store.liveBytes(0), live);
    EXPECT_LT(store.fileSize(0) - live, store.fileSize(0) / 10)
        << "left: the header and one commit record";
    store.saveDocs(0, std::vector<Document>{doc(test::keyOf(12, "key"), "x", 111)});
    EXPECT_LT(store.liveBytes(0), live) << "a shorter version replaces a longer one";
}

TEST_F(CompactionTest, HighSeqnoSurvivesPurgingEverything) {
    {
        KVStore store(config());
        store.createVBucket(0);
        store.saveDocs(0, std::vector<Document>{doc("a", "", 5, true), doc("b", "", 6, true)});
        EXPECT_EQ(store.compact(0, 100).tombstonesPurged, 2u);
        EXPECT_EQ(store.highSeqno(0), 6u);
    }
    KVStore store(config());
    EXPECT_EQ(store.highSeqno(0), 6u);
    EXPECT_THROW(store.saveDocs(0, batchOf(6, 1)), std::invalid_argument);
}

TEST_F(CompactionTest, OldRevisionHandleIsNeverUsedAgain) {
    KVStore store(config());
    store.createVBucket(0);
    store.saveDocs(0, batchOf(1, 3));
    const auto opensBefore = ops->calls(test::FaultyFileOps::Op::Open);
    store.compact(0);
    const auto missesBefore = store.fileCacheStats().misses;
    store.saveDocs(0, batchOf(4, 1));
    EXPECT_EQ(store.fileCacheStats().misses, missesBefore + 1);  // new revision opened
    EXPECT_GT(ops->calls(test::FaultyFileOps::Op::Open), opensBefore);
    EXPECT_EQ(store.fileCacheStats().openHandles, 1u);
    EXPECT_EQ(std::filesystem::file_size(store.filePath(0)), store.fileSize(0));
    EXPECT_EQ(store.get(0, "k4")->seqno, 4u);
}

TEST_F(CompactionTest, SavesDuringCompactionAreCarriedOver) {
    KVStore store(config());
    store.createVBucket(0);
    store.saveDocs(0, batchOf(1, 5));
    int saves = 0;
    ops->setOpenHook([&](const std::string& path) {
        if (path.ends_with(".compact")) {  // phase 1 is starting
            store.saveDocs(0, batchOf(6, 2));
            store.saveDocs(0, std::vector<Document>{doc("k1", "updated", 8)});
            ++saves;
        }
    });
    const auto result = store.compact(0);
    ops->setOpenHook(nullptr);
    ASSERT_EQ(saves, 1);
    EXPECT_FALSE(result.aborted);
    EXPECT_EQ(store.highSeqno(0), 8u);
    EXPECT_EQ(store.get(0, "k1")->value, "updated");
    EXPECT_EQ(store.get(0, "k7")->seqno, 7u);
    KVStore reopened(config());
    EXPECT_EQ(reopened.get(0, "k1")->value, "updated");
    EXPECT_EQ(reopened.get(0, "k7")->seqno, 7u);
    EXPECT_EQ(reopened.scan(0, 0, [](const Document&) { return true; }), 7u);
}

// The copy is synced before the write lock is taken: a save of the same
// vBucket goes on during that sync (the mode here syncs nothing else).
TEST_F(CompactionTest, SavesGoOnWhileTheCopyIsSynced) {
    KVStore store(config());
    store.createVBucket(0);
    store.saveDocs(0, batchOf(1, 5));
    std::jthread saver;  // joined before `store` goes, whatever fails
    std::atomic<bool> saved{false};
    bool savedDuringSync = false;
    int syncs = 0;
    ops->setSyncHook([&] {
        if (++syncs != 1) {
            return;  // the switch's own syncs
        }
        saver = std::jthread([&] {
            store.saveDocs(0, batchOf(6, 1));
            saved = true;
        });
        // Had the sync the write lock, the save would wait for it: this
        // wait gives up, the compaction goes on, and the save ends later.
        savedDuringSync = test::waitUntil([&] { return saved.load(); }, std::chrono::seconds(10));
    });
    const auto result = store.compact(0);
    ops->setSyncHook(nullptr);
    ASSERT_TRUE(saver.joinable());
    saver.join();
    EXPECT_TRUE(savedDuringSync) << "the save waited for the copy's sync";
    EXPECT_FALSE(result.aborted);
    EXPECT_EQ(result.documentsKept, 6u);  // k6 too, copied by phase 2
    EXPECT_EQ(store.highSeqno(0), 6u);
    EXPECT_TRUE(store.get(0, "k6"));
}

TEST_F(CompactionTest, DeleteAndRecreateDuringCompactionAbortsIt) {
    KVStore store(config());
    store.createVBucket(0);
    store.saveDocs(0, batchOf(1, 5));
    ops->setOpenHook([&](const std::string& path) {
        if (path.ends_with(".compact")) {
            store.deleteVBucket(0);
            store.createVBucket(0);
            store.saveDocs(0, std::vector<Document>{doc("fresh", "v", 1)});
        }
    });
    const auto result = store.compact(0);
    ops->setOpenHook(nullptr);
    EXPECT_TRUE(result.aborted);
    EXPECT_FALSE(anyCompactFile());
    EXPECT_EQ(store.revision(0), 2u);
    EXPECT_FALSE(store.get(0, "k1"));
    EXPECT_EQ(store.get(0, "fresh")->value, "v");
    KVStore reopened(config());
    EXPECT_EQ(reopened.highSeqno(0), 1u);
    EXPECT_FALSE(reopened.get(0, "k1"));
}

TEST_F(CompactionTest, ScanSnapshotIsUndisturbedByCompaction) {
    KVStore store(config());
    store.createVBucket(0);
    for (Seqno s = 1; s <= 20; s += 2) {
        store.saveDocs(0, batchOf(s, 2));
    }
    std::vector<Seqno> seen;
    store.scan(0, 0, [&](const Document& d) {
        if (seen.size() == 5) {
            store.compact(0);
        }
        EXPECT_EQ(d.value, test::valueFor(d.seqno));
        seen.push_back(d.seqno);
        return true;
    });
    EXPECT_EQ(seen.size(), 20u);
    EXPECT_EQ(store.revision(0), 2u);
}

TEST_F(CompactionTest, CompactingAMissingVBucketIsAnError) {
    KVStore store(config());
    EXPECT_THROW(store.compact(1), StorageError);
}

}  // namespace
}  // namespace kvexec::storage
