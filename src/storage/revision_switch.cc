// revision_switch.cc: write revision N+1 beside N, then switch to it.
#include "storage/revision_switch.h"

#include <fcntl.h>

#include <algorithm>
#include <utility>

#include "storage/file_io.h"

namespace kvexec::storage {
namespace {

// The buffer is written out once it holds this much, and has room for
// twice as much from the start: grown from empty, each doubling copied
// what it held into fresh pages (compaction spent a fifth of its time in
// those copies and page faults).
constexpr std::size_t kFlushBytes = 256 * 1024;

}  // namespace

RevisionWriter::RevisionWriter(KVStore::Impl& store, Vbid vbid, Revision revision,
                               std::string_view suffix)
    : ops_(*store.ops), revision_(revision), finalPath_(store.pathOf(vbid, revision)) {
    path_ = finalPath_;
    path_ += suffix;
    fd_ = store.openUncached(path_, O_RDWR | O_CREAT | O_TRUNC);
    buffer_.reserve(2 * kFlushBytes);
    buffer_ += format::encodeFileHeader({vbid, revision});
}

RevisionWriter::~RevisionWriter() {
    if (fd_ >= 0) {
        ops_.close(fd_);
    }
    if (!renamed_) {
        ops_.unlink(path_);
    }
}

std::size_t RevisionWriter::appendDocument(const Document& doc) {
    const auto size = format::appendDocument(buffer_, doc);
    maybeFlush();
    return size;
}

void RevisionWriter::appendCommit(const format::CommitInfo& commit) {
    format::appendCommit(buffer_, commit);
    maybeFlush();
}

void RevisionWriter::copyFrom(const FileHandle& source, std::uint64_t from, std::uint64_t to) {
    while (from < to) {
        const auto len = static_cast<std::size_t>(std::min<std::uint64_t>(kFlushBytes, to - from));
        const auto at = buffer_.size();
        buffer_.resize(at + len);
        io::readAll(ops_, source.fd(), source.path(), buffer_.data() + at, len, from);
        from += len;
        maybeFlush();
    }
}

void RevisionWriter::flush() {
    io::writeAll(ops_, fd_, path_, buffer_, written_);
    written_ += buffer_.size();
    buffer_.clear();
}

void RevisionWriter::maybeFlush() {
    if (buffer_.size() >= kFlushBytes) {
        flush();
    }
}

void RevisionWriter::sync() {
    flush();
    io::sync(ops_, fd_, path_);
}

void RevisionWriter::syncAndRename() {
    sync();
    ops_.close(fd_);
    fd_ = -1;
    if (const int r = ops_.rename(path_, finalPath_); r < 0) {
        std::string op = "rename to ";
        op += finalPath_;
        io::throwIo(op, path_, r);
    }
    renamed_ = true;
}

void switchRevision(KVStore::Impl& store, Vbid vbid, VBucketState& vb, Revision from,
                    const std::string& fromPath, RevisionWriter& out, VBucketIndex index,
                    Seqno highSeqno) {
    out.syncAndRename();
    const bool dirSynced = store.ops->syncDirectory(store.dir) == 0;
    {
        detail::WriterLock state(vb.stateMutex);
        vb.index = std::move(index);
        vb.revision = out.revision();
        vb.path = out.finalPath();
        vb.highSeqno = highSeqno;
        vb.committedEnd = out.size();
        vb.tailDirty = false;
    }
    store.cache.erase(vbid, from);
    if (dirSynced) {
        // If the rename might not be durable yet, keep revision `from`:
        // open() removes it once the new one is there for sure.
        store.ops->unlink(fromPath);
    }
}

}  // namespace kvexec::storage
