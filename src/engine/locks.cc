// locks.cc: pessimistic locks (getLocked / unlock). A lock is a CAS of its
// own kept beside the document in VBucket::locks; mutate() enforces it.
#include "engine/ep_bucket.h"

namespace kvexec::engine {
namespace {

// Couchbase's rule: 0, or more than the maximum, means the default.
std::chrono::seconds lockTimeFor(std::chrono::seconds asked, const BucketConfig& config) {
    if (asked.count() <= 0 || asked > config.maxLockTime) {
        return config.defaultLockTime;
    }
    return asked;
}

}  // namespace

void BucketImpl::getLocked(Vbid vbid, DocKey docKey, std::chrono::seconds lockTime,
                           GetCallback done) {
    std::string key;
    GetResult result{admit(vbid, docKey, key), {}};
    if (result.status == Status::Success) {
        auto& vb = vbucket(vbid);
        kvexec::detail::MutexLock lock(vb.mutex);
        const auto now = unixNow();
        const StoredValue* current = vb.liveLocked(key, now);
        if (result.status = admitLocked(vb, docKey); result.status != Status::Success) {
            // not active here, or the collection is gone
        } else if (vb.pendingOnLocked(key) == Status::SyncWriteReCommitInProgress) {
            result.status = Status::SyncWriteReCommitInProgress;
        } else if (current == nullptr) {
            result.status = Status::KeyNotFound;
        } else if (vb.pendingByKey.contains(key)) {
            result.status = Status::SyncWriteInProgress;
        } else if (vb.lockCasLocked(key, now) != 0) {
            result.status = Status::Locked;
        } else {
            const DocumentLock documentLock{
                vb.nextCasLocked(),
                now + static_cast<std::uint32_t>(lockTimeFor(lockTime, config_).count())};
            result.item = itemOf(vbid, key, current->value, current->meta);
            result.item.meta.cas = documentLock.cas;
            vb.locks[key] = documentLock;
        }
    }
    done(result);
}

void BucketImpl::unlock(Vbid vbid, DocKey docKey, std::uint64_t cas, StatusCallback done) {
    std::string key;
    Status status = admit(vbid, docKey, key);
    if (status == Status::Success) {
        auto& vb = vbucket(vbid);
        kvexec::detail::MutexLock lock(vb.mutex);
        const auto now = unixNow();
        std::uint64_t lockCas = 0;
        if (status = admitLocked(vb, docKey); status != Status::Success) {
            // not active here, or the collection is gone
        } else if (vb.liveLocked(key, now) == nullptr) {
            status = Status::KeyNotFound;
        } else if (lockCas = vb.lockCasLocked(key, now); lockCas == 0) {
            status = Status::NotLocked;
        } else if (cas != lockCas) {
            status = Status::Locked;
        } else {
            vb.locks.erase(key);
        }
    }
    done(status);
}

}  // namespace kvexec::engine
