// storage/kv_store_impl.h: KVStore's internals, shared by kv_store.cc
// (open, saves, reads, create/delete), compaction.cc, rollback.cc and
// revision_switch.cc.
//
// Locking, per vBucket (never two vBuckets at once):
//   compactionMutex  one compaction at a time; taken first. Rollback does
//                    not take it (a compaction gives up instead).
//   writeMutex       serialises saves, compaction's switch, rollback,
//                    create, delete; held across a save's write and sync
//                    and across a whole rollback.
//   stateMutex       (shared) guards the published state below; a save takes
//                    it exclusively only to publish a synced batch.
// FileCache's own lock is taken under these, never the other way round.
// Every exclusive holder of stateMutex holds writeMutex first, so a writer
// holding writeMutex may keep stateMutex shared across its slow work (a
// save's write and sync) without blocking anyone but itself.
// (GUARDED_BY / REQUIRES: the clang preset checks them.)
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "executor/thread_annotations.h"
#include "kvexec/storage/kv_store.h"
#include "storage/vbucket_index.h"

namespace kvexec::storage {

struct VBucketState {
    detail::Mutex compactionMutex;
    detail::Mutex writeMutex;
    mutable detail::SharedMutex stateMutex;

    // Written only with writeMutex held too.
    bool exists GUARDED_BY(stateMutex) = false;
    // The current revision, or the last used if deleted.
    Revision revision GUARDED_BY(stateMutex) = 0;
    std::string path GUARDED_BY(stateMutex);  // of the current revision's file
    Seqno highSeqno GUARDED_BY(stateMutex) = 0;
    std::uint64_t committedEnd GUARDED_BY(stateMutex) = 0;
    VBucketIndex index GUARDED_BY(stateMutex);
    // Corrupt at open: refuse all but delete.
    std::optional<StorageError> openError GUARDED_BY(stateMutex);

    // Bytes past committedEnd may be left by a failed save and must be
    // truncated before the next append.
    bool tailDirty GUARDED_BY(writeMutex) = false;
};

class KVStore::Impl {
  public:
    explicit Impl(KVStoreConfig config);

    VBucketState& vb(Vbid vbid) const;
    std::string pathOf(Vbid vbid, Revision revision) const;
    // Throws unless the vBucket exists and opened cleanly.
    void requireUsable(Vbid vbid, const VBucketState& vb) const REQUIRES_SHARED(vb.stateMutex);
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
    // The constructor's: no other thread sees the store yet, so they take
    // no locks (unchecked).
    void openDirectory() NO_THREAD_SAFETY_ANALYSIS;
    void loadVBucket(Vbid vbid, Revision revision) NO_THREAD_SAFETY_ANALYSIS;
};

CompactionResult compactVBucket(KVStore::Impl& store, Vbid vbid, Seqno purgeBeforeSeqno);
Seqno rollbackVBucket(KVStore::Impl& store, Vbid vbid, Seqno toSeqno);

}  // namespace kvexec::storage
