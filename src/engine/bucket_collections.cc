// Scopes and collections: the manifest's changes (checked, persisted, then
// applied to every vBucket) and the drop of a collection's documents.
#include <algorithm>
#include <utility>
#include <vector>

#include "engine/ep_bucket.h"

namespace kvexec::engine {
namespace {

std::string inQuotes(std::string_view name) {
    std::string out(1, '"');
    out.append(name).push_back('"');
    return out;
}

ManifestOutcome refuseName(std::string_view name, std::string& message) {
    if (validCollectionName(name)) {
        return ManifestOutcome::Success;
    }
    message = "invalid name " + inQuotes(name) +
              ": 1 to 251 of A-Z a-z 0-9 _ - %, not starting with _ or %";
    return ManifestOutcome::InvalidName;
}

ScopeEntry* scopeNamed(Manifest& manifest, std::string_view name) {
    const auto it = std::ranges::find(manifest.scopes, name, &ScopeEntry::name);
    return it == manifest.scopes.end() ? nullptr : &*it;
}

}  // namespace

Manifest BucketImpl::manifest() const {
    kvexec::detail::MutexLock lock(manifestMutex_);
    return manifestState_.manifest;
}

std::uint64_t BucketImpl::manifestUid() const {
    kvexec::detail::MutexLock lock(manifestMutex_);
    return manifestState_.manifest.uid;
}

ManifestChange BucketImpl::changeManifest(const ManifestEdit& edit) {
    kvexec::detail::MutexLock change(manifestChangeMutex_);
    ManifestState next;
    {
        kvexec::detail::MutexLock lock(manifestMutex_);
        next = manifestState_;
    }
    ManifestChange result{ManifestOutcome::Success, next.manifest.uid, {}};
    if (warmupState_.load(std::memory_order_acquire) != WarmupState::Complete ||
        shuttingDown_.load()) {
        result.outcome = ManifestOutcome::NotReady;
        result.message = "the bucket is warming up or shutting down";
        return result;
    }
    result.outcome = edit(next, result.message);
    if (result.outcome != ManifestOutcome::Success) {
        return result;
    }
    ++next.manifest.uid;
    try {
        saveManifest(config_.dataDir, next);
    } catch (const std::exception& error) {
        result.outcome = ManifestOutcome::StorageFailure;
        result.message = error.what();
        return result;
    }
    {
        kvexec::detail::MutexLock lock(manifestMutex_);
        manifestState_ = next;
    }
    applyManifest(next.manifest);
    result.uid = next.manifest.uid;
    return result;
}

ManifestChange BucketImpl::createScope(const std::string& name) {
    return changeManifest([&](ManifestState& state, std::string& message) {
        if (const auto refused = refuseName(name, message); refused != ManifestOutcome::Success) {
            return refused;
        }
        if (state.manifest.findScope(name) != nullptr) {
            message = "scope " + inQuotes(name) + " already exists";
            return ManifestOutcome::ScopeExists;
        }
        state.manifest.scopes.push_back(ScopeEntry{state.nextScopeId++, name, {}});
        return ManifestOutcome::Success;
    });
}

ManifestChange BucketImpl::dropScope(const std::string& name) {
    return changeManifest([&](ManifestState& state, std::string& message) {
        if (name == kDefaultName) {
            message = "the _default scope cannot be dropped";
            return ManifestOutcome::NotAllowed;
        }
        if (std::erase_if(state.manifest.scopes,
                          [&](const ScopeEntry& scope) { return scope.name == name; }) == 0) {
            message = "scope " + inQuotes(name) + " not found";
            return ManifestOutcome::UnknownScope;
        }
        return ManifestOutcome::Success;
    });
}

ManifestChange BucketImpl::createCollection(const std::string& scope, const std::string& name,
                                            std::uint32_t maxTtl) {
    return changeManifest([&](ManifestState& state, std::string& message) {
        if (const auto refused = refuseName(name, message); refused != ManifestOutcome::Success) {
            return refused;
        }
        ScopeEntry* found = scopeNamed(state.manifest, scope);
        if (found == nullptr) {
            message = "scope " + inQuotes(scope) + " not found";
            return ManifestOutcome::UnknownScope;
        }
        if (state.manifest.findCollection(scope, name) != nullptr) {
            message = "collection " + inQuotes(scope + "." + name) + " already exists";
            return ManifestOutcome::CollectionExists;
        }
        if (state.manifest.collectionCount() >= kMaxCollections) {
            message = "a bucket holds at most " + std::to_string(kMaxCollections) + " collections";
            return ManifestOutcome::LimitReached;
        }
        found->collections.push_back(CollectionEntry{state.nextCollectionId++, name, maxTtl});
        return ManifestOutcome::Success;
    });
}

ManifestChange BucketImpl::dropCollection(const std::string& scope, const std::string& name) {
    return changeManifest([&](ManifestState& state, std::string& message) {
        ScopeEntry* found = scopeNamed(state.manifest, scope);
        if (found == nullptr) {
            message = "scope " + inQuotes(scope) + " not found";
            return ManifestOutcome::UnknownScope;
        }
        const CollectionEntry* collection = state.manifest.findCollection(scope, name);
        if (collection == nullptr) {
            message = "collection " + inQuotes(scope + "." + name) + " not found";
            return ManifestOutcome::UnknownCollection;
        }
        if (collection->id == kDefaultCollection) {
            message = "the _default collection cannot be dropped";
            return ManifestOutcome::NotAllowed;
        }
        std::erase_if(found->collections,
                      [&](const CollectionEntry& entry) { return entry.name == name; });
        return ManifestOutcome::Success;
    });
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
