// vbucket_loader.cc: open a vBucket file: check the header, replay commits, cut a torn tail.
#include "storage/vbucket_loader.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "storage/file_io.h"
#include "storage/record_format.h"

namespace kvexec::storage {
namespace {

using namespace format;

constexpr std::size_t kChunk = 1 << 20;

// Serves byte ranges of the file from a window buffer, so a scan costs one
// read per megabyte rather than one per record.
class ChunkReader {
  public:
    ChunkReader(FileOps& ops, int fd, const std::string& path, std::uint64_t fileSize)
        : ops_(ops), fd_(fd), path_(path), fileSize_(fileSize) {}

    std::uint64_t fileSize() const noexcept { return fileSize_; }

    // [offset, offset + len) or nullptr past the end of the file. Valid until
    // the next call.
    const char* view(std::uint64_t offset, std::size_t len) {
        if (offset > fileSize_ || len > fileSize_ - offset) {
            return nullptr;
        }
        if (offset < start_ || offset + len > start_ + buf_.size()) {
            const auto want = std::max<std::uint64_t>(len, kChunk);
            buf_.resize(static_cast<std::size_t>(std::min(want, fileSize_ - offset)));
            io::readAll(ops_, fd_, path_, buf_.data(), buf_.size(), offset);
            start_ = offset;
        }
        return buf_.data() + (offset - start_);
    }

  private:
    FileOps& ops_;
    int fd_;
    const std::string& path_;
    std::uint64_t fileSize_;
    std::vector<char> buf_;
    std::uint64_t start_ = 0;
};

struct Record {
    RecordHeader header;
    const char* bytes;
};

// The intact record at pos, or nullopt if it is truncated or damaged.
std::optional<Record> tryRecord(ChunkReader& reader, std::uint64_t pos) {
    const char* head = reader.view(pos, kRecordHeaderSize);
    if (head == nullptr) {
        return std::nullopt;
    }
    const auto header = decodeRecordHeader(head);
    if (!header) {
        return std::nullopt;
    }
    const char* bytes = reader.view(pos, header->size());
    if (bytes == nullptr || !verifyRecord(*header, bytes)) {
        return std::nullopt;
    }
    return Record{*header, bytes};
}

// The offset of an intact commit record starting after `pos` whose batch
// begins at or after `lastCommitEnd`, if any.
std::optional<std::uint64_t> findCommitAfter(ChunkReader& reader, std::uint64_t pos,
                                             std::uint64_t lastCommitEnd) {
    const std::string_view magic(kCommitMagic, sizeof kCommitMagic);
    for (std::uint64_t chunk = pos; chunk < reader.fileSize(); chunk += kChunk) {
        const auto len = static_cast<std::size_t>(
            std::min<std::uint64_t>(kChunk + magic.size() - 1, reader.fileSize() - chunk));
        std::vector<std::uint64_t> candidates;
        const std::string_view window(reader.view(chunk, len), len);
        for (auto at = window.find(magic); at != std::string_view::npos;
             at = window.find(magic, at + 1)) {
            const std::uint64_t valueAt = chunk + at;
            if (valueAt >= pos + kRecordHeaderSize + 1) {
                candidates.push_back(valueAt - kRecordHeaderSize);
            }
        }
        for (const auto start : candidates) {
            const auto rec = tryRecord(reader, start);
            if (!rec || rec->header.type != RecordType::Commit) {
                continue;
            }
            const auto commit = decodeCommit(rec->header, rec->bytes);
            if (commit && commit->batchStart >= lastCommitEnd && commit->batchStart < start) {
                return start;
            }
        }
    }
    return std::nullopt;
}

// Header check; returns false if the file is too short to hold one (a create
// torn before its header was written).
bool checkHeader(ChunkReader& reader, const std::string& path, Vbid vbid, Revision revision) {
    const char* bytes = reader.view(0, kFileHeaderSize);
    if (bytes == nullptr) {
        return false;
    }
    std::uint16_t version = kFormatVersion;
    const auto header = decodeFileHeader(bytes, &version);
    if (!header && (version < kOldestReadableVersion || version > kFormatVersion)) {
        io::throwCorrupt(path, 0,
                         "file format version " + std::to_string(version) +
                             " is not supported (this build reads versions " +
                             std::to_string(kOldestReadableVersion) + " to " +
                             std::to_string(kFormatVersion) + "; see docs/storage.md)");
    }
    if (!header) {
        io::throwCorrupt(path, 0, "invalid file header");
    }
    if (header->vbid != vbid || header->revision != revision) {
        io::throwCorrupt(path, 0,
                         "header names vBucket " + std::to_string(header->vbid) + " revision " +
                             std::to_string(header->revision));
    }
    return true;
}

struct PendingDoc {
    std::string key;
    IndexEntry entry;
};

class Replayer {
  public:
    // Commits whose high seqno exceeds maxSeqno end the replay unapplied.
    Replayer(ChunkReader& reader, const std::string& path,
             Seqno maxSeqno = std::numeric_limits<Seqno>::max())
        : reader_(reader), path_(path), maxSeqno_(maxSeqno) {}

    // Replays from the end of the header; returns where reading stopped.
    std::uint64_t run(LoadedVBucket& out) {
        out.committedEnd = kFileHeaderSize;
        std::uint64_t pos = kFileHeaderSize;
        while (pos < reader_.fileSize()) {
            const auto rec = tryRecord(reader_, pos);
            if (!rec) {
                break;
            }
            if (rec->header.type == RecordType::Document) {
                addDoc(*rec, pos, out);
            } else if (!commit(*rec, pos, out)) {
                break;
            }
            pos += rec->header.size();
        }
        return pos;
    }

    // Whether run() stopped at a commit above maxSeqno.
    bool reachedLimit() const noexcept { return reachedLimit_; }

  private:
    void addDoc(const Record& rec, std::uint64_t pos, const LoadedVBucket& out) {
        const Seqno previous = pending_.empty() ? out.highSeqno : pending_.back().entry.seqno;
        if (rec.header.seqno <= previous) {
            io::throwCorrupt(path_, pos,
                             "seqno " + std::to_string(rec.header.seqno) + " does not follow " +
                                 std::to_string(previous));
        }
        pending_.push_back({decodeKey(rec.header, rec.bytes),
                            IndexEntry{pos, static_cast<std::uint32_t>(rec.header.size()),
                                       rec.header.seqno, rec.header.deleted}});
    }

    // Applies the batch; false (nothing applied) if it is past maxSeqno.
    bool commit(const Record& rec, std::uint64_t pos, LoadedVBucket& out) {
        const auto info = decodeCommit(rec.header, rec.bytes);
        const Seqno last = pending_.empty() ? out.highSeqno : pending_.back().entry.seqno;
        if (!info || info->batchStart != out.committedEnd || info->docCount != pending_.size() ||
            info->highSeqno < last) {
            io::throwCorrupt(path_, pos, "commit record does not match its batch");
        }
        if (info->highSeqno > maxSeqno_) {
            reachedLimit_ = true;
            return false;
        }
        for (const auto& doc : pending_) {
            out.index.apply(doc.key, doc.entry);
        }
        pending_.clear();
        out.highSeqno = info->highSeqno;
        out.committedEnd = pos + rec.header.size();
        return true;
    }

    ChunkReader& reader_;
    const std::string& path_;
    const Seqno maxSeqno_;
    bool reachedLimit_ = false;
    std::vector<PendingDoc> pending_;
};

void rewriteHeader(FileOps& ops, int fd, const std::string& path, Vbid vbid, Revision revision) {
    io::truncate(ops, fd, path, 0);
    io::writeAll(ops, fd, path, encodeFileHeader({vbid, revision}), 0);
    io::sync(ops, fd, path);
}

}  // namespace

LoadedVBucket loadVBucketFile(FileOps& ops, int fd, const std::string& path, Vbid vbid,
                              Revision revision) {
    LoadedVBucket out;
    ChunkReader reader(ops, fd, path, io::size(ops, fd, path));
    if (!checkHeader(reader, path, vbid, revision)) {
        rewriteHeader(ops, fd, path, vbid, revision);
        out.committedEnd = kFileHeaderSize;
        out.tornBytes = reader.fileSize();
        return out;
    }
    const std::uint64_t stoppedAt = Replayer(reader, path).run(out);
    if (stoppedAt < reader.fileSize()) {
        if (const auto commitAt = findCommitAfter(reader, stoppedAt, out.committedEnd)) {
            io::throwCorrupt(
                path, stoppedAt,
                "damaged record before the intact commit at offset " + std::to_string(*commitAt));
        }
    }
    if (out.committedEnd < reader.fileSize()) {
        out.tornBytes = reader.fileSize() - out.committedEnd;
        io::truncate(ops, fd, path, out.committedEnd);
        io::sync(ops, fd, path);
    }
    return out;
}

LoadedVBucket replayCommitsUpTo(FileOps& ops, int fd, const std::string& path, std::uint64_t end,
                                Seqno maxSeqno) {
    LoadedVBucket out;
    ChunkReader reader(ops, fd, path, end);
    Replayer replayer(reader, path, maxSeqno);
    const std::uint64_t stoppedAt = replayer.run(out);
    if (!replayer.reachedLimit() && stoppedAt < end) {
        // Read back intact when the file was opened: damaged since.
        io::throwCorrupt(path, stoppedAt, "damaged record in committed data");
    }
    return out;
}

}  // namespace kvexec::storage
