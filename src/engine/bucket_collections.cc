// Scopes and collections: the manifest's changes (checked, persisted, then
// applied to every vBucket) and the drop of a collection's documents.
#include <utility>
#include <vector>

#include "engine/ep_bucket.h"

namespace kvexec::engine {
Manifest BucketImpl::manifest() const {
    kvexec::detail::MutexLock lock(manifestMutex_);
    return manifestState_.manifest;
}

ManifestState BucketImpl::manifestState() const {
    kvexec::detail::MutexLock lock(manifestMutex_);
    return manifestState_;
}

std::uint64_t BucketImpl::manifestUid() const {
    kvexec::detail::MutexLock lock(manifestMutex_);
    return manifestState_.manifest.uid;
}

ManifestChange BucketImpl::changeManifest(const ManifestEdit& edit) {
    return replaceManifest([&](ManifestState& next) { return applyManifestEdit(next, edit); });
}

// An id both manifests hold must name the same collection: the bucket's
// documents under it would otherwise become another collection's.
ManifestChange BucketImpl::adoptManifest(const ManifestState& adopted) {
    return replaceManifest([&](ManifestState& next) {
        for (const auto& scope : adopted.manifest.scopes) {
            for (const auto& collection : scope.collections) {
                const CollectionEntry* held = next.manifest.findCollection(collection.id);
                if (held != nullptr && held->name != collection.name) {
                    return ManifestChange{ManifestOutcome::NotAllowed, next.manifest.uid,
                                          "collection id " + hexId(collection.id) + " is \"" +
                                              held->name + "\" here, not \"" + collection.name +
                                              "\""};
                }
            }
        }
        next = adopted;
        return ManifestChange{ManifestOutcome::Success, adopted.manifest.uid, {}};
    });
}

// The one path of every change: decided on a copy, written to disk, then
// made current and applied to the vBuckets. An unchanged state is neither
// written nor applied.
ManifestChange BucketImpl::replaceManifest(
    const std::function<ManifestChange(ManifestState&)>& decide) {
    kvexec::detail::MutexLock change(manifestChangeMutex_);
    const ManifestState current = manifestState();
    if (warmupState_.load(std::memory_order_acquire) != WarmupState::Complete ||
        shuttingDown_.load()) {
        return {ManifestOutcome::NotReady, current.manifest.uid,
                "the bucket is warming up or shutting down"};
    }
    ManifestState next = current;
    ManifestChange result = decide(next);
    if (result.outcome != ManifestOutcome::Success || next == current) {
        return result;
    }
    try {
        saveManifest(config_.dataDir, next);
    } catch (const std::exception& error) {
        return {ManifestOutcome::StorageFailure, current.manifest.uid, error.what()};
    }
    {
        kvexec::detail::MutexLock lock(manifestMutex_);
        manifestState_ = next;
    }
    applyManifest(next.manifest);
    return result;
}

ManifestChange BucketImpl::createScope(const std::string& name) {
    return changeManifest(ManifestEdit::createScope(name));
}

ManifestChange BucketImpl::dropScope(const std::string& name) {
    return changeManifest(ManifestEdit::dropScope(name));
}

ManifestChange BucketImpl::createCollection(const std::string& scope, const std::string& name,
                                            std::uint32_t maxTtl) {
    return changeManifest(ManifestEdit::createCollection(scope, name, maxTtl));
}

ManifestChange BucketImpl::dropCollection(const std::string& scope, const std::string& name) {
    return changeManifest(ManifestEdit::dropCollection(scope, name));
}

void BucketImpl::applyManifest(const Manifest& next) {
    std::vector<CollectionTtls::Entry> entries;
    for (const auto& scope : next.scopes) {
        for (const auto& collection : scope.collections) {
            entries.emplace_back(collection.id, collection.maxTtl);
        }
    }
    const CollectionTtls wanted(std::move(entries));
    for (auto& vbPtr : vbuckets_) {
        auto& vb = *vbPtr;
        std::vector<FinishedSyncWrite> aborted;
        bool queued = false;
        {
            kvexec::detail::MutexLock lock(vb.mutex);
            for (const auto& [id, maxTtl] : vb.collections) {
                if (!wanted.contains(id)) {
                    vb.droppedPending.insert(id);
                }
            }
            // A replica may hold documents of a collection it learns of only
            // now (its stream outran the manifest, then it warmed up): they
            // are the collection's, not a dropped one's (ids are never
            // reused).
            std::erase_if(vb.droppedPending, [&](CollectionId id) { return wanted.contains(id); });
            vb.collections = wanted;
            queued = deleteDroppedCollectionsLocked(vb, aborted);
        }
        finish(aborted);
        if (queued) {
            notifyFlusher(vb, FlushUrgency::Batched);
        }
    }
}

// Only an active deletes the documents, at seqnos its replicas stream; an
// active handing over takes no write (the new active would miss it), and a
// replica waits for its active's deletions. Until then the documents read
// as absent: their collection is gone from vb.collections.
bool BucketImpl::deleteDroppedCollectionsLocked(VBucket& vb,
                                                std::vector<FinishedSyncWrite>& aborted) {
    if (vb.state != VBucketState::Active || vb.handingOver) {
        return false;
    }
    bool queued = false;
    for (const CollectionId id : vb.droppedPending) {
        queued = dropCollectionLocked(vb, id, aborted) || queued;
    }
    vb.droppedPending.clear();
    return queued;
}

bool BucketImpl::dropCollectionLocked(VBucket& vb, CollectionId collection,
                                      std::vector<FinishedSyncWrite>& aborted) {
    const auto inCollection = [collection](std::string_view key) {
        return collectionOf(key) == collection;
    };
    std::vector<Seqno> pending;
    for (const auto& [seqno, write] : vb.syncWrites) {
        if (inCollection(write.key)) {
            pending.push_back(seqno);
        }
    }
    for (const Seqno seqno : pending) {
        aborted.push_back(abortLocked(vb, seqno, Status::SyncWriteAmbiguous));
    }
    std::erase_if(vb.locks, [&](const auto& entry) { return inCollection(entry.first); });
    std::vector<std::string> keys;
    for (const auto& [key, value] : vb.committed) {
        if (inCollection(key)) {
            keys.emplace_back(key);
        }
    }
    bool queued = false;
    for (const auto& key : keys) {
        if (!vb.committed.at(key).meta.deleted) {
            StoredValue tombstone;
            tombstone.meta.deleted = true;
            accountMemory(static_cast<std::int64_t>(vb.queueLocked(key, tombstone)));
            queued = true;
        }
        accountMemory(vb.eraseCommittedLocked(key));
    }
    return queued;
}

void BucketImpl::loadManifestState() {
    auto loaded = loadManifest(config_.dataDir);
    if (!loaded) {
        return;
    }
    {
        kvexec::detail::MutexLock lock(manifestMutex_);
        manifestState_ = *loaded;
    }
    applyManifest(loaded->manifest);  // before warmup loads any document: drops nothing
}

}  // namespace kvexec::engine
