// Scans and compaction read a file's documents through DocumentReader:
// neighbours in one read, long stale runs skipped, documents larger than
// one read whole, and every record still checked on its own.
#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "kvexec/storage/kv_store.h"
#include "storage/document_reader.h"
#include "storage_test_util.h"

namespace kvexec::storage {
namespace {

using test::batchOf;
using Op = test::FaultyFileOps::Op;

class DocumentReaderTest : public ::testing::Test {
  protected:
    void SetUp() override {
        auto config = test::configFor(dir, 1);
        config.fileOps = ops;
        store = std::make_unique<KVStore>(config);
        store->createVBucket(0);
    }
    // Every document a scan from seqno 0 returns, and how many preads it took.
    std::vector<Document> scanAll(std::size_t& preads) {
        std::vector<Document> out;
        const auto before = ops->calls(Op::Pread);
        store->scan(0, 0, [&out](const Document& d) {
            out.push_back(d);
            return true;
        });
        preads = ops->calls(Op::Pread) - before;
        return out;
    }

    test::TempDir dir;
    std::shared_ptr<test::FaultyFileOps> ops = std::make_shared<test::FaultyFileOps>();
    std::unique_ptr<KVStore> store;
};

TEST_F(DocumentReaderTest, AScanReadsNeighbouringDocumentsTogether) {
    const auto batch = batchOf(1, 200);
    store->saveDocs(0, batch);
    std::size_t preads = 0;
    const auto got = scanAll(preads);
    ASSERT_EQ(got.size(), batch.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].key, batch[i].key);
        EXPECT_EQ(got[i].value, batch[i].value);
    }
    EXPECT_EQ(preads, 1u);  // 200 records of about 80 bytes: one read
}

TEST_F(DocumentReaderTest, ALongRunOfStaleVersionsIsNotRead) {
    store->saveDocs(0, std::vector{test::doc("first", "1", 1)});
    std::vector<Document> versions;
    for (Seqno s = 2; s <= 41; ++s) {  // 40 KiB of versions, the last one live
        versions.push_back(test::doc("stale", test::valueFor(s, 1024), s));
    }
    store->saveDocs(0, versions);
    store->saveDocs(0, std::vector{test::doc("second", "2", 42)});
    std::size_t preads = 0;
    const auto got = scanAll(preads);
    ASSERT_EQ(got.size(), 3u);
    EXPECT_EQ(got[0].key, "first");
    EXPECT_EQ(got[1].value, test::valueFor(41, 1024));
    EXPECT_EQ(got[2].key, "second");
    // "first" alone (39 KiB of stale versions follow it), then the last
    // version with "second" after it.
    EXPECT_EQ(preads, 2u);
}

TEST_F(DocumentReaderTest, ADocumentLargerThanOneReadIsReadWhole) {
    const std::string large = test::valueFor(2, DocumentReader::kMaxReadBytes + 4096);
    store->saveDocs(0, std::vector{test::doc("a", "small", 1), test::doc("b", large, 2),
                                   test::doc("c", "small", 3)});
    std::size_t preads = 0;
    const auto got = scanAll(preads);
    ASSERT_EQ(got.size(), 3u);
    EXPECT_EQ(got[0].value, "small");
    EXPECT_EQ(got[1].value, large);
    EXPECT_EQ(got[2].value, "small");
    const auto compacted = store->compact(0, 0);
    EXPECT_EQ(compacted.documentsKept, 3u);
    EXPECT_EQ(store->get(0, "b")->value, large);
}

TEST_F(DocumentReaderTest, ADamagedRecordInsideOneReadIsCaughtByItsOwnCheck) {
    store->saveDocs(0, batchOf(1, 10));
    const auto path = store->filePath(0);
    const auto bytes = test::readFile(path);
    const auto damaged = test::valueFor(6);
    const auto at = bytes.find(damaged);
    const auto previous = bytes.find(test::valueFor(5));  // k5's, just before
    ASSERT_NE(at, std::string::npos);
    ASSERT_NE(previous, std::string::npos);
    {
        std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
        file.seekp(static_cast<std::streamoff>(at));
        file.put(static_cast<char>(damaged[0] ^ 0x01));
    }
    std::vector<std::string> before;
    try {
        store->scan(0, 0, [&before](const Document& d) {
            before.push_back(d.key);
            return true;
        });
        FAIL() << "the damaged record was returned";
    } catch (const StorageError& e) {
        EXPECT_EQ(e.kind(), StorageError::Kind::Corruption);
        EXPECT_EQ(e.path(), path.string());
        ASSERT_TRUE(e.offset().has_value());
        // The damaged record's own offset: after k5's value, before k6's.
        EXPECT_GT(*e.offset(), previous);
        EXPECT_LT(*e.offset(), at);
    }
    EXPECT_EQ(before.size(), 5u);  // k1..k5 came before it, intact
}

TEST_F(DocumentReaderTest, AFailedReadFailsTheScanAndTheNextScanReadsAgain) {
    store->saveDocs(0, batchOf(1, 10));
    ops->failNext(Op::Pread, EIO);
    std::size_t preads = 0;
    try {
        scanAll(preads);
        FAIL() << "the scan hid a failed read";
    } catch (const StorageError& e) {
        EXPECT_EQ(e.kind(), StorageError::Kind::Io);
        EXPECT_EQ(e.sysError(), EIO);
    }
    const auto got = scanAll(preads);
    EXPECT_EQ(got.size(), 10u);
    EXPECT_EQ(preads, 1u);
}

}  // namespace
}  // namespace kvexec::storage
