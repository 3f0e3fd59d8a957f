// kvexec/storage/kv_store.h: the persistent store of a bucket, one
// append-only file per vBucket.
//
// Each vBucket lives in `<dir>/<vbid>.kv.<revision>` (format: docs/storage.md).
// saveDocs() appends a batch of documents and a commit record, syncs per the
// SyncMode, and only then publishes the batch to readers; after a crash a
// batch is visible only if its commit record is intact. Open handles are
// kept in a FileCache unless the cache is disabled.
//
// compact() rewrites a vBucket's live documents into revision N+1 (dropping
// tombstones older than a purge seqno), switches to it atomically (rename)
// and removes revision N. It copies a snapshot without blocking saves, then
// holds the vBucket's write lock only to copy what was saved meanwhile and
// switch; a save therefore never writes to a stale revision, a cached handle
// of revision N is never used again, and a compaction that finds the vBucket
// deleted, recreated or rolled back under it gives up
// (CompactionResult::aborted).
//
// rollback() cuts a vBucket back to a commit (a DCP replica whose history
// diverged from its active's): the file's prefix up to that commit becomes
// revision N+1, switched to as compaction does.
//
// Opening: the constructor loads every vBucket file of `dir`, keeping the
// highest revision and removing older ones and unfinished compaction or
// rollback output.
// A torn tail (bytes after the last intact commit, with no intact commit
// after them) is cut off and listed in recoveryEvents(). Corruption before
// an intact commit is not repaired: that vBucket refuses every operation
// with StorageError(Corruption) naming the file and offset (openErrors()),
// the others work normally.
//
// Errors: StorageError (see storage_error.h); std::invalid_argument for a
// vbid out of range or a batch whose seqnos do not increase past the
// vBucket's high seqno.
//
// Thread safety: every member may be called from any thread. Saves,
// compaction's switch, rollback, create and delete of one vBucket are
// serialised by that vBucket's write lock; get() and scan() never wait for
// a save's I/O or sync (only for the moment a batch is published).
// Different vBuckets are independent. scan() reads a snapshot: documents saved after it started are
// not included, and compaction or rollback does not disturb it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kvexec/storage/file_cache.h"
#include "kvexec/storage/file_ops.h"
#include "kvexec/storage/storage_error.h"
#include "kvexec/storage/types.h"

namespace kvexec::storage {

struct KVStoreConfig {
    std::filesystem::path dir;  // created if missing
    std::size_t numVBuckets = 1024;
    SyncMode syncMode = SyncMode::Fdatasync;
    bool fileCacheEnabled = true;
    std::size_t fileCacheCapacity = 0;  // 0: FileCache::defaultCapacity()
    std::shared_ptr<FileOps> fileOps;   // null: posixFileOps()
};

// A torn tail cut off while opening a vBucket file.
struct RecoveryEvent {
    Vbid vbid;
    std::string path;
    std::uint64_t truncatedAt;   // the end of the last intact commit
    std::uint64_t bytesDropped;  // how much followed it
};

struct CompactionResult {
    bool aborted = false;  // the vBucket was deleted, recreated or rolled back meanwhile
    Revision newRevision = 0;
    std::uint64_t bytesBefore = 0, bytesAfter = 0;
    std::size_t documentsKept = 0, tombstonesPurged = 0;
};

class KVStore {
  public:
    explicit KVStore(KVStoreConfig config);
    ~KVStore();
    KVStore(const KVStore&) = delete;
    KVStore& operator=(const KVStore&) = delete;

    // Creates an empty vBucket (a new revision). Returns false if it exists.
    bool createVBucket(Vbid vbid);
    // Removes the vBucket and its file. Returns false if it did not exist.
    bool deleteVBucket(Vbid vbid);
    bool exists(Vbid vbid) const;

    // Appends the batch atomically and returns the vBucket's persisted high
    // seqno. Seqnos must increase strictly, starting above highSeqno(vbid).
    // An empty batch writes nothing.
    Seqno saveDocs(Vbid vbid, std::span<const Document> batch);

    // The latest version of `key` (a tombstone has deleted == true), or
    // nullopt if the key was never saved or its tombstone was purged.
    std::optional<Document> get(Vbid vbid, std::string_view key) const;

    // Calls fn, in seqno order, for the latest version of every key whose
    // seqno is >= fromSeqno, tombstones included (a change-stream backfill).
    // fn returns false to stop early. Returns the number of calls.
    using ScanCallback = std::function<bool(const Document&)>;
    std::size_t scan(Vbid vbid, Seqno fromSeqno, const ScanCallback& fn) const;

    // Rewrites the vBucket into a new revision without the tombstones whose
    // seqno is below purgeBeforeSeqno.
    CompactionResult compact(Vbid vbid, Seqno purgeBeforeSeqno = 0);

    // Rolls the vBucket back to its newest commit whose high seqno is at
    // most toSeqno: that prefix of the file is copied into revision N+1,
    // which replaces revision N atomically (rename, directory synced), as
    // compact() does; a crash leaves either the old file or the rolled-back
    // one, whole. Returns the vBucket's high seqno afterwards: <= toSeqno,
    // and 0 when no commit qualifies (a compaction folds the history before
    // it into one commit, so rolling back below a compaction's high seqno
    // gives an empty vBucket). toSeqno >= highSeqno(vbid): nothing is done,
    // returns highSeqno(vbid). A compaction running meanwhile gives up
    // (aborted). A vBucket that does not exist: returns 0 and creates
    // nothing. Throws StorageError on I/O failure (the old revision then
    // stays in place).
    Seqno rollback(Vbid vbid, Seqno toSeqno);

    Seqno highSeqno(Vbid vbid) const;
    Revision revision(Vbid vbid) const;
    std::filesystem::path filePath(Vbid vbid) const;  // current revision's file
    std::uint64_t fileSize(Vbid vbid) const;          // bytes committed
    // Bytes of the latest version of each key (tombstones included): the
    // rest of fileSize() is older versions, commit records and the
    // header, what a compaction gives back.
    std::uint64_t liveBytes(Vbid vbid) const;

    std::size_t numVBuckets() const noexcept;
    SyncMode syncMode() const noexcept;
    FileCacheStats fileCacheStats() const;
    std::vector<RecoveryEvent> recoveryEvents() const;
    std::vector<StorageError> openErrors() const;

    class Impl;

  private:
    std::unique_ptr<Impl> impl_;
};

}  // namespace kvexec::storage
