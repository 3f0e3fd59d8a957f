// The mutation path: every write (store, remove, arithmetic, touch) is a
// Decide function run by mutate() under the vBucket lock on the committed
// live value; mutate() does the checks they share, queues the result and
// either commits it (non-durable) or hands it to the durability monitor.
#include <charconv>
#include <memory>

#include "engine/ep_bucket.h"
#include "kvexec/engine/xattrs.h"

namespace kvexec::engine {
namespace {

// Status of a CAS check against the current value (0: no check).
Status checkCas(const StoredValue* current, std::uint64_t cas) {
    if (cas == 0) {
        return Status::Success;
    }
    if (current == nullptr) {
        return Status::KeyNotFound;
    }
    return current->meta.cas == cas ? Status::Success : Status::KeyExists;
}

std::optional<std::uint64_t> parseCounter(std::string_view text) {
    std::uint64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || error != std::errc{} || end != text.data() + text.size()) {
        return std::nullopt;
    }
    return value;
}

// The extended attributes a write of a whole value keeps: the current
// document's, unless the new value brings its own (the XATTR bit).
std::string_view keptXattrs(const StoredValue* current, std::uint8_t newDatatype) {
    if (current == nullptr || (newDatatype & kDatatypeXattr) != 0) {
        return {};
    }
    return xattrBlob(current->value, current->meta.datatype);
}

}  // namespace

Status BucketImpl::checkDurability(const Durability& durability) const {
    if (durability.level > DurabilityLevel::PersistToMajority) {
        return Status::DurabilityInvalidLevel;
    }
    if (durability.timeout.count() < 0) {
        return Status::Invalid;
    }
    return Status::Success;
}

Status BucketImpl::currentForWriteLocked(VBucket& vb, const std::string& key, std::uint64_t cas,
                                         Sees sees, StoredValue& asLocked,
                                         const StoredValue*& current) {
    const auto now = unixNow();
    current = sees == Sees::Live ? vb.liveLocked(key, now) : vb.liveOrTombstoneLocked(key, now);
    const bool lockable = current != nullptr && !current->meta.deleted;
    const std::uint64_t lockCas = lockable ? vb.lockCasLocked(key, now) : 0;
    if (lockCas == 0) {
        return Status::Success;
    }
    if (cas != lockCas) {
        return Status::Locked;
    }
    asLocked = *current;
    asLocked.meta.cas = lockCas;
    current = &asLocked;
    return Status::Success;
}

void BucketImpl::applyMaxTtlLocked(const VBucket& vb, CollectionId collection,
                                   StoredValue& value) const {
    const std::uint32_t* maxTtl = vb.collections.maxTtl(collection);
    if (maxTtl == nullptr || *maxTtl == 0 || value.meta.deleted) {
        return;
    }
    const std::uint32_t bound = unixNow() + *maxTtl;
    if (value.meta.expiry == 0 || value.meta.expiry > bound) {
        value.meta.expiry = bound;
    }
}

void BucketImpl::mutate(Vbid vbid, const DocKey& docKey, std::uint64_t cas, Durability durability,
                        const Decide& decide, SyncWriteDone done, Sees sees) {
    std::string key;
    Status status = admit(vbid, docKey, key);
    if (status == Status::Success) {
        status = checkDurability(durability);
    }
    if (status != Status::Success) {
        done(status, 0, {});
        return;
    }
    auto& vb = vbucket(vbid);
    const bool durable = durability.level != DurabilityLevel::None;
    const auto timeout =
        durability.timeout.count() == 0 ? config_.defaultSyncWriteTimeout : durability.timeout;
    std::uint64_t newCas = 0;
    MutationToken token;
    {
        kvexec::detail::MutexLock lock(vb.mutex);
        StoredValue asLocked;
        const StoredValue* current = nullptr;
        if (status = admitLocked(vb, docKey); status != Status::Success) {
            // not active here, or the collection is gone
        } else if (status = vb.pendingOnLocked(key); status != Status::Success) {
            // another SyncWrite on the key, of this term or inherited
        } else if (durable && (status = vb.durability.checkPossible()) != Status::Success) {
            // too few nodes in the chain for a majority
        } else if (status = currentForWriteLocked(vb, key, cas, sees, asLocked, current);
                   status == Status::Success) {
            auto proposal = decide(current);
            status = proposal.status;
            if (status == Status::Success && proposal.value.value.size() > config_.maxItemSize) {
                status = Status::TooBig;
            }
            // Twice: the resident value and its copy in the dirty queue.
            const auto bytes = 2 * footprint(key.size(), proposal.value.value.size());
            if (status == Status::Success && bytes > config_.memoryQuota) {
                status = Status::NoMemory;  // would not fit even in an empty bucket
            } else if (status == Status::Success && overQuota(bytes)) {
                status = Status::TempFail;
                tempFailures_.fetch_add(1, std::memory_order_relaxed);
            }
            if (status == Status::Success) {
                applyMaxTtlLocked(vb, docKey.collection, proposal.value);
                vb.locks.erase(key);
                accountMemory(static_cast<std::int64_t>(
                    durable ? vb.queuePrepareLocked(key, proposal.value, durability.level,
                                                    proposal.stamp)
                            : vb.queueLocked(key, proposal.value, true, proposal.stamp)));
                newCas = proposal.value.meta.cas;
                token = MutationToken{vb.failover.uuid(), proposal.value.meta.seqno};
                if (durable) {
                    const auto now = steadyNow();
                    trackSyncWriteLocked(vb, token.seqno,
                                         SyncWrite{key, std::move(proposal.value), durability.level,
                                                   now, now + timeout, false, std::move(done)});
                } else {
                    accountMemory(vb.setCommittedLocked(key, std::move(proposal.value)));
                }
            }
        }
    }
    if (status == Status::Success) {
        notifyFlusher(vb, durable ? FlushUrgency::Now : FlushUrgency::Batched);
    }
    if (status != Status::Success) {
        done(status, 0, {});
    } else if (!durable) {
        done(status, newCas, token);
    }
}

namespace {

// What a store of a tombstone or over one may ask (StoreRequest).
Status tombstoneCheck(const StoreRequest& request) {
    const bool wholeValue = request.operation == StoreOperation::Set ||
                            request.operation == StoreOperation::Add ||
                            request.operation == StoreOperation::Replace;
    if ((request.accessDeleted || request.storeDeleted) && !wholeValue) {
        return Status::Invalid;
    }
    if (request.storeDeleted && !documentBody(request.value, request.datatype).empty()) {
        return Status::Invalid;
    }
    return Status::Success;
}

Status storeCheck(const StoreRequest& request, const StoredValue* current) {
    switch (request.operation) {
        case StoreOperation::Set:
            return checkCas(current, request.cas);
        case StoreOperation::Add:
            if (request.cas != 0) {
                return Status::Invalid;
            }
            return current == nullptr ? Status::Success : Status::KeyExists;
        case StoreOperation::Replace:
            return current == nullptr ? Status::KeyNotFound : checkCas(current, request.cas);
        case StoreOperation::Append:
        case StoreOperation::Prepend:
            return current == nullptr ? Status::NotStored : checkCas(current, request.cas);
    }
    return Status::Invalid;
}

}  // namespace

void BucketImpl::store(StoreRequest request, MutationCallback done) {
    auto req = std::make_shared<StoreRequest>(std::move(request));
    const Decide decide = [req](const StoredValue* current) {
        Proposal p;
        p.status = storeCheck(*req, current);
        if (p.status != Status::Success) {
            return p;
        }
        p.stamp = req->beforeQueue;
        if (req->operation == StoreOperation::Append) {
            p.value = *current;
            p.value.value += req->value;
        } else if (req->operation == StoreOperation::Prepend) {
            p.value = *current;
            p.value.value.insert(xattrBlob(current->value, current->meta.datatype).size(),
                                 req->value);
        } else {
            const std::string_view xattrs =
                req->replacesXattrs ? std::string_view() : keptXattrs(current, req->datatype);
            p.value.value =
                xattrs.empty() ? std::move(req->value) : std::string(xattrs) + req->value;
            p.value.meta.flags = req->flags;
            const bool keepExpiry =
                req->preserveExpiry && current != nullptr && !current->meta.deleted;
            p.value.meta.expiry = keepExpiry ? current->meta.expiry : req->expiry;
            p.value.meta.datatype = req->datatype | (xattrs.empty() ? 0 : kDatatypeXattr);
            if (req->storeDeleted) {
                p.value.meta.deleted = true;
                p.value.meta.expiry = 0;
                p.value.meta.datatype &= kDatatypeXattr;
            }
        }
        return p;
    };
    const Status refused = tombstoneCheck(*req);
    if (refused != Status::Success) {
        done(MutationResult{refused, 0, {}});
        return;
    }
    const DocKey key{req->key, req->collection};
    mutate(
        req->vbid, key, req->cas, req->durability, decide,
        [done = std::move(done)](Status s, std::uint64_t cas, MutationToken token) {
            done(MutationResult{s, cas, token});
        },
        req->accessDeleted ? Sees::LiveOrTombstone : Sees::Live);
}

void BucketImpl::remove(RemoveRequest request, MutationCallback done) {
    const std::uint64_t cas = request.cas;
    const Decide decide = [cas](const StoredValue* current) {
        Proposal p;
        p.status = current == nullptr ? Status::KeyNotFound : checkCas(current, cas);
        if (p.status == Status::Success) {
            p.value.value = systemXattrs(current->value, current->meta.datatype);
            p.value.meta.flags = current->meta.flags;
            p.value.meta.datatype = p.value.value.empty() ? 0 : kDatatypeXattr;
            p.value.meta.deleted = true;
        }
        return p;
    };
    mutate(request.vbid, DocKey{std::move(request.key), request.collection}, cas,
           request.durability, decide,
           [done = std::move(done)](Status s, std::uint64_t c, MutationToken token) {
               done(MutationResult{s, c, token});
           });
}

void BucketImpl::arithmetic(ArithmeticRequest request, ArithmeticCallback done) {
    auto counter = std::make_shared<std::uint64_t>(0);
    const Decide decide = [counter, request](const StoredValue* current) {
        Proposal p;
        if (current == nullptr) {
            if (!request.createIfMissing || request.cas != 0) {
                p.status = Status::KeyNotFound;
                return p;
            }
            *counter = request.initial;
            p.value.meta.expiry = request.expiry;
        } else {
            p.status = checkCas(current, request.cas);
            const auto value = parseCounter(documentBody(current->value, current->meta.datatype));
            if (p.status == Status::Success && !value) {
                p.status = Status::DeltaBadValue;
            }
            if (p.status != Status::Success) {
                return p;
            }
            p.value = *current;
            *counter = request.increment ? *value + request.delta
                                         : (*value > request.delta ? *value - request.delta : 0);
        }
        p.value.value = std::to_string(*counter);
        if (current != nullptr) {
            p.value.value.insert(0, xattrBlob(current->value, current->meta.datatype));
        }
        return p;
    };
    const Durability durability = request.durability;
    mutate(request.vbid, DocKey{request.key, request.collection}, request.cas, durability, decide,
           [counter, done = std::move(done)](Status s, std::uint64_t cas, MutationToken token) {
               done(ArithmeticResult{s, s == Status::Success ? *counter : 0, cas, token});
           });
}

void BucketImpl::touch(Vbid vbid, DocKey key, std::uint32_t expiry, GetCallback done) {
    auto item = std::make_shared<Item>();
    const Decide decide = [item, expiry, vbid, &key](const StoredValue* current) {
        Proposal p;
        if (current == nullptr) {
            p.status = Status::KeyNotFound;
            return p;
        }
        p.value = *current;
        p.value.meta.expiry = expiry;
        // The document as it is after the touch (flags, datatype, new
        // expiry): get-and-touch returns its flags.
        *item = Item{vbid, key.key, current->value, p.value.meta, key.collection};
        return p;
    };
    mutate(vbid, key, 0, Durability{}, decide,
           [item, done = std::move(done)](Status s, std::uint64_t cas, MutationToken token) {
               GetResult result{s, {}};
               if (s == Status::Success) {
                   result.item = std::move(*item);
                   result.item.meta.cas = cas;
                   result.item.meta.seqno = token.seqno;
               }
               done(result);
           });
}

void BucketImpl::flush(StatusCallback done) {
    if (warmupState_.load(std::memory_order_acquire) != WarmupState::Complete ||
        shuttingDown_.load()) {
        tempFailures_.fetch_add(1, std::memory_order_relaxed);
        done(Status::TempFail);
        return;
    }
    bool handingOver = false;
    for (auto& vbPtr : vbuckets_) {
        auto& vb = *vbPtr;
        std::vector<FinishedSyncWrite> aborted;
        {
            kvexec::detail::MutexLock lock(vb.mutex);
            if (vb.state != VBucketState::Active || vb.handingOver) {
                handingOver = handingOver || vb.handingOver;
                continue;
            }
            abortAllLocked(vb, Status::SyncWriteAmbiguous, aborted);
            vb.locks.clear();
            std::vector<std::string> live;
            for (const auto& [key, value] : vb.committed) {
                if (!value.meta.deleted) {
                    live.emplace_back(key);
                }
            }
            for (const auto& key : live) {
                StoredValue tombstone;
                tombstone.meta.deleted = true;
                accountMemory(static_cast<std::int64_t>(vb.queueLocked(key, tombstone)));
                accountMemory(vb.setCommittedLocked(key, std::move(tombstone)));
            }
        }
        finish(aborted);
        notifyFlusher(vb);
    }
    if (handingOver) {
        tempFailures_.fetch_add(1, std::memory_order_relaxed);
    }
    done(handingOver ? Status::TempFail : Status::Success);
}

// As a deletion's (remove above), an expiry's tombstone keeps the system
// xattrs alone, and the datatype says whether any are left.
void BucketImpl::expireLocked(VBucket& vb, const std::string& key) {
    const StoredValue& expired = vb.committed.at(key);
    StoredValue tombstone;
    tombstone.value = systemXattrs(expired.value, expired.meta.datatype);
    tombstone.meta = expired.meta;
    tombstone.meta.datatype = tombstone.value.empty() ? 0 : kDatatypeXattr;
    tombstone.meta.deleted = true;
    tombstone.meta.expiry = 0;
    tombstone.deletedByExpiry = true;
    vb.locks.erase(key);
    accountMemory(static_cast<std::int64_t>(vb.queueLocked(key, tombstone)));
    accountMemory(vb.setCommittedLocked(key, std::move(tombstone)));
    expired_.fetch_add(1, std::memory_order_relaxed);
}

// Only active vBuckets: a replica never changes its data itself (its
// seqnos are its active's), so its expired copies read as absent until its
// active's expiration arrives.
bool BucketImpl::runExpiryPager() {
    pool_.snooze(expiryPager_, config_.expiryPagerInterval);
    if (warmupState_.load(std::memory_order_acquire) != WarmupState::Complete) {
        return true;
    }
    rangeScans_.closeIdle(steadyNow());
    const auto now = unixNow();
    for (auto& vbPtr : vbuckets_) {
        auto& vb = *vbPtr;
        bool any = false;
        {
            kvexec::detail::MutexLock lock(vb.mutex);
            // A replica follows its active's expirations; an active handing
            // over takes no write, so that its high seqno stays put.
            if (vb.state != VBucketState::Active || vb.handingOver) {
                continue;
            }
            std::vector<std::string> expired;
            for (const auto& [key, value] : vb.committed) {
                if (!value.meta.deleted && value.meta.expiry != 0 && value.meta.expiry <= now &&
                    !vb.pendingByKey.contains(std::string(key))) {
                    expired.emplace_back(key);
                }
            }
            for (const auto& key : expired) {
                expireLocked(vb, key);
            }
            std::erase_if(vb.locks, [now](const auto& entry) { return now >= entry.second.until; });
            any = !expired.empty();
        }
        if (any) {
            notifyFlusher(vb, FlushUrgency::Batched);
        }
    }
    return true;
}

}  // namespace kvexec::engine
