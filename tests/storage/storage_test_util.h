// Helpers of the storage tests: a temporary directory per test, document
// builders, and FaultyFileOps, a FileOps that injects errors on demand.
#pragma once

#include <fcntl.h>
#include <stdlib.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "kvexec/storage/file_ops.h"
#include "kvexec/storage/kv_store.h"
#include "kvexec/storage/types.h"
#include "support/wait.h"

namespace kvexec::storage::test {

class TempDir {
  public:
    TempDir() {
        std::string pattern = "/tmp/kvexec-storage-XXXXXX";
        if (::mkdtemp(pattern.data()) == nullptr) {
            throw std::runtime_error("mkdtemp failed");
        }
        path_ = pattern;
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::filesystem::path& path() const { return path_; }

  private:
    std::filesystem::path path_;
};

inline Document doc(std::string key, std::string value, Seqno seqno, bool deleted = false) {
    return Document{std::move(key), std::move(value), seqno, deleted};
}

// "k<seqno>" (built with += : GCC 12 warns falsely on "k" + std::string).
inline std::string keyOf(std::uint64_t n, std::string_view prefix = "k") {
    std::string out(prefix);
    out += std::to_string(n);
    return out;
}

inline std::string valueFor(Seqno seqno, std::size_t size = 32) {
    std::string v = "value-" + std::to_string(seqno) + "-";
    while (v.size() < size) {
        v += static_cast<char>('a' + (v.size() + seqno) % 26);
    }
    v.resize(size);
    return v;
}

// A batch of `count` new keys "k<seqno>" with seqnos first, first+1, ...
inline std::vector<Document> batchOf(Seqno first, std::size_t count, std::size_t valueSize = 32) {
    std::vector<Document> out;
    for (std::size_t i = 0; i < count; ++i) {
        const Seqno s = first + i;
        out.push_back(doc(keyOf(s), valueFor(s, valueSize), s));
    }
    return out;
}

inline std::string readFile(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void writeFile(const std::filesystem::path& p, const std::string& bytes) {
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

using kvexec::test::waitUntil;

inline KVStoreConfig configFor(const TempDir& dir, std::size_t vbuckets = 4,
                               SyncMode mode = SyncMode::None) {
    KVStoreConfig config;
    config.dir = dir.path();
    config.numVBuckets = vbuckets;
    config.syncMode = mode;
    return config;
}

// Passes every call to the POSIX FileOps unless a fault is armed for it.
class FaultyFileOps final : public FileOps {
  public:
    enum class Op { Open, Close, Pread, Pwrite, Fdatasync, Ftruncate, Rename, Unlink, SyncDir };

    // The next `count` calls of `op` (after `skip` that succeed) fail with err.
    void failNext(Op op, int err, int count = 1, int skip = 0) {
        std::lock_guard lock(mutex_);
        faults_[op] = Fault{err, count, skip};
    }
    // The next pwrite writes at most `bytes` bytes (and reports that).
    void shortWriteNext(std::size_t bytes) {
        std::lock_guard lock(mutex_);
        shortWrite_ = bytes;
    }
    // open() fails with EMFILE while `limit` descriptors opened here are open.
    void setOpenLimit(std::size_t limit) {
        std::lock_guard lock(mutex_);
        openLimit_ = limit;
    }
    // Called (outside any lock of this class) at the start of every open().
    void setOpenHook(std::function<void(const std::string& path)> hook) {
        std::lock_guard lock(mutex_);
        openHook_ = std::move(hook);
    }
    // Called (outside any lock of this class) at the start of every fdatasync().
    void setSyncHook(std::function<void()> hook) {
        std::lock_guard lock(mutex_);
        syncHook_ = std::move(hook);
    }
    void clear() {
        std::lock_guard lock(mutex_);
        faults_.clear();
        shortWrite_ = 0;
        openLimit_ = SIZE_MAX;
    }
    std::size_t calls(Op op) const {
        std::lock_guard lock(mutex_);
        auto it = calls_.find(op);
        return it == calls_.end() ? 0 : it->second;
    }
    std::size_t openDescriptors() const {
        std::lock_guard lock(mutex_);
        return open_;
    }

    int open(const std::string& path, int flags, mode_t mode) override {
        std::function<void(const std::string&)> hook;
        {
            std::lock_guard lock(mutex_);
            hook = openHook_;
        }
        if (hook) {
            hook(path);
        }
        {
            std::lock_guard lock(mutex_);
            if (open_ >= openLimit_) {
                ++calls_[Op::Open];
                return -EMFILE;
            }
        }
        if (int err = injected(Op::Open)) {
            return -err;
        }
        const int fd = real_->open(path, flags, mode);
        if (fd >= 0) {
            std::lock_guard lock(mutex_);
            ++open_;
        }
        return fd;
    }
    int close(int fd) override {
        {
            std::lock_guard lock(mutex_);
            --open_;
        }
        const int r = real_->close(fd);
        const int err = injected(Op::Close);
        return err ? -err : r;
    }
    ssize_t pread(int fd, void* buf, std::size_t count, off_t offset) override {
        if (int err = injected(Op::Pread)) {
            return -err;
        }
        return real_->pread(fd, buf, count, offset);
    }
    ssize_t pwrite(int fd, const void* buf, std::size_t count, off_t offset) override {
        if (int err = injected(Op::Pwrite)) {
            return -err;
        }
        {
            std::lock_guard lock(mutex_);
            if (shortWrite_ != 0) {
                count = std::min(count, shortWrite_);
                shortWrite_ = 0;
            }
        }
        return real_->pwrite(fd, buf, count, offset);
    }
    int fdatasync(int fd) override {
        std::function<void()> hook;
        {
            std::lock_guard lock(mutex_);
            hook = syncHook_;
        }
        if (hook) {
            hook();
        }
        if (int err = injected(Op::Fdatasync)) {
            return -err;
        }
        return real_->fdatasync(fd);
    }
    int ftruncate(int fd, off_t length) override {
        if (int err = injected(Op::Ftruncate)) {
            return -err;
        }
        return real_->ftruncate(fd, length);
    }
    off_t size(int fd) override { return real_->size(fd); }
    int rename(const std::string& from, const std::string& to) override {
        if (int err = injected(Op::Rename)) {
            return -err;
        }
        return real_->rename(from, to);
    }
    int unlink(const std::string& path) override {
        if (int err = injected(Op::Unlink)) {
            return -err;
        }
        return real_->unlink(path);
    }
    int syncDirectory(const std::string& path) override {
        if (int err = injected(Op::SyncDir)) {
            return -err;
        }
        return real_->syncDirectory(path);
    }

  private:
    struct Fault {
        int err = 0;
        int count = 0;
        int skip = 0;
    };

    // The errno to fail this call with, or 0.
    int injected(Op op) {
        std::lock_guard lock(mutex_);
        ++calls_[op];
        auto it = faults_.find(op);
        if (it == faults_.end() || it->second.count == 0) {
            return 0;
        }
        if (it->second.skip > 0) {
            --it->second.skip;
            return 0;
        }
        --it->second.count;
        return it->second.err;
    }

    std::shared_ptr<FileOps> real_ = posixFileOps();
    mutable std::mutex mutex_;
    std::map<Op, Fault> faults_;
    std::map<Op, std::size_t> calls_;
    std::size_t shortWrite_ = 0;
    std::size_t openLimit_ = SIZE_MAX;
    std::size_t open_ = 0;
    std::function<void(const std::string&)> openHook_;
    std::function<void()> syncHook_;
};

}  // namespace kvexec::storage::test
