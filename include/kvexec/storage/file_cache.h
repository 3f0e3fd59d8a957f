// kvexec/storage/file_cache.h: a bounded LRU cache of open vBucket files.
//
// Seed 002: opening and closing a vBucket's file on every save is costly
// (close() alone was ~7% of flusher time), so the file stays open across
// saves. The cache bounds how many stay open: its capacity defaults to half
// of RLIMIT_NOFILE so the process never runs out of descriptors because of
// it. Entries are keyed by (vbid, revision): after compaction or a
// delete-and-recreate the vBucket has a new revision, so a handle of the old
// one is never found again; erase() drops such handles eagerly.
//
// Handles are shared: acquire() returns a shared_ptr, and eviction only
// removes the cache's reference. The descriptor closes when the last user
// drops it, so an evicted handle stays valid for a save or read still using
// it, and the close() of an evicted handle happens after the cache's lock is
// released (never under a lock a save needs). The cache therefore bounds
// idle handles; in-use ones may briefly exceed it by the number of
// concurrent users.
//
// If open() fails with EMFILE or ENFILE, the cache evicts its least recently
// used handle and retries once; if that fails too, acquire() throws
// StorageError(OutOfFileHandles). Disabled, the cache keeps nothing: each
// acquire() opens a fresh handle that closes when released (the open/close
// per save that the seed replaced), so benchmarks can compare both.
//
// Thread safety: every member may be called from any thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "kvexec/storage/file_ops.h"
#include "kvexec/storage/types.h"

namespace kvexec::storage {

// One open descriptor of one revision of one vBucket's file; closes it on
// destruction (a close error there is counted, not thrown: the data was
// already synced or the mode promised nothing).
class FileHandle {
  public:
    FileHandle(std::shared_ptr<FileOps> ops, int fd, std::string path, Vbid vbid,
               Revision revision);
    ~FileHandle();
    FileHandle(const FileHandle&) = delete;
    FileHandle& operator=(const FileHandle&) = delete;

    int fd() const noexcept { return fd_; }
    const std::string& path() const noexcept { return path_; }
    Vbid vbid() const noexcept { return vbid_; }
    Revision revision() const noexcept { return revision_; }

  private:
    std::shared_ptr<FileOps> ops_;
    int fd_;
    std::string path_;
    Vbid vbid_;
    Revision revision_;
};
using FileHandlePtr = std::shared_ptr<FileHandle>;

struct FileCacheStats {
    std::uint64_t hits = 0;       // acquire() served by a cached handle
    std::uint64_t misses = 0;     // acquire() that had to open the file
    std::uint64_t evictions = 0;  // handles dropped to respect the capacity or on EMFILE
    std::size_t openHandles = 0;  // handles held by the cache right now
};

class FileCache {
  public:
    // capacity 0 means defaultCapacity().
    FileCache(std::shared_ptr<FileOps> ops, std::size_t capacity = 0, bool enabled = true);
    ~FileCache();
    FileCache(const FileCache&) = delete;
    FileCache& operator=(const FileCache&) = delete;

    // Half of the soft RLIMIT_NOFILE, at least 1.
    static std::size_t defaultCapacity();

    // The open handle of (vbid, revision), opening `path` read-write if it is
    // not cached. Throws StorageError (Io, or OutOfFileHandles).
    FileHandlePtr acquire(Vbid vbid, Revision revision, const std::string& path);
    // Drops the cached handle of one revision / every revision of a vBucket.
    void erase(Vbid vbid, Revision revision);
    void erase(Vbid vbid);
    // Drops the least recently used handle (to free a descriptor after
    // EMFILE elsewhere). Returns false if the cache was empty.
    bool evictOne();

    bool enabled() const noexcept { return enabled_; }
    std::size_t capacity() const noexcept { return capacity_; }
    FileCacheStats stats() const;

  private:
    struct Key {
        Vbid vbid;
        Revision revision;
        bool operator==(const Key&) const = default;
    };
    struct KeyHash {
        std::size_t operator()(const Key& k) const noexcept;
    };
    using Lru = std::list<std::pair<Key, FileHandlePtr>>;  // front: most recent

    FileHandlePtr lookup(const Key& key);
    FileHandlePtr openFile(Vbid vbid, Revision revision, const std::string& path);
    FileHandlePtr insert(const Key& key, FileHandlePtr handle);
    // Removes the least recently used entry into `out` (closed by the caller
    // once no lock is held). Caller holds mutex_.
    bool evictLruLocked(std::vector<FileHandlePtr>& out);

    const std::shared_ptr<FileOps> ops_;
    const std::size_t capacity_;
    const bool enabled_;

    // A public header cannot use the library's private lock annotations
    // (executor/thread_annotations.h): the comment convention instead.
    mutable std::mutex mutex_;
    Lru lru_;                                                // guarded by mutex_
    std::unordered_map<Key, Lru::iterator, KeyHash> index_;  // guarded by mutex_

    std::atomic<std::uint64_t> hits_{0}, misses_{0}, evictions_{0};
};

}  // namespace kvexec::storage
