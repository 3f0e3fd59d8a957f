// CRC-32C, the record format and the in-memory index.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <utility>

#include "storage/crc32c.h"
#include "storage/record_format.h"
#include "storage/vbucket_index.h"

namespace kvexec::storage {
namespace {

TEST(Crc32c, KnownVectors) {
    EXPECT_EQ(crc32c("123456789", 9), 0xE3069283u);
    EXPECT_EQ(crc32c("", 0), 0u);
    const std::string zeros(32, '\0');
    EXPECT_EQ(crc32c(zeros.data(), zeros.size()), 0x8A9136AAu);
}

TEST(Crc32c, IncrementalEqualsOneShot) {
    const std::string text = "the quick brown fox jumps over the lazy dog, twice over";
    const auto whole = crc32c(text.data(), text.size());
    for (std::size_t cut = 0; cut <= text.size(); ++cut) {
        EXPECT_EQ(crc32c(text.data() + cut, text.size() - cut, crc32c(text.data(), cut)), whole);
    }
}

TEST(RecordFormat, DocumentRoundTrips) {
    std::string bytes;
    const Document in{"key", std::string("v\0lue", 5), 42, true};
    const auto size = format::appendDocument(bytes, in);
    ASSERT_EQ(size, bytes.size());
    const auto header = format::decodeRecordHeader(bytes.data());
    ASSERT_TRUE(header);
    EXPECT_EQ(header->size(), size);
    EXPECT_TRUE(format::verifyRecord(*header, bytes.data()));
    EXPECT_EQ(format::decodeDocument(*header, bytes.data()), in);
}

TEST(RecordFormat, DocumentMetadataRoundTrips) {
    std::string bytes;
    Document in{"key", "value", 9, false};
    in.cas = 0x1122334455667788ull;
    in.flags = 0xdeadbeef;
    in.expiry = 1'900'000'000;
    in.datatype = 0x01;
    in.level = 3;  // a PersistToMajority prepare
    format::appendDocument(bytes, in);
    EXPECT_EQ(bytes.size(), format::kRecordHeaderSize + 3 + format::kDocumentMetaSize + 5);
    const auto header = format::decodeRecordHeader(bytes.data());
    ASSERT_TRUE(header);
    EXPECT_EQ(format::decodeDocument(*header, bytes.data()), in);
}

TEST(RecordFormat, EveryFlippedBitIsDetected) {
    std::string bytes;
    format::appendDocument(bytes, Document{"k", "value", 7, false});
    for (std::size_t bit = 0; bit < bytes.size() * 8; ++bit) {
        std::string damaged = bytes;
        damaged[bit / 8] = static_cast<char>(damaged[bit / 8] ^ (1 << (bit % 8)));
        const auto header = format::decodeRecordHeader(damaged.data());
        const bool detected = !header || header->size() != bytes.size() ||
                              !format::verifyRecord(*header, damaged.data());
        EXPECT_TRUE(detected) << "bit " << bit;
    }
}

TEST(RecordFormat, CommitRoundTrips) {
    std::string bytes;
    format::appendCommit(bytes, {99, 4096, 3});
    ASSERT_EQ(bytes.size(), format::kCommitRecordSize);
    const auto header = format::decodeRecordHeader(bytes.data());
    ASSERT_TRUE(header);
    ASSERT_TRUE(format::verifyRecord(*header, bytes.data()));
    const auto commit = format::decodeCommit(*header, bytes.data());
    ASSERT_TRUE(commit);
    EXPECT_EQ(commit->highSeqno, 99u);
    EXPECT_EQ(commit->batchStart, 4096u);
    EXPECT_EQ(commit->docCount, 3u);
}

TEST(RecordFormat, FileHeaderRoundTripsAndRejectsDamage) {
    auto bytes = format::encodeFileHeader({17, 5});
    ASSERT_EQ(bytes.size(), format::kFileHeaderSize);
    const auto header = format::decodeFileHeader(bytes.data());
    ASSERT_TRUE(header);
    EXPECT_EQ(header->vbid, 17u);
    EXPECT_EQ(header->revision, 5u);
    bytes[20] ^= 1;
    EXPECT_FALSE(format::decodeFileHeader(bytes.data()));
}

// Rewrites the CRC of the record or header of `size` bytes at `bytes`.
void reseal(std::string& bytes, std::size_t size) {
    const std::uint32_t crc = crc32c(bytes.data() + 4, size - 4);
    for (int i = 0; i < 4; ++i) {
        bytes[static_cast<std::size_t>(i)] = static_cast<char>(crc >> (8 * i));
    }
}

TEST(RecordFormat, FileHeaderOfAnotherVersionIsRefusedAndNamed) {
    auto bytes = format::encodeFileHeader({3, 1});
    bytes[8] = 1;  // version 1: documents without metadata
    reseal(bytes, format::kFileHeaderSize);
    std::uint16_t version = 0;
    EXPECT_FALSE(format::decodeFileHeader(bytes.data(), &version));
    EXPECT_EQ(version, 1);
    bytes[8] = 4;  // a later version than this build writes
    reseal(bytes, format::kFileHeaderSize);
    EXPECT_FALSE(format::decodeFileHeader(bytes.data(), &version));
    EXPECT_EQ(version, 4);
}

// A file of version 2 (before collections) opens unchanged: its header is
// accepted and its records' keys read as default-collection keys (0x00 in
// front), as the engine stores them since version 3.
TEST(RecordFormat, AVersion2RecordReadsAsADefaultCollectionKey) {
    auto header = format::encodeFileHeader({3, 1});
    header[8] = 2;
    reseal(header, format::kFileHeaderSize);
    std::uint16_t version = 0;
    EXPECT_TRUE(format::decodeFileHeader(header.data(), &version));
    EXPECT_EQ(version, 2);

    std::string bytes;
    format::appendDocument(bytes, Document{"key", "value", 7, false});
    ASSERT_EQ(bytes[5], 2);  // version 3: every document record has bit 1
    bytes[5] = 0;            // as version 2 wrote it
    reseal(bytes, bytes.size());
    const auto record = format::decodeRecordHeader(bytes.data());
    ASSERT_TRUE(record);
    ASSERT_TRUE(format::verifyRecord(*record, bytes.data()));
    EXPECT_EQ(format::decodeDocument(*record, bytes.data()).key, std::string("\0key", 4));
}

// The byte was reserved (zero) before: older records read as deletes.
TEST(RecordFormat, ATombstoneAnExpiryMadeSaysSoInAFormerlyReservedByte) {
    std::string bytes;
    Document in{"key", "", 9, true};
    in.deletedByExpiry = true;
    format::appendDocument(bytes, in);
    EXPECT_EQ(bytes[format::kRecordHeaderSize + 3 + 18], 1);
    const auto header = format::decodeRecordHeader(bytes.data());
    ASSERT_TRUE(header);
    EXPECT_EQ(format::decodeDocument(*header, bytes.data()), in);

    bytes[format::kRecordHeaderSize + 3 + 18] = 0;  // as a build before it wrote it
    reseal(bytes, bytes.size());
    EXPECT_FALSE(format::decodeDocument(*format::decodeRecordHeader(bytes.data()), bytes.data())
                     .deletedByExpiry);
}

TEST(VBucketIndex, LatestVersionWinsAndSeqnoOrderHolds) {
    VBucketIndex index;
    index.apply("a", {100, 10, 1, false});
    index.apply("b", {200, 10, 2, false});
    index.apply("a", {300, 10, 3, true});
    ASSERT_NE(index.find("a"), nullptr);
    EXPECT_EQ(index.find("a")->seqno, 3u);
    EXPECT_TRUE(index.find("a")->deleted);
    EXPECT_EQ(index.find("c"), nullptr);
    const auto all = index.fromSeqno(0);
    ASSERT_EQ(all.size(), 2u);
    EXPECT_EQ(all[0].seqno, 2u);
    EXPECT_EQ(all[1].seqno, 3u);
    EXPECT_EQ(index.fromSeqno(3).size(), 1u);
}

TEST(VBucketIndex, AMovedIndexKeepsEveryKeyAndItsLiveBytes) {
    VBucketIndex built;
    built.reserve(3);
    built.apply("a", {100, 10, 1, false});
    built.apply("b", {200, 20, 2, false});
    built.apply("a", {300, 30, 3, false});
    VBucketIndex index = std::move(built);  // as a compaction or a load hands it over
    EXPECT_EQ(index.liveBytes(), 50u);
    index.apply("b", {400, 5, 4, true});  // moves b's node in the moved-to index
    EXPECT_EQ(index.liveBytes(), 35u);
    ASSERT_NE(index.find("b"), nullptr);
    EXPECT_EQ(index.find("b")->offset, 400u);
    EXPECT_EQ(index.find("a")->offset, 300u);
    const auto all = index.fromSeqno(0);
    ASSERT_EQ(all.size(), 2u);
    EXPECT_EQ(all[0].seqno, 3u);
    EXPECT_EQ(all[1].seqno, 4u);
    index.clear();
    EXPECT_EQ(index.find("a"), nullptr);
    EXPECT_EQ(index.liveBytes(), 0u);
}

TEST(VBucketIndex, ASeqnoOfAnotherKeyIsRefused) {
    VBucketIndex index;
    index.apply("a", {100, 10, 1, false});
    index.apply("b", {200, 20, 2, false});
    EXPECT_THROW(index.apply("c", {300, 30, 2, false}), std::logic_error);
    EXPECT_EQ(index.find("c"), nullptr);
    EXPECT_EQ(index.find("b")->offset, 200u);
    EXPECT_EQ(index.liveBytes(), 30u);
    EXPECT_THROW(index.apply("a", {400, 40, 2, false}), std::logic_error);
    EXPECT_EQ(index.find("b")->offset, 200u);  // b's entry is untouched
    EXPECT_EQ(index.size(), 1u);               // a's version went with the refusal
}

}  // namespace
}  // namespace kvexec::storage
