// file_cache.cc: FileCache, the LRU cache of open vBucket file handles.
#include "kvexec/storage/file_cache.h"

#include <fcntl.h>
#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "kvexec/storage/storage_error.h"
#include "storage/file_io.h"

namespace kvexec::storage {

FileHandle::FileHandle(std::shared_ptr<FileOps> ops, int fd, std::string path, Vbid vbid,
                       Revision revision)
    : ops_(std::move(ops)), fd_(fd), path_(std::move(path)), vbid_(vbid), revision_(revision) {}

FileHandle::~FileHandle() {
    // Nothing to do on failure: saves sync before acknowledging, and the
    // descriptor is released by the kernel either way.
    ops_->close(fd_);
}

std::size_t FileCache::KeyHash::operator()(const Key& k) const noexcept {
    return std::hash<std::uint64_t>{}(k.revision * 0x9E3779B97F4A7C15ull ^ k.vbid);
}

FileCache::FileCache(std::shared_ptr<FileOps> ops, std::size_t capacity, bool enabled)
    : ops_(std::move(ops)), capacity_(capacity ? capacity : defaultCapacity()), enabled_(enabled) {}

FileCache::~FileCache() = default;

std::size_t FileCache::defaultCapacity() {
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) {
        return 512;
    }
    return std::max<std::size_t>(1, static_cast<std::size_t>(limit.rlim_cur / 2));
}

FileHandlePtr FileCache::acquire(Vbid vbid, Revision revision, const std::string& path) {
    const Key key{vbid, revision};
    if (enabled_) {
        if (auto handle = lookup(key)) {
            hits_.fetch_add(1, std::memory_order_relaxed);
            return handle;
        }
    }
    misses_.fetch_add(1, std::memory_order_relaxed);
    auto handle = openFile(vbid, revision, path);
    return enabled_ ? insert(key, std::move(handle)) : handle;
}

FileHandlePtr FileCache::lookup(const Key& key) {
    std::lock_guard lock(mutex_);
    auto it = index_.find(key);
    if (it == index_.end()) {
        return nullptr;
    }
    lru_.splice(lru_.begin(), lru_, it->second);
    return it->second->second;
}

FileHandlePtr FileCache::openFile(Vbid vbid, Revision revision, const std::string& path) {
    int fd = ops_->open(path, O_RDWR | O_CLOEXEC, 0);
    if (fd == -EMFILE || fd == -ENFILE) {
        evictOne();
        fd = ops_->open(path, O_RDWR | O_CLOEXEC, 0);
        if (fd == -EMFILE || fd == -ENFILE) {
            const auto st = stats();
            throw StorageError(StorageError::Kind::OutOfFileHandles,
                               "kvexec storage: cannot open " + path + ": " + std::strerror(-fd) +
                                   " even after evicting a cached handle (" +
                                   std::to_string(st.openHandles) + " cached, capacity " +
                                   std::to_string(capacity_) + ")",
                               path, std::nullopt, -fd);
        }
    }
    if (fd < 0) {
        io::throwIo("open", path, fd);
    }
    return std::make_shared<FileHandle>(ops_, fd, path, vbid, revision);
}

FileHandlePtr FileCache::insert(const Key& key, FileHandlePtr handle) {
    std::vector<FileHandlePtr> evicted;
    std::unique_lock lock(mutex_);
    if (auto it = index_.find(key); it != index_.end()) {
        // Another thread opened it meanwhile: share theirs, close ours.
        lru_.splice(lru_.begin(), lru_, it->second);
        evicted.push_back(std::move(handle));
        handle = it->second->second;
    } else {
        lru_.emplace_front(key, handle);
        index_.emplace(key, lru_.begin());
        while (lru_.size() > capacity_ && evictLruLocked(evicted)) {
        }
    }
    lock.unlock();
    evicted.clear();
    return handle;
}

bool FileCache::evictLruLocked(std::vector<FileHandlePtr>& out) {
    if (lru_.empty()) {
        return false;
    }
    index_.erase(lru_.back().first);
    out.push_back(std::move(lru_.back().second));
    lru_.pop_back();
    evictions_.fetch_add(1, std::memory_order_relaxed);
    return true;
}

bool FileCache::evictOne() {
    std::vector<FileHandlePtr> evicted;
    {
        std::lock_guard lock(mutex_);
        if (!evictLruLocked(evicted)) {
            return false;
        }
    }
    evicted.clear();  // closes outside the lock (unless still in use)
    return true;
}

void FileCache::erase(Vbid vbid, Revision revision) {
    FileHandlePtr dropped;
    std::lock_guard lock(mutex_);
    if (auto it = index_.find(Key{vbid, revision}); it != index_.end()) {
        dropped = std::move(it->second->second);
        lru_.erase(it->second);
        index_.erase(it);
    }
    // `dropped` is declared before `lock`, so it is released after unlocking.
}

void FileCache::erase(Vbid vbid) {
    std::vector<FileHandlePtr> dropped;
    std::lock_guard lock(mutex_);
    for (auto it = lru_.begin(); it != lru_.end();) {
        if (it->first.vbid == vbid) {
            index_.erase(it->first);
            dropped.push_back(std::move(it->second));
            it = lru_.erase(it);
        } else {
            ++it;
        }
    }
}

FileCacheStats FileCache::stats() const {
    FileCacheStats s;
    s.hits = hits_.load(std::memory_order_relaxed);
    s.misses = misses_.load(std::memory_order_relaxed);
    s.evictions = evictions_.load(std::memory_order_relaxed);
    std::lock_guard lock(mutex_);
    s.openHandles = lru_.size();
    return s;
}

}  // namespace kvexec::storage
