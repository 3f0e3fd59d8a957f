// Compaction: copy the live documents of revision N into N+1, then switch.
//
// Phase 1 copies a snapshot of the index without the write lock, so saves
// go on. Phase 2 takes the write lock, copies what was saved meanwhile,
// syncs, renames "<vbid>.kv.<N+1>.compact" to "<vbid>.kv.<N+1>" (the atomic
// switch: after a crash, open() keeps the highest revision), publishes the
// new index and revision, and drops N's cached handle before anyone can use
// it again; N's file is removed last.
#include <fcntl.h>

#include <cerrno>
#include <utility>
#include <vector>

#include "storage/file_io.h"
#include "storage/kv_store_impl.h"
#include "storage/record_format.h"

namespace kvexec::storage {
namespace {

constexpr std::size_t kFlushBytes = 1 << 20;

// Appends records to the new file through a buffer and remembers where each
// document went.
class CompactionWriter {
  public:
    CompactionWriter(KVStore::Impl& store, std::string path, Vbid vbid, Revision revision)
        : ops_(*store.ops), path_(std::move(path)) {
        fd_ = store.openUncached(path_, O_RDWR | O_CREAT | O_TRUNC);
        buffer_ = format::encodeFileHeader({vbid, revision});
        batchStart_ = format::kFileHeaderSize;
    }
    ~CompactionWriter() {
        if (fd_ >= 0) {
            ops_.close(fd_);
        }
        if (!renamed_) {
            ops_.unlink(path_);
        }
    }
    CompactionWriter(const CompactionWriter&) = delete;
    CompactionWriter& operator=(const CompactionWriter&) = delete;

    void add(Document&& doc) {
        const auto offset = written_ + buffer_.size();
        const auto size = format::appendDocument(buffer_, doc);
        ++batchCount_;
        docs_.emplace_back(std::move(doc.key), IndexEntry{offset, static_cast<std::uint32_t>(size),
                                                          doc.seqno, doc.deleted});
        if (buffer_.size() >= kFlushBytes) {
            flush();
        }
    }

    void commit(Seqno highSeqno) {
        format::appendCommit(buffer_, {highSeqno, batchStart_, batchCount_});
        batchCount_ = 0;
        flush();
        batchStart_ = written_;
    }

    void syncAndRename(const std::string& finalPath) {
        io::sync(ops_, fd_, path_);
        ops_.close(fd_);
        fd_ = -1;
        if (const int r = ops_.rename(path_, finalPath); r < 0) {
            io::throwIo("rename to " + finalPath, path_, r);
        }
        renamed_ = true;
    }

    std::uint64_t size() const noexcept { return written_ + buffer_.size(); }
    std::vector<std::pair<std::string, IndexEntry>>& docs() noexcept { return docs_; }

  private:
    void flush() {
        io::writeAll(ops_, fd_, path_, buffer_, written_);
        written_ += buffer_.size();
        buffer_.clear();
    }

    FileOps& ops_;
    std::string path_;
    int fd_ = -1;
    bool renamed_ = false;
    std::string buffer_;
    std::uint64_t written_ = 0;
    std::uint64_t batchStart_ = 0;
    std::uint32_t batchCount_ = 0;
    std::vector<std::pair<std::string, IndexEntry>> docs_;
};

struct Snapshot {
    Revision revision;
    Seqno highSeqno;
    std::uint64_t size;
    std::vector<IndexEntry> entries;
    FileHandlePtr handle;
};

Snapshot takeSnapshot(KVStore::Impl& store, Vbid vbid, VBucketState& vb, Seqno from) {
    detail::ReaderLock state(vb.stateMutex);
    store.requireUsable(vbid, vb);
    return Snapshot{vb.revision, vb.highSeqno, vb.committedEnd, vb.index.fromSeqno(from),
                    store.cache.acquire(vbid, vb.revision, vb.path)};
}

// Copies the snapshot's documents, dropping tombstones below purgeBefore.
void copyDocuments(KVStore::Impl& store, const Snapshot& snap, Seqno purgeBefore,
                   CompactionWriter& out, CompactionResult& result) {
    for (const auto& entry : snap.entries) {
        if (entry.deleted && entry.seqno < purgeBefore) {
            ++result.tombstonesPurged;
            continue;
        }
        out.add(store.readDocument(*snap.handle, entry));
        ++result.documentsKept;
    }
}

void publish(VBucketState& vb, Revision revision, std::string path, CompactionWriter& out)
    REQUIRES(vb.writeMutex) {
    VBucketIndex index;
    for (const auto& [key, entry] : out.docs()) {
        index.apply(key, entry);  // in seqno order: later versions win
    }
    detail::WriterLock state(vb.stateMutex);
    vb.index = std::move(index);
    vb.revision = revision;
    vb.path = std::move(path);
    vb.committedEnd = out.size();
    vb.tailDirty = false;
}

}  // namespace

CompactionResult compactVBucket(KVStore::Impl& store, Vbid vbid, Seqno purgeBeforeSeqno) {
    auto& vb = store.vb(vbid);
    detail::MutexLock compaction(vb.compactionMutex);
    CompactionResult result;

    const auto snap = takeSnapshot(store, vbid, vb, 0);
    const Revision next = snap.revision + 1;
    CompactionWriter out(store, store.pathOf(vbid, next) + ".compact", vbid, next);
    copyDocuments(store, snap, purgeBeforeSeqno, out, result);
    out.commit(snap.highSeqno);

    detail::MutexLock write(vb.writeMutex);
    std::string oldPath;
    {
        detail::ReaderLock state(vb.stateMutex);
        if (!vb.exists || vb.revision != snap.revision || vb.openError) {
            result.aborted = true;  // deleted or recreated meanwhile: out removes its file
            return result;
        }
        oldPath = vb.path;
    }
    const auto since = takeSnapshot(store, vbid, vb, snap.highSeqno + 1);
    if (!since.entries.empty()) {
        copyDocuments(store, since, 0, out, result);
        out.commit(since.highSeqno);
    }
    auto newPath = store.pathOf(vbid, next);
    out.syncAndRename(newPath);
    const bool dirSynced = store.ops->syncDirectory(store.dir) == 0;
    publish(vb, next, std::move(newPath), out);
    store.cache.erase(vbid, snap.revision);
    if (dirSynced) {
        // If the rename might not be durable yet, keep revision N: open()
        // removes it once N+1 is there for sure.
        store.ops->unlink(oldPath);
    }
    result.newRevision = next;
    result.bytesBefore = snap.size;
    result.bytesAfter = out.size();
    return result;
}

}  // namespace kvexec::storage
