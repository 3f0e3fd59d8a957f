// record_format.cc: encode/decode the file header, document and commit records (CRC-checked).
#include "storage/record_format.h"

#include <cstring>

#include "storage/crc32c.h"

namespace kvexec::storage::format {
namespace {

constexpr char kFileMagic[4] = {'K', 'V', 'X', 'F'};
// The document meta's deleteSource byte for a tombstone its expiry made.
constexpr std::uint8_t kDeletedByExpiry = 1;

template <typename T>
void put(char* p, T v) {
    for (std::size_t i = 0; i < sizeof(T); ++i) {
        p[i] = static_cast<char>(static_cast<std::uint64_t>(v) >> (8 * i));
    }
}

template <typename T>
T get(const char* p) {
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) {
        v |= static_cast<std::uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
    }
    return static_cast<T>(v);
}

// Writes a record header (CRC left 0) at out[pos].
void putRecordHeader(char* p, RecordType type, bool deleted, std::uint32_t keyLen,
                     std::uint32_t valueLen, Seqno seqno) {
    constexpr std::uint8_t kDeleted = 1, kCollectionKey = 2;
    put<std::uint32_t>(p, 0);
    p[4] = static_cast<char>(type);
    const std::uint8_t documentFlags = kCollectionKey | (deleted ? kDeleted : 0);
    p[5] = static_cast<char>(type == RecordType::Document ? documentFlags : 0);
    put<std::uint16_t>(p + 6, 0);
    put<std::uint32_t>(p + 8, keyLen);
    put<std::uint32_t>(p + 12, valueLen);
    put<std::uint64_t>(p + 16, seqno);
}

void sealRecord(char* record, std::size_t size) {
    put<std::uint32_t>(record, crc32c(record + 4, size - 4));
}

}  // namespace

std::string encodeFileHeader(const FileHeader& header) {
    std::string out(kFileHeaderSize, '\0');
    char* p = out.data();
    std::memcpy(p + 4, kFileMagic, 4);
    put<std::uint16_t>(p + 8, kFormatVersion);
    put<std::uint32_t>(p + 12, header.vbid);
    put<std::uint64_t>(p + 16, header.revision);
    sealRecord(p, kFileHeaderSize);
    return out;
}

std::optional<FileHeader> decodeFileHeader(const char* p, std::uint16_t* version) {
    if (std::memcmp(p + 4, kFileMagic, 4) != 0 ||
        get<std::uint32_t>(p) != crc32c(p + 4, kFileHeaderSize - 4)) {
        return std::nullopt;
    }
    if (version != nullptr) {
        *version = get<std::uint16_t>(p + 8);
    }
    if (const auto v = get<std::uint16_t>(p + 8);
        v < kOldestReadableVersion || v > kFormatVersion) {
        return std::nullopt;
    }
    return FileHeader{get<std::uint32_t>(p + 12), get<std::uint64_t>(p + 16)};
}

std::optional<RecordHeader> decodeRecordHeader(const char* p) {
    RecordHeader h{};
    h.crc = get<std::uint32_t>(p);
    const auto type = static_cast<std::uint8_t>(p[4]);
    const auto flags = static_cast<std::uint8_t>(p[5]);
    h.deleted = (flags & 1) != 0;
    h.collectionKey = (flags & 2) != 0;
    h.keyLen = get<std::uint32_t>(p + 8);
    h.valueLen = get<std::uint32_t>(p + 12);
    h.seqno = get<std::uint64_t>(p + 16);
    if ((flags & ~3u) != 0 || get<std::uint16_t>(p + 6) != 0) {
        return std::nullopt;
    }
    if (type == static_cast<std::uint8_t>(RecordType::Document)) {
        h.type = RecordType::Document;
        if (h.keyLen == 0 || h.keyLen > kMaxKeySize || h.valueLen < kDocumentMetaSize ||
            h.valueLen > kMaxValueSize + kDocumentMetaSize) {
            return std::nullopt;
        }
        return h;
    }
    if (type == static_cast<std::uint8_t>(RecordType::Commit)) {
        h.type = RecordType::Commit;
        if (h.keyLen != 0 || h.valueLen != kCommitValueSize || flags != 0) {
            return std::nullopt;
        }
        return h;
    }
    return std::nullopt;
}

bool verifyRecord(const RecordHeader& header, const char* record) {
    return crc32c(record + 4, header.size() - 4) == header.crc;
}

std::optional<CommitInfo> decodeCommit(const RecordHeader& header, const char* record) {
    const char* value = record + kRecordHeaderSize;
    if (header.type != RecordType::Commit || std::memcmp(value, kCommitMagic, 8) != 0) {
        return std::nullopt;
    }
    return CommitInfo{header.seqno, get<std::uint64_t>(value + 8), get<std::uint32_t>(value + 16)};
}

std::string decodeKey(const RecordHeader& header, const char* record) {
    std::string key(header.collectionKey ? 0 : 1, '\0');
    key.append(record + kRecordHeaderSize, header.keyLen);
    return key;
}

Document decodeDocument(const RecordHeader& header, const char* record) {
    const char* meta = record + kRecordHeaderSize + header.keyLen;
    Document doc;
    doc.key = decodeKey(header, record);
    doc.value.assign(meta + kDocumentMetaSize, header.valueLen - kDocumentMetaSize);
    doc.seqno = header.seqno;
    doc.deleted = header.deleted;
    doc.cas = get<std::uint64_t>(meta);
    doc.flags = get<std::uint32_t>(meta + 8);
    doc.expiry = get<std::uint32_t>(meta + 12);
    doc.datatype = static_cast<std::uint8_t>(meta[16]);
    doc.level = static_cast<std::uint8_t>(meta[17]);
    doc.deletedByExpiry = static_cast<std::uint8_t>(meta[18]) == kDeletedByExpiry;
    return doc;
}

std::size_t appendDocument(std::string& out, const Document& doc) {
    const std::size_t start = out.size();
    const std::size_t valueLen = kDocumentMetaSize + doc.value.size();
    const std::size_t size = kRecordHeaderSize + doc.key.size() + valueLen;
    out.resize(start + size);  // zero-filled: the meta's reserved bytes
    char* p = out.data() + start;
    putRecordHeader(p, RecordType::Document, doc.deleted,
                    static_cast<std::uint32_t>(doc.key.size()),
                    static_cast<std::uint32_t>(valueLen), doc.seqno);
    std::memcpy(p + kRecordHeaderSize, doc.key.data(), doc.key.size());
    char* meta = p + kRecordHeaderSize + doc.key.size();
    put<std::uint64_t>(meta, doc.cas);
    put<std::uint32_t>(meta + 8, doc.flags);
    put<std::uint32_t>(meta + 12, doc.expiry);
    meta[16] = static_cast<char>(doc.datatype);
    meta[17] = static_cast<char>(doc.level);
    meta[18] = static_cast<char>(doc.deletedByExpiry ? kDeletedByExpiry : 0);
    std::memcpy(meta + kDocumentMetaSize, doc.value.data(), doc.value.size());
    sealRecord(p, size);
    return size;
}

std::size_t appendCommit(std::string& out, const CommitInfo& commit) {
    const std::size_t start = out.size();
    out.resize(start + kCommitRecordSize);
    char* p = out.data() + start;
    putRecordHeader(p, RecordType::Commit, false, 0, kCommitValueSize, commit.highSeqno);
    char* value = p + kRecordHeaderSize;
    std::memcpy(value, kCommitMagic, 8);
    put<std::uint64_t>(value + 8, commit.batchStart);
    put<std::uint32_t>(value + 16, commit.docCount);
    put<std::uint32_t>(value + 20, 0);
    sealRecord(p, kCommitRecordSize);
    return kCommitRecordSize;
}

}  // namespace kvexec::storage::format
