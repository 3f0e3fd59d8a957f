// storage/kv_store_impl.h: KVStore's internals, shared by kv_store.cc
// (open, saves, reads, create/delete) and compaction.cc.
//
// Locking, per vBucket (never two vBuckets at once):
//   compactionMutex  one compaction at a time; taken first.
//   writeMutex       serialises saves, compaction's switch, create, delete;
//                    held across a save's write and sync.
//   stateMutex       (shared) guards the published state below; a save takes
//                    it exclusively only to publish a synced batch.
// FileCache's own lock is taken under these, never the other way round.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <vector>

#include "kvexec/storage/kv_store.h"
#include "storage/vbucket_index.h"

namespace kvexec::storage {

struct VBucketState {
    std::mutex compactionMutex;
    std::mutex writeMutex;
    mutable std::shared_mutex stateMutex;

    // Guarded by stateMutex (written only with writeMutex held too).
    bool exists = false;
    Revision revision = 0;  // the current one, or the last used if deleted
    std::string path;       // of the current revision's file
    Seqno highSeqno = 0;
    std::uint64_t committedEnd = 0;
    VBucketIndex index;
    std::optional<StorageError> openError;  // corrupt at open: refuse all but delete

    // Guarded by writeMutex: bytes past committedEnd may be left by a failed
    // save and must be truncated before the next append.
    bool tailDirty = false;
};

class KVStore::Impl {
  public:
    explicit Impl(KVStoreConfig config);

    VBucketState& vb(Vbid vbid) const;
    std::string pathOf(Vbid vbid, Revision revision) const;
    // Throws unless the vBucket exists and opened cleanly. Caller holds
    // writeMutex or stateMutex.
    void requireUsable(Vbid vbid, const VBucketState& vb) const;
    // Reads and verifies the record of `entry` through `handle`.
    Document readDocument(const FileHandle& handle, const IndexEntry& entry) const;
    void syncDirectory();
    // Opens a file outside the cache (create, compaction output); on
    // EMFILE/ENFILE evicts one cached handle and retries once. Throws.
    int openUncached(const std::string& path, int flags);

    KVStoreConfig config;
    std::shared_ptr<FileOps> ops;
    std::string dir;
    mutable FileCache cache;
    std::vector<std::unique_ptr<VBucketState>> vbuckets;
    std::vector<RecoveryEvent> recoveryEvents;  // written only by the constructor
    std::vector<StorageError> openErrors;       // idem

  private:
    void openDirectory();
    void loadVBucket(Vbid vbid, Revision revision);
};

CompactionResult compactVBucket(KVStore::Impl& store, Vbid vbid, Seqno purgeBeforeSeqno);

}  // namespace kvexec::storage
