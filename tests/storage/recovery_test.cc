// Opening damaged files: torn tails are cut and reported, corruption before
// the last intact commit is an error naming the file and offset.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "kvexec/storage/kv_store.h"
#include "storage/crc32c.h"
#include "storage/record_format.h"
#include "storage_test_util.h"

namespace kvexec::storage {
namespace {

using test::batchOf;

class RecoveryTest : public ::testing::Test {
  protected:
    // Three batches of three documents in vBucket 0; remembers where each
    // batch ends.
    void build() {
        KVStore store(test::configFor(dir));
        store.createVBucket(0);
        store.createVBucket(1);
        store.saveDocs(1, batchOf(1, 2));
        ends.push_back(store.fileSize(0));
        for (Seqno first : {1, 4, 7}) {
            store.saveDocs(0, batchOf(first, 3));
            ends.push_back(store.fileSize(0));
        }
        path = store.filePath(0);
        original = test::readFile(path);
        ASSERT_EQ(original.size(), ends.back());
    }

    test::TempDir dir;
    std::vector<std::uint64_t> ends;  // header end, then each batch's end
    std::filesystem::path path;
    std::string original;
};

TEST_F(RecoveryTest, EveryCutInsideTheLastBatchDropsExactlyThatBatch) {
    build();
    for (auto cut = ends[2]; cut < ends[3]; ++cut) {
        test::writeFile(path, original.substr(0, cut));
        KVStore store(test::configFor(dir));
        ASSERT_TRUE(store.openErrors().empty()) << "cut at " << cut;
        EXPECT_EQ(store.highSeqno(0), 6u) << "cut at " << cut;
        EXPECT_TRUE(store.get(0, "k6"));
        EXPECT_FALSE(store.get(0, "k7"));
        const auto events = store.recoveryEvents();
        if (cut == ends[2]) {
            EXPECT_TRUE(events.empty());
        } else {
            ASSERT_EQ(events.size(), 1u) << "cut at " << cut;
            EXPECT_EQ(events[0].vbid, 0u);
            EXPECT_EQ(events[0].truncatedAt, ends[2]);
            EXPECT_EQ(events[0].bytesDropped, cut - ends[2]);
        }
        EXPECT_EQ(std::filesystem::file_size(path), ends[2]);
        EXPECT_EQ(store.get(1, "k2")->seqno, 2u);  // other vBuckets unaffected
    }
}

TEST_F(RecoveryTest, TornTailIsCutThenSavesContinue) {
    build();
    test::writeFile(path, original + std::string(100, '\x5a'));
    {
        KVStore store(test::configFor(dir));
        ASSERT_EQ(store.recoveryEvents().size(), 1u);
        EXPECT_EQ(store.recoveryEvents()[0].bytesDropped, 100u);
        EXPECT_EQ(store.saveDocs(0, batchOf(10, 2)), 11u);
    }
    KVStore store(test::configFor(dir));
    EXPECT_TRUE(store.recoveryEvents().empty());
    EXPECT_EQ(store.highSeqno(0), 11u);
    EXPECT_EQ(store.get(0, "k10")->value, test::valueFor(10));
}

TEST_F(RecoveryTest, DamagedLastCommitDropsOnlyTheLastBatch) {
    build();
    auto bytes = original;
    bytes[ends[3] - 5] ^= 0x40;  // inside the last commit record
    test::writeFile(path, bytes);
    KVStore store(test::configFor(dir));
    EXPECT_TRUE(store.openErrors().empty());
    EXPECT_EQ(store.highSeqno(0), 6u);
    ASSERT_EQ(store.recoveryEvents().size(), 1u);
}

TEST_F(RecoveryTest, CorruptionBeforeAnIntactCommitIsAnErrorWithFileAndOffset) {
    build();
    auto bytes = original;
    const auto damagedAt = ends[1];                            // first document of the second batch
    bytes[damagedAt + format::kRecordHeaderSize + 1] ^= 0x01;  // in its key
    test::writeFile(path, bytes);
    KVStore store(test::configFor(dir));
    const auto errors = store.openErrors();
    ASSERT_EQ(errors.size(), 1u);
    const auto& error = errors[0];
    EXPECT_EQ(error.kind(), StorageError::Kind::Corruption);
    EXPECT_EQ(error.path(), path.string());
    EXPECT_EQ(error.offset(), damagedAt);
    EXPECT_NE(std::string(error.what()).find(path.string()), std::string::npos);
    EXPECT_NE(std::string(error.what()).find(std::to_string(damagedAt)), std::string::npos);
    try {
        store.get(0, "k1");
        FAIL();
    } catch (const StorageError& e) {
        EXPECT_EQ(e.kind(), StorageError::Kind::Corruption);
    }
    EXPECT_THROW(store.saveDocs(0, batchOf(10, 1)), StorageError);
    EXPECT_EQ(test::readFile(path), bytes);  // nothing was "repaired" away
    EXPECT_EQ(store.get(1, "k1")->seqno, 1u);
    // The way out: delete and recreate (e.g. to rebuild from a replica).
    EXPECT_TRUE(store.deleteVBucket(0));
    EXPECT_TRUE(store.createVBucket(0));
    EXPECT_EQ(store.saveDocs(0, batchOf(1, 1)), 1u);
}

TEST_F(RecoveryTest, DamagedHeaderIsCorruptionAtOffsetZero) {
    build();
    auto bytes = original;
    bytes[3] ^= 0x10;
    test::writeFile(path, bytes);
    KVStore store(test::configFor(dir));
    ASSERT_EQ(store.openErrors().size(), 1u);
    EXPECT_EQ(store.openErrors()[0].offset(), 0u);
}

TEST_F(RecoveryTest, FileOfFormatVersionOneIsRefusedWithAnErrorNamingIt) {
    build();
    auto bytes = original;
    bytes[8] = 1;  // the version field: version 1 had no document metadata
    const std::uint32_t crc = crc32c(bytes.data() + 4, format::kFileHeaderSize - 4);
    for (int i = 0; i < 4; ++i) {
        bytes[static_cast<std::size_t>(i)] = static_cast<char>(crc >> (8 * i));
    }
    test::writeFile(path, bytes);
    KVStore store(test::configFor(dir));
    ASSERT_EQ(store.openErrors().size(), 1u);
    const std::string message = store.openErrors()[0].what();
    EXPECT_NE(message.find("format version 1"), std::string::npos) << message;
    EXPECT_NE(message.find(path.string()), std::string::npos) << message;
    EXPECT_THROW(store.get(0, "k1"), StorageError);
}

TEST_F(RecoveryTest, FileShorterThanItsHeaderIsAnEmptyVBucket) {
    build();
    test::writeFile(path, original.substr(0, 10));
    KVStore store(test::configFor(dir));
    EXPECT_TRUE(store.openErrors().empty());
    EXPECT_EQ(store.highSeqno(0), 0u);
    EXPECT_EQ(store.recoveryEvents().size(), 1u);
    EXPECT_EQ(store.saveDocs(0, batchOf(1, 1)), 1u);
}

TEST_F(RecoveryTest, LeftoversOfAnInterruptedCompactionAreRemoved) {
    build();
    const auto dirPath = dir.path();
    // Revision 2 complete (switch happened, old not yet removed) ...
    test::writeFile(dirPath / "1.kv.2", test::readFile(dirPath / "1.kv.1"));
    {
        auto bytes = test::readFile(dirPath / "1.kv.2");
        const auto header = format::encodeFileHeader({1, 2});
        bytes.replace(0, header.size(), header);
        test::writeFile(dirPath / "1.kv.2", bytes);
    }
    // ... and an unfinished output for vBucket 0.
    test::writeFile(dirPath / "0.kv.2.compact", "partial");
    KVStore store(test::configFor(dir));
    EXPECT_TRUE(store.openErrors().empty());
    EXPECT_EQ(store.revision(1), 2u);
    EXPECT_EQ(store.get(1, "k2")->seqno, 2u);
    EXPECT_FALSE(std::filesystem::exists(dirPath / "1.kv.1"));
    EXPECT_FALSE(std::filesystem::exists(dirPath / "0.kv.2.compact"));
    EXPECT_EQ(store.highSeqno(0), 9u);
}

TEST_F(RecoveryTest, RandomDamageNeverCrashes) {
    build();
    std::mt19937 rng(12345);
    for (int round = 0; round < 200; ++round) {
        auto bytes = original;
        const auto flips = 1 + rng() % 4;
        for (unsigned i = 0; i < flips; ++i) {
            bytes[rng() % bytes.size()] ^= static_cast<char>(1 + rng() % 255);
        }
        if (rng() % 2) {
            bytes.resize(rng() % bytes.size());
        }
        test::writeFile(path, bytes);
        KVStore store(test::configFor(dir));
        if (store.openErrors().empty()) {
            // Whatever survived must read back intact.
            store.scan(0, 0, [](const Document& d) { return !d.key.empty(); });
        } else {
            EXPECT_EQ(store.openErrors()[0].kind(), StorageError::Kind::Corruption);
        }
    }
}

}  // namespace
}  // namespace kvexec::storage
