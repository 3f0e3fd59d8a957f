// storage/revision_switch.h: writing revision N+1 of a vBucket beside
// revision N and switching to it, what compaction and rollback share.
//
// The new revision is written to "<vbid>.kv.<N+1><suffix>" (a temporary
// name that open() deletes: kTemporarySuffixes), synced, then renamed to
// "<vbid>.kv.<N+1>": after a crash open() keeps the highest revision, so
// either N or N+1 is there, whole. switchRevision() does the rename and the
// publication under the vBucket's write lock: the new index, high seqno and
// revision become visible at once, N's cached handle is dropped before
// anyone can acquire it again, and N's file is removed last (only once the
// directory is synced: until then, open() removes it). Readers that took a
// handle of N before the switch keep reading N (the handle pins the file).
//
// Each user has its own suffix, so a compaction and a rollback of the same
// vBucket never write the same temporary file; the one whose revision is
// overtaken gives up (compaction) before it renames.
//
// Thread safety: a RevisionWriter belongs to one thread; switchRevision
// requires the vBucket's write lock.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "storage/kv_store_impl.h"
#include "storage/record_format.h"

namespace kvexec::storage {

inline constexpr std::string_view kCompactionSuffix = ".compact";
inline constexpr std::string_view kRollbackSuffix = ".rollback";
// Unfinished output of a revision switch, deleted at open.
inline constexpr std::array<std::string_view, 2> kTemporarySuffixes = {kCompactionSuffix,
                                                                       kRollbackSuffix};

// Appends to the temporary file of a new revision through a buffer. Unless
// switched, the destructor removes the temporary file.
class RevisionWriter {
  public:
    // Creates the temporary file (truncating a left-over one) and starts it
    // with the file header of `revision`. Throws StorageError.
    RevisionWriter(KVStore::Impl& store, Vbid vbid, Revision revision, std::string_view suffix);
    ~RevisionWriter();
    RevisionWriter(const RevisionWriter&) = delete;
    RevisionWriter& operator=(const RevisionWriter&) = delete;

    // Appends one record; returns its size. Its offset is size() before.
    std::size_t appendDocument(const Document& doc);
    void appendCommit(const format::CommitInfo& commit);
    // Appends bytes [from, to) of `source` verbatim.
    void copyFrom(const FileHandle& source, std::uint64_t from, std::uint64_t to);
    // Writes out what is buffered.
    void flush();

    Revision revision() const noexcept { return revision_; }
    const std::string& finalPath() const noexcept { return finalPath_; }
    std::uint64_t size() const noexcept { return written_ + buffer_.size(); }

    // Flushes and syncs what was appended so far (the file stays open).
    // Throws StorageError.
    void sync();
    // Flushes, syncs and closes the file, then renames it to finalPath().
    // Throws StorageError (the temporary file is then removed).
    void syncAndRename();

  private:
    void maybeFlush();

    FileOps& ops_;
    Revision revision_;
    std::string finalPath_;
    std::string path_;  // the temporary name
    int fd_ = -1;
    bool renamed_ = false;
    std::string buffer_;
    std::uint64_t written_ = 0;
};

// Switches the vBucket from revision `from` (at `fromPath`) to the new
// revision in `out`, whose contents `index` and `highSeqno` describe:
// syncs and renames it, syncs the directory, publishes, drops the cached
// handle of `from`, removes its file. The caller has checked, under the
// same hold of writeMutex, that the vBucket is still at `from`. Throws
// StorageError if the new file cannot be synced or renamed (nothing is
// published then, and `from` stays in place).
void switchRevision(KVStore::Impl& store, Vbid vbid, VBucketState& vb, Revision from,
                    const std::string& fromPath, RevisionWriter& out, VBucketIndex index,
                    Seqno highSeqno) REQUIRES(vb.writeMutex);

}  // namespace kvexec::storage
