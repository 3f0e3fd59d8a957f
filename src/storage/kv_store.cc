// kv_store.cc: KVStore: open the directory, create/delete vBuckets, save, get, scan, compact,
// rollback.
#include "kvexec/storage/kv_store.h"

#include <fcntl.h>

#include <cerrno>
#include <charconv>
#include <map>
#include <stdexcept>
#include <utility>

#include "storage/document_reader.h"
#include "storage/file_io.h"
#include "storage/kv_store_impl.h"
#include "storage/record_format.h"
#include "storage/revision_switch.h"
#include "storage/vbucket_loader.h"

namespace kvexec::storage {
namespace {

// Parses "<vbid>.kv.<revision>" (temporary: with ".compact" or ".rollback"
// after it, unfinished output of a revision switch).
struct FileName {
    Vbid vbid = 0;
    Revision revision = 0;
    bool temporary = false;
};

template <typename T>
bool parseNumber(std::string_view text, T& out) {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc() && end == text.data() + text.size() && !text.empty();
}

std::optional<FileName> parseFileName(std::string_view name) {
    FileName out;
    for (const auto suffix : kTemporarySuffixes) {
        if (name.ends_with(suffix)) {
            out.temporary = true;
            name.remove_suffix(suffix.size());
            break;
        }
    }
    const auto dot = name.find(".kv.");
    if (dot == std::string_view::npos || !parseNumber(name.substr(0, dot), out.vbid) ||
        !parseNumber(name.substr(dot + 4), out.revision)) {
        return std::nullopt;
    }
    return out;
}

void validateBatch(std::span<const Document> batch, Seqno highSeqno) {
    Seqno previous = highSeqno;
    for (const auto& doc : batch) {
        if (doc.seqno <= previous) {
            throw std::invalid_argument("kvexec storage: saveDocs: seqno " +
                                        std::to_string(doc.seqno) + " does not follow " +
                                        std::to_string(previous));
        }
        if (doc.key.empty() || doc.key.size() > format::kMaxKeySize ||
            doc.value.size() > format::kMaxValueSize) {
            throw std::invalid_argument("kvexec storage: saveDocs: key or value size out of range");
        }
        previous = doc.seqno;
    }
}

constexpr std::size_t kMaxScratch = 4 << 20;

// Appends a saveDocs batch at batchStart and syncs it per the mode. On
// failure the partial bytes are truncated (now, or before the next save if
// that fails too) and the handle is dropped, then the error propagates.
// Caller holds vb.writeMutex.
void writeBatch(KVStore::Impl& store, Vbid vbid, VBucketState& vb, std::string_view bytes,
                std::uint64_t batchStart) REQUIRES(vb.writeMutex) REQUIRES_SHARED(vb.stateMutex) {
    auto& ops = *store.ops;
    FileHandlePtr handle;
    try {
        handle = store.cache.acquire(vbid, vb.revision, vb.path);
        if (vb.tailDirty) {
            io::truncate(ops, handle->fd(), vb.path, batchStart);
            vb.tailDirty = false;
        }
        io::writeAll(ops, handle->fd(), vb.path, bytes, batchStart);
        if (store.config.syncMode == SyncMode::Fdatasync) {
            io::sync(ops, handle->fd(), vb.path);
        }
    } catch (...) {
        vb.tailDirty = true;
        if (handle && ops.ftruncate(handle->fd(), static_cast<off_t>(batchStart)) == 0) {
            vb.tailDirty = false;
        }
        // After a failed write or sync the descriptor's state is suspect
        // (e.g. fsync errors are reported once): reopen next time.
        store.cache.erase(vbid, vb.revision);
        throw;
    }
    // With the cache off, releasing `handle` here is the per-save close().
}

}  // namespace

KVStore::Impl::Impl(KVStoreConfig cfg)
    : config(std::move(cfg)),
      ops(config.fileOps ? config.fileOps : posixFileOps()),
      dir(config.dir.string()),
      cache(ops, config.fileCacheCapacity, config.fileCacheEnabled) {
    if (config.numVBuckets == 0) {
        throw std::invalid_argument("kvexec storage: numVBuckets must be > 0");
    }
    vbuckets.reserve(config.numVBuckets);
    for (std::size_t i = 0; i < config.numVBuckets; ++i) {
        vbuckets.push_back(std::make_unique<VBucketState>());
    }
    std::filesystem::create_directories(config.dir);
    openDirectory();
}

void KVStore::Impl::openDirectory() {
    std::map<Vbid, Revision> newest;
    std::vector<std::string> stale;
    for (const auto& entry : std::filesystem::directory_iterator(config.dir)) {
        const auto name = parseFileName(entry.path().filename().string());
        if (!name || name->vbid >= config.numVBuckets) {
            continue;
        }
        if (name->temporary) {
            stale.push_back(entry.path().string());  // unfinished compaction or rollback
            continue;
        }
        auto [it, inserted] = newest.try_emplace(name->vbid, name->revision);
        if (!inserted) {
            // A compaction switched but did not remove the old revision.
            const Revision older = std::min(it->second, name->revision);
            it->second = std::max(it->second, name->revision);
            stale.push_back(pathOf(name->vbid, older));
        }
    }
    for (const auto& path : stale) {
        ops->unlink(path);
    }
    for (const auto& [vbid, revision] : newest) {
        loadVBucket(vbid, revision);
    }
}

void KVStore::Impl::loadVBucket(Vbid vbid, Revision revision) {
    auto& state = vb(vbid);
    state.exists = true;
    state.revision = revision;
    state.path = pathOf(vbid, revision);
    const auto& path = state.path;
    try {
        const auto handle = cache.acquire(vbid, revision, path);
        auto loaded = loadVBucketFile(*ops, handle->fd(), path, vbid, revision);
        state.index = std::move(loaded.index);
        state.highSeqno = loaded.highSeqno;
        state.committedEnd = loaded.committedEnd;
        if (loaded.tornBytes != 0) {
            recoveryEvents.push_back({vbid, path, loaded.committedEnd, loaded.tornBytes});
        }
    } catch (const StorageError& e) {
        state.openError = e;
        openErrors.push_back(e);
        cache.erase(vbid);
    }
}

VBucketState& KVStore::Impl::vb(Vbid vbid) const {
    if (vbid >= vbuckets.size()) {
        throw std::invalid_argument("kvexec storage: vbid " + std::to_string(vbid) +
                                    " out of range");
    }
    return *vbuckets[vbid];
}

std::string KVStore::Impl::pathOf(Vbid vbid, Revision revision) const {
    return dir + "/" + std::to_string(vbid) + ".kv." + std::to_string(revision);
}

void KVStore::Impl::requireUsable(Vbid vbid, const VBucketState& state) const {
    if (!state.exists) {
        throw StorageError(StorageError::Kind::NoSuchVBucket,
                           "kvexec storage: vBucket " + std::to_string(vbid) + " does not exist");
    }
    if (state.openError) {
        throw *state.openError;
    }
}

Document KVStore::Impl::readDocument(const FileHandle& handle, const IndexEntry& entry) const {
    std::string bytes(entry.size, '\0');
    io::readAll(*ops, handle.fd(), handle.path(), bytes.data(), bytes.size(), entry.offset);
    return checkedDocument(handle.path(), entry, bytes.data());
}

int KVStore::Impl::openUncached(const std::string& path, int flags) {
    int fd = ops->open(path, flags | O_CLOEXEC, 0644);
    if ((fd == -EMFILE || fd == -ENFILE) && cache.evictOne()) {
        fd = ops->open(path, flags | O_CLOEXEC, 0644);
    }
    if (fd < 0) {
        io::throwIo("open", path, fd);
    }
    return fd;
}

void KVStore::Impl::syncDirectory() {
    if (const int r = ops->syncDirectory(dir); r < 0) {
        io::throwIo("fsync of directory", dir, r);
    }
}

KVStore::KVStore(KVStoreConfig config) : impl_(std::make_unique<Impl>(std::move(config))) {}

KVStore::~KVStore() = default;

bool KVStore::createVBucket(Vbid vbid) {
    auto& vb = impl_->vb(vbid);
    detail::MutexLock write(vb.writeMutex);
    Revision revision = 0;
    {
        detail::ReaderLock state(vb.stateMutex);
        if (vb.exists) {
            return false;
        }
        revision = vb.revision + 1;
    }
    const auto path = impl_->pathOf(vbid, revision);
    auto& ops = *impl_->ops;
    const int fd = impl_->openUncached(path, O_RDWR | O_CREAT | O_TRUNC);
    try {
        io::writeAll(ops, fd, path, format::encodeFileHeader({vbid, revision}), 0);
        if (impl_->config.syncMode == SyncMode::Fdatasync) {
            io::sync(ops, fd, path);
            impl_->syncDirectory();
        }
    } catch (...) {
        ops.close(fd);
        ops.unlink(path);
        throw;
    }
    ops.close(fd);
    detail::WriterLock state(vb.stateMutex);
    vb.exists = true;
    vb.revision = revision;
    vb.path = path;
    vb.highSeqno = 0;
    vb.committedEnd = format::kFileHeaderSize;
    vb.index.clear();
    vb.openError.reset();
    vb.tailDirty = false;
    return true;
}

bool KVStore::deleteVBucket(Vbid vbid) {
    auto& vb = impl_->vb(vbid);
    detail::MutexLock write(vb.writeMutex);
    std::string path;
    // Unpublish first, so no reader opens the file once it is gone.
    {
        detail::WriterLock state(vb.stateMutex);
        if (!vb.exists) {
            return false;
        }
        path = vb.path;
        vb.exists = false;
        vb.highSeqno = 0;
        vb.committedEnd = 0;
        vb.index.clear();
        vb.openError.reset();
    }
    impl_->cache.erase(vbid);
    if (const int r = impl_->ops->unlink(path); r < 0 && r != -ENOENT) {
        // Deleted in memory; the file would come back at the next open.
        io::throwIo("unlink", path, r);
    }
    // Best effort: if the unlink is lost in a crash the vBucket reappears,
    // which a caller that deletes must tolerate anyway.
    impl_->ops->syncDirectory(impl_->dir);
    return true;
}

bool KVStore::exists(Vbid vbid) const {
    auto& vb = impl_->vb(vbid);
    detail::ReaderLock state(vb.stateMutex);
    return vb.exists;
}

Seqno KVStore::saveDocs(Vbid vbid, std::span<const Document> batch) {
    auto& vb = impl_->vb(vbid);
    detail::MutexLock write(vb.writeMutex);
    // Per-thread scratch: a flusher thread reuses it across saves.
    thread_local std::string bytes;
    thread_local std::vector<std::pair<const std::string*, IndexEntry>> entries;
    Seqno high = 0;
    std::uint64_t newEnd = 0;
    {
        // Shared across the write and sync: only writers, which hold
        // writeMutex first, take it exclusively (kv_store_impl.h).
        detail::ReaderLock state(vb.stateMutex);
        impl_->requireUsable(vbid, vb);
        validateBatch(batch, vb.highSeqno);
        if (batch.empty()) {
            return vb.highSeqno;
        }
        const std::uint64_t batchStart = vb.committedEnd;
        bytes.clear();
        entries.clear();
        for (const auto& doc : batch) {
            const std::uint64_t offset = batchStart + bytes.size();
            const auto size = format::appendDocument(bytes, doc);
            entries.emplace_back(&doc.key, IndexEntry{offset, static_cast<std::uint32_t>(size),
                                                      doc.seqno, doc.deleted});
        }
        high = batch.back().seqno;
        format::appendCommit(bytes, {high, batchStart, static_cast<std::uint32_t>(batch.size())});
        newEnd = batchStart + bytes.size();
        writeBatch(*impl_, vbid, vb, bytes, batchStart);
    }
    if (bytes.capacity() > kMaxScratch) {
        std::string().swap(bytes);
    }

    detail::WriterLock state(vb.stateMutex);
    for (const auto& [key, entry] : entries) {
        vb.index.apply(*key, entry);
    }
    vb.committedEnd = newEnd;
    vb.highSeqno = high;
    return high;
}

std::optional<Document> KVStore::get(Vbid vbid, std::string_view key) const {
    auto& vb = impl_->vb(vbid);
    IndexEntry entry;
    FileHandlePtr handle;
    {
        detail::ReaderLock state(vb.stateMutex);
        impl_->requireUsable(vbid, vb);
        const auto* found = vb.index.find(std::string(key));
        if (found == nullptr) {
            return std::nullopt;
        }
        entry = *found;
        handle = impl_->cache.acquire(vbid, vb.revision, vb.path);
    }
    // The handle pins this revision's file even if compaction or delete
    // replaces it now; the entry lies below its committed end.
    return impl_->readDocument(*handle, entry);
}

std::size_t KVStore::scan(Vbid vbid, Seqno fromSeqno, const ScanCallback& fn) const {
    auto& vb = impl_->vb(vbid);
    std::vector<IndexEntry> entries;
    FileHandlePtr handle;
    {
        detail::ReaderLock state(vb.stateMutex);
        impl_->requireUsable(vbid, vb);
        entries = vb.index.fromSeqno(fromSeqno);
        if (entries.empty()) {
            return 0;
        }
        handle = impl_->cache.acquire(vbid, vb.revision, vb.path);
    }
    DocumentReader reader(*impl_->ops, *handle, entries);
    std::size_t calls = 0;
    for (std::size_t i = 0; i < entries.size(); ++i) {
        ++calls;
        if (!fn(reader.read(i))) {
            break;
        }
    }
    return calls;
}

CompactionResult KVStore::compact(Vbid vbid, Seqno purgeBeforeSeqno) {
    return compactVBucket(*impl_, vbid, purgeBeforeSeqno);
}

Seqno KVStore::rollback(Vbid vbid, Seqno toSeqno) {
    return rollbackVBucket(*impl_, vbid, toSeqno);
}

Seqno KVStore::highSeqno(Vbid vbid) const {
    auto& vb = impl_->vb(vbid);
    detail::ReaderLock state(vb.stateMutex);
    impl_->requireUsable(vbid, vb);
    return vb.highSeqno;
}

Revision KVStore::revision(Vbid vbid) const {
    auto& vb = impl_->vb(vbid);
    detail::ReaderLock state(vb.stateMutex);
    impl_->requireUsable(vbid, vb);
    return vb.revision;
}

std::filesystem::path KVStore::filePath(Vbid vbid) const {
    auto& vb = impl_->vb(vbid);
    detail::ReaderLock state(vb.stateMutex);
    if (!vb.exists) {
        impl_->requireUsable(vbid, vb);
    }
    return vb.path;
}

std::uint64_t KVStore::fileSize(Vbid vbid) const {
    auto& vb = impl_->vb(vbid);
    detail::ReaderLock state(vb.stateMutex);
    impl_->requireUsable(vbid, vb);
    return vb.committedEnd;
}

std::uint64_t KVStore::liveBytes(Vbid vbid) const {
    auto& vb = impl_->vb(vbid);
    detail::ReaderLock state(vb.stateMutex);
    impl_->requireUsable(vbid, vb);
    return vb.index.liveBytes();
}

std::size_t KVStore::numVBuckets() const noexcept {
    return impl_->vbuckets.size();
}
SyncMode KVStore::syncMode() const noexcept {
    return impl_->config.syncMode;
}
FileCacheStats KVStore::fileCacheStats() const {
    return impl_->cache.stats();
}
std::vector<RecoveryEvent> KVStore::recoveryEvents() const {
    return impl_->recoveryEvents;
}
std::vector<StorageError> KVStore::openErrors() const {
    return impl_->openErrors;
}

}  // namespace kvexec::storage
