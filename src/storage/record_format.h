// storage/record_format.h: the bytes of a vBucket file (docs/storage.md).
//
//   file    = header record*
//   header  = 32 bytes: crc32c(bytes 4..31) u32, magic "KVXF", version u16,
//             reserved u16, vbid u32, revision u64, reserved u64
//   record  = crc32c(bytes 4..end) u32, type u8 (1 document, 2 commit),
//             flags u8 (bit 0: deleted, bit 1: collection key), reserved u16, keyLen u32,
//             valueLen u32, seqno u64, key, value
//   document value (version 2) = meta, then the document's value:
//             meta = 24 bytes: cas u64, flags u32, expiry u32, datatype u8,
//             level u8, deleteSource u8 (1: the document's expiry made
//             this tombstone, else 0), reserved u8[5] (zero); valueLen
//             counts the meta
//   commit  = a record of type 2 with an empty key, seqno = the vBucket's
//             high seqno, and a 24-byte value: magic "KVXCOMMT",
//             batchStart u64 (offset of the batch's first record),
//             docCount u32, reserved u32
// All integers little-endian. A batch is its documents followed by its
// commit; it counts only if the commit is intact and matches them.
// Version 3 (collections) writes every document record with bit 1 set: its
// key carries the collection id in front (the engine's stored key). A
// record without it (version 2) holds a key of the default collection and
// is read as 0x00 + key, so a version 2 file reads unchanged; new records
// appended to it are of version 3.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "kvexec/storage/types.h"

namespace kvexec::storage::format {

inline constexpr std::size_t kFileHeaderSize = 32;
inline constexpr std::size_t kRecordHeaderSize = 24;
inline constexpr std::size_t kCommitValueSize = 24;
inline constexpr std::size_t kDocumentMetaSize = 24;
inline constexpr std::uint16_t kFormatVersion = 3;
inline constexpr std::uint16_t kOldestReadableVersion = 2;
inline constexpr std::size_t kCommitRecordSize = kRecordHeaderSize + kCommitValueSize;
inline constexpr std::uint32_t kMaxKeySize = 64 * 1024;
inline constexpr std::uint32_t kMaxValueSize = 256u << 20;
inline constexpr char kCommitMagic[8] = {'K', 'V', 'X', 'C', 'O', 'M', 'M', 'T'};

enum class RecordType : std::uint8_t { Document = 1, Commit = 2 };

struct FileHeader {
    Vbid vbid;
    Revision revision;
};
std::string encodeFileHeader(const FileHeader& header);
// nullopt if the magic or CRC is wrong. A file of a format version outside
// kOldestReadableVersion..kFormatVersion (version 1 had no document
// metadata) is refused: decodeFileHeader sets `version` so the caller can
// name it in its error.
std::optional<FileHeader> decodeFileHeader(const char* bytes, std::uint16_t* version = nullptr);

struct RecordHeader {
    std::uint32_t crc;
    RecordType type;
    bool deleted;
    bool collectionKey;  // flags bit 1: the key has its collection id (version 3)
    std::uint32_t keyLen, valueLen;
    Seqno seqno;
    std::size_t size() const noexcept { return kRecordHeaderSize + keyLen + valueLen; }
};
// Parses a record header; nullopt if its type or lengths are impossible.
// Does not check the CRC (that needs the whole record).
std::optional<RecordHeader> decodeRecordHeader(const char* bytes);
// True if `record` (header.size() bytes) matches its CRC.
bool verifyRecord(const RecordHeader& header, const char* record);

struct CommitInfo {
    Seqno highSeqno;
    std::uint64_t batchStart;
    std::uint32_t docCount;
};
// The commit fields of a verified commit record; nullopt if the magic is wrong.
std::optional<CommitInfo> decodeCommit(const RecordHeader& header, const char* record);
Document decodeDocument(const RecordHeader& header, const char* record);
// A document record's key as the engine stores it (with its collection id:
// a version 2 record's gets the default collection's, 0x00).
std::string decodeKey(const RecordHeader& header, const char* record);

// Append one encoded record to `out`; return its size.
std::size_t appendDocument(std::string& out, const Document& doc);
std::size_t appendCommit(std::string& out, const CommitInfo& commit);

}  // namespace kvexec::storage::format
