// Range scans (kvexec/engine/range_scan.h): the table of open scans, and
// the bucket's create / continue / cancel, which read the vBucket's hash
// table under its lock.
#include "engine/range_scans.h"

#include <algorithm>

#include "engine/ep_bucket.h"
#include "kvexec/engine/xattrs.h"

namespace kvexec::engine {

std::optional<RangeScanId> RangeScans::open(std::unique_ptr<OpenRangeScan> scan, TimePoint now) {
    kvexec::detail::MutexLock lock(mutex_);
    closeIdleLocked(now);
    if (scans_.size() >= maxOpen_) {
        return std::nullopt;
    }
    scan->lastUsed = now;
    const auto id = newIdLocked();
    scans_.emplace(id, Entry{std::move(scan)});
    return id;
}

RangeScans::Entry* RangeScans::findLocked(Vbid vbid, const RangeScanId& id) {
    const auto it = scans_.find(id);
    if (it == scans_.end() || it->second.cancelled || it->second.scan->vbid != vbid) {
        return nullptr;
    }
    return &it->second;
}

OpenRangeScan* RangeScans::checkOut(Vbid vbid, const RangeScanId& id, Status& status,
                                    TimePoint now) {
    kvexec::detail::MutexLock lock(mutex_);
    closeIdleLocked(now);
    auto* entry = findLocked(vbid, id);
    if (entry == nullptr) {
        status = Status::KeyNotFound;
        return nullptr;
    }
    auto& scan = *entry->scan;
    if (scan.checkedOut) {
        status = Status::Busy;
        return nullptr;
    }
    scan.checkedOut = true;
    status = Status::Success;
    return &scan;
}

bool RangeScans::checkIn(const RangeScanId& id, TimePoint now) {
    kvexec::detail::MutexLock lock(mutex_);
    const auto it = scans_.find(id);
    if (it == scans_.end()) {
        return false;
    }
    if (it->second.cancelled) {
        scans_.erase(it);
        return false;
    }
    it->second.scan->checkedOut = false;
    it->second.scan->lastUsed = now;
    return true;
}

void RangeScans::close(const RangeScanId& id) {
    kvexec::detail::MutexLock lock(mutex_);
    scans_.erase(id);
}

Status RangeScans::cancel(Vbid vbid, const RangeScanId& id) {
    kvexec::detail::MutexLock lock(mutex_);
    auto* entry = findLocked(vbid, id);
    if (entry == nullptr) {
        return Status::KeyNotFound;
    }
    if (entry->scan->checkedOut) {
        entry->cancelled = true;  // its continue's checkIn closes it
    } else {
        scans_.erase(id);
    }
    return Status::Success;
}

std::size_t RangeScans::size() const {
    kvexec::detail::MutexLock lock(mutex_);
    return scans_.size();
}

void RangeScans::closeIdle(TimePoint now) {
    kvexec::detail::MutexLock lock(mutex_);
    closeIdleLocked(now);
}

void RangeScans::closeIdleLocked(TimePoint now) {
    std::erase_if(scans_, [&](const auto& entry) {
        const auto& scan = *entry.second.scan;
        return !scan.checkedOut && now - scan.lastUsed >= idleTimeout_;
    });
}

RangeScanId RangeScans::newIdLocked() {
    RangeScanId id;
    do {
        for (std::size_t i = 0; i < id.size(); i += 8) {
            auto bits = idSource_();
            for (std::size_t b = 0; b < 8; ++b, bits >>= 8) {
                id[i + b] = static_cast<std::uint8_t>(bits);
            }
        }
    } while (scans_.contains(id));
    return id;
}

namespace {

// Bytes a document counts for against RangeScanLimits::bytes: its key,
// its value and the fixed metadata of the wire format.
constexpr std::size_t kDocumentMetaBytes = 25;
// Keys a continue reads per hold of the vBucket's lock, so that a long
// continue lets writers in between.
constexpr std::size_t kKeysPerLockHold = 256;

// What a scan returns of a document: no value for a key-only scan, no
// xattrs unless asked for.
Item scanItemOf(const OpenRangeScan& scan, const std::string& key, const StoredValue& stored) {
    if (scan.keyOnly) {
        return itemOf(scan.vbid, key, {}, stored.meta);
    }
    if (scan.includeXattrs) {
        return itemOf(scan.vbid, key, stored.value, stored.meta);
    }
    auto item = itemOf(scan.vbid, key,
                       std::string(documentBody(stored.value, stored.meta.datatype)), stored.meta);
    item.meta.datatype &= static_cast<std::uint8_t>(~kDatatypeXattr);
    return item;
}

bool inRange(std::string_view key, const KeyRange& range) {
    const bool afterStart = range.startExclusive ? key > range.start : key >= range.start;
    const bool beforeEnd = range.endExclusive ? key < range.end : key <= range.end;
    return afterStart && beforeEnd;
}

Status checkRequest(const RangeScanRequest& request) {
    if (request.keyOnly && request.includeXattrs) {
        return Status::Invalid;
    }
    if (const auto* range = std::get_if<KeyRange>(&request.keys)) {
        if (range->start.size() > kMaxKeySize || range->end.size() > kMaxKeySize) {
            return Status::Invalid;
        }
    } else if (std::get<KeySample>(request.keys).samples == 0) {
        return Status::Invalid;
    }
    return Status::Success;
}

// Keeps each key with probability samples / keys.size(), in order; all of
// them when there are no more than `samples`.
void sampleKeys(std::vector<std::string>& keys, const KeySample& sample) {
    if (keys.size() <= sample.samples) {
        return;
    }
    std::mt19937_64 random(sample.seed);
    std::bernoulli_distribution keep(static_cast<double>(sample.samples) /
                                     static_cast<double>(keys.size()));
    std::erase_if(keys, [&](const std::string&) { return !keep(random); });
}

}  // namespace

RangeScanCreateResult BucketImpl::createRangeScan(const RangeScanRequest& request) {
    RangeScanCreateResult out;
    if (out.status = admitVBucket(request.vbid); out.status != Status::Success) {
        return out;
    }
    if (out.status = checkRequest(request); out.status != Status::Success) {
        return out;
    }
    auto scan = std::make_unique<OpenRangeScan>();
    scan->vbid = request.vbid;
    scan->collection = request.collection;
    scan->keyOnly = request.keyOnly;
    scan->includeXattrs = request.includeXattrs;
    auto& vb = vbucket(request.vbid);
    {
        kvexec::detail::MutexLock lock(vb.mutex);
        if (out.status = admitLocked(vb, request.collection); out.status != Status::Success) {
            return out;
        }
        if (out.status = snapshotMetLocked(vb, request.snapshot); out.status != Status::Success) {
            return out;
        }
        listScanKeysLocked(vb, request, scan->keys);
        scan->vbucketUuid = vb.failover.uuid();
    }
    std::sort(scan->keys.begin(), scan->keys.end());
    if (const auto* sample = std::get_if<KeySample>(&request.keys)) {
        sampleKeys(scan->keys, *sample);
    }
    if (scan->keys.empty()) {
        out.status = Status::KeyNotFound;
        return out;
    }
    const auto id = rangeScans_.open(std::move(scan), steadyNow());
    if (!id) {
        out.status = Status::Busy;
        return out;
    }
    out.id = *id;
    return out;
}

void BucketImpl::createRangeScan(const RangeScanRequest& request, RangeScanCreateCallback done) {
    const auto& snapshot = request.snapshot;
    if (snapshot && snapshot->timeout.count() > 0 &&
        admitVBucket(request.vbid) == Status::Success) {
        auto& vb = vbucket(request.vbid);
        kvexec::detail::MutexLock lock(vb.mutex);
        // Waits only when the seqno is all that is missing.
        if (admitLocked(vb, request.collection) == Status::Success &&
            snapshotMetLocked(vb, snapshot) == Status::TempFail) {
            PersistenceWaiter waiter{snapshot->seqno, steadyNow() + snapshot->timeout,
                                     [this, request, done](bool persisted) {
                                         done(persisted ? createRangeScan(request)
                                                        : RangeScanCreateResult{Status::TempFail});
                                     }};
            const bool sooner = waiter.deadline < vb.armedDeadline;
            vb.persistenceWaiters.push_back(std::move(waiter));
            if (sooner) {
                armTimeoutLocked(vb);
            }
            return;
        }
    }
    done(createRangeScan(request));
}

Status BucketImpl::snapshotMetLocked(const VBucket& vb,
                                     const std::optional<SnapshotRequirements>& snapshot) const {
    if (!snapshot) {
        return Status::Success;
    }
    if (vb.failover.uuid() != snapshot->vbucketUuid) {
        return Status::VbUuidNotEqual;
    }
    if (vb.persistedSeqno < snapshot->seqno) {
        return Status::TempFail;
    }
    if (!snapshot->seqnoExists) {
        return Status::Success;
    }
    const bool found =
        std::any_of(vb.committed.begin(), vb.committed.end(),
                    [&](const auto& entry) { return entry.value.meta.seqno == snapshot->seqno; });
    return found ? Status::Success : Status::NotStored;
}

void BucketImpl::listScanKeysLocked(const VBucket& vb, const RangeScanRequest& request,
                                    std::vector<std::string>& keys) const {
    const auto now = unixNow();
    const auto* range = std::get_if<KeyRange>(&request.keys);
    for (const auto& [key, stored] : vb.committed) {
        if (!VBucket::isLive(stored, now)) {
            continue;
        }
        const auto split = splitCollectionKey(key);
        if (split && split->collection == request.collection &&
            (range == nullptr || inRange(split->key, *range))) {
            keys.emplace_back(key);
        }
    }
}

RangeScanBatch BucketImpl::continueRangeScan(Vbid vbid, const RangeScanId& id,
                                             const RangeScanLimits& limits) {
    RangeScanBatch out;
    if (vbid >= vbuckets_.size()) {
        out.status = Status::NotMyVbucket;
        return out;
    }
    const auto started = steadyNow();
    auto* scan = rangeScans_.checkOut(vbid, id, out.status, started);
    if (scan == nullptr) {
        return out;
    }
    out.keyOnly = scan->keyOnly;
    const auto deadline =
        limits.time.count() == 0 ? Clock::time_point::max() : started + limits.time;
    std::size_t bytes = 0;
    bool limitReached = false;
    auto& vb = vbucket(vbid);
    while (out.status == Status::Success && !limitReached && scan->next < scan->keys.size()) {
        kvexec::detail::MutexLock lock(vb.mutex);
        if (out.status = stillScannableLocked(vb, *scan); out.status != Status::Success) {
            break;
        }
        const auto now = unixNow();
        const auto holdEnd = std::min(scan->keys.size(), scan->next + kKeysPerLockHold);
        while (!limitReached && scan->next < holdEnd) {
            const auto& key = scan->keys[scan->next++];
            const auto* stored = vb.committed.find(key);
            if (stored == nullptr || !VBucket::isLive(*stored, now)) {
                continue;  // deleted or expired since the create
            }
            auto item = scanItemOf(*scan, key, *stored);
            if (vb.lockCasLocked(key, now) != 0) {
                item.meta.cas = kLockedCas;
            }
            bytes += key.size() + item.value.size() + kDocumentMetaBytes;
            out.items.push_back(std::move(item));
            limitReached = (limits.items != 0 && out.items.size() >= limits.items) ||
                           (limits.bytes != 0 && bytes >= limits.bytes);
        }
        limitReached = limitReached || (!out.items.empty() && steadyNow() >= deadline);
    }
    out.complete = out.status == Status::Success && scan->next >= scan->keys.size();
    if (out.status != Status::Success || out.complete) {
        rangeScans_.close(id);
    } else if (!rangeScans_.checkIn(id, steadyNow())) {
        out.status = Status::RangeScanCancelled;
    }
    return out;
}

// A scan reads while its vBucket is active here on the branch it was
// created on (a takeover's hand-over included: reads are safe then), and
// its collection exists.
Status BucketImpl::stillScannableLocked(const VBucket& vb, const OpenRangeScan& scan) {
    if (vb.state != VBucketState::Active || vb.failover.uuid() != scan.vbucketUuid) {
        return Status::NotMyVbucket;
    }
    return vb.collections.contains(scan.collection) ? Status::Success : Status::UnknownCollection;
}

Status BucketImpl::cancelRangeScan(Vbid vbid, const RangeScanId& id) {
    if (vbid >= vbuckets_.size()) {
        return Status::NotMyVbucket;
    }
    return rangeScans_.cancel(vbid, id);
}

}  // namespace kvexec::engine
