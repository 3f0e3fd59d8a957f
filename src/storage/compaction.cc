// Compaction: copy the live documents of revision N into N+1, then switch.
//
// Phase 1 copies a snapshot of the index without the write lock, so saves
// go on, and syncs the copy. Phase 2 takes the write lock, copies what was
// saved meanwhile, syncs, renames "<vbid>.kv.<N+1>.compact" to
// "<vbid>.kv.<N+1>" (the atomic switch: after a crash, open() keeps the
// highest revision), publishes the new index and revision, and drops N's
// cached handle before anyone can use it again; N's file is removed last
// (revision_switch.h). A rollback or a delete-and-recreate meanwhile
// changes the revision: compaction gives up.
#include <string>
#include <utility>
#include <vector>

#include "storage/document_reader.h"
#include "storage/kv_store_impl.h"
#include "storage/revision_switch.h"

namespace kvexec::storage {
namespace {

// Writes the new revision as batches of documents and remembers where each
// document went.
class CompactionWriter {
  public:
    CompactionWriter(KVStore::Impl& store, Vbid vbid, Revision revision)
        : out_(store, vbid, revision, kCompactionSuffix), batchStart_(out_.size()) {}

    void add(Document&& doc) {
        const auto offset = out_.size();
        const auto size = out_.appendDocument(doc);
        ++batchCount_;
        docs_.emplace_back(std::move(doc.key), IndexEntry{offset, static_cast<std::uint32_t>(size),
                                                          doc.seqno, doc.deleted});
    }

    void commit(Seqno highSeqno) {
        out_.appendCommit({highSeqno, batchStart_, batchCount_});
        out_.flush();
        batchCount_ = 0;
        batchStart_ = out_.size();
    }

    // The index of what was written (in seqno order: later versions win).
    VBucketIndex index() const {
        VBucketIndex index;
        index.reserve(docs_.size());
        for (const auto& [key, entry] : docs_) {
            index.apply(key, entry);
        }
        return index;
    }

    RevisionWriter& file() noexcept { return out_; }

  private:
    RevisionWriter out_;
    std::uint64_t batchStart_;
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
    DocumentReader reader(*store.ops, *snap.handle, snap.entries);
    for (std::size_t i = 0; i < snap.entries.size(); ++i) {
        const auto& entry = snap.entries[i];
        if (entry.deleted && entry.seqno < purgeBefore) {
            ++result.tombstonesPurged;
            continue;
        }
        out.add(reader.read(i));
        ++result.documentsKept;
    }
}

}  // namespace

CompactionResult compactVBucket(KVStore::Impl& store, Vbid vbid, Seqno purgeBeforeSeqno) {
    auto& vb = store.vb(vbid);
    detail::MutexLock compaction(vb.compactionMutex);
    CompactionResult result;

    const auto snap = takeSnapshot(store, vbid, vb, 0);
    const Revision next = snap.revision + 1;
    CompactionWriter out(store, vbid, next);
    copyDocuments(store, snap, purgeBeforeSeqno, out, result);
    out.commit(snap.highSeqno);
    // Synced before the write lock is taken: the sync under it, at the
    // switch, then writes only what was saved meanwhile, and the vBucket's
    // saves wait for that alone (they waited for the whole file's sync).
    out.file().sync();

    detail::MutexLock write(vb.writeMutex);
    std::string oldPath;
    {
        detail::ReaderLock state(vb.stateMutex);
        if (!vb.exists || vb.revision != snap.revision || vb.openError) {
            // Deleted, recreated or rolled back meanwhile: out removes its file.
            result.aborted = true;
            return result;
        }
        oldPath = vb.path;
    }
    const auto since = takeSnapshot(store, vbid, vb, snap.highSeqno + 1);
    if (!since.entries.empty()) {
        copyDocuments(store, since, 0, out, result);
        out.commit(since.highSeqno);
    }
    // since.highSeqno: the current one (writeMutex is held).
    switchRevision(store, vbid, vb, snap.revision, oldPath, out.file(), out.index(),
                   since.highSeqno);
    result.newRevision = next;
    result.bytesBefore = snap.size;
    result.bytesAfter = out.file().size();
    return result;
}

}  // namespace kvexec::storage
