// vbucket.cc: a vBucket's hash-table steps: CAS, dirty queue, committed values, lookup.
#include "engine/vbucket.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <iterator>

#include "engine/stream.h"

namespace kvexec::engine {

Item itemOf(Vbid vbid, std::string_view storedKey, std::string value, const ItemMeta& meta) {
    const auto split = splitCollectionKey(storedKey);
    if (!split) {  // not a stored key (never made by the engine): show it whole
        return Item{vbid, std::string(storedKey), std::move(value), meta};
    }
    return Item{vbid, std::string(split->key), std::move(value), meta, split->collection};
}

CollectionId collectionOf(std::string_view storedKey) {
    const auto split = splitCollectionKey(storedKey);
    return split ? split->collection : kDefaultCollection;
}

std::string prepareKeyOf(std::string_view storedKey) {
    std::string key(1, kPrepareNamespace);
    key += storedKey;
    return key;
}

bool isPrepareKey(std::string_view key) {
    return !key.empty() && key.front() == kPrepareNamespace;
}

std::string_view committedKeyOf(std::string_view prepareKey) {
    return prepareKey.substr(1);
}

bool isAbortTombstone(const storage::Document& doc) {
    return isPrepareKey(doc.key) && doc.deleted &&
           doc.level == static_cast<std::uint8_t>(DurabilityLevel::None);
}

std::uint64_t VBucket::nextCasLocked() {
    const auto wall = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
    maxCas = std::max(maxCas + 1, static_cast<std::uint64_t>(wall));
    return maxCas;
}

ItemMeta metaOf(const storage::Document& doc) {
    return ItemMeta{doc.cas, doc.seqno, doc.flags, doc.expiry, doc.datatype, doc.deleted};
}

StoredValue storedValueOf(const storage::Document& doc) {
    return StoredValue{doc.value, metaOf(doc), doc.deletedByExpiry};
}

namespace {

StreamEventKind committedKindOf(const storage::Document& doc, Seqno preparedSeqno) {
    if (preparedSeqno != 0) {
        return StreamEventKind::Commit;
    }
    if (!doc.deleted) {
        return StreamEventKind::Mutation;
    }
    return doc.deletedByExpiry ? StreamEventKind::Expiration : StreamEventKind::Deletion;
}

}  // namespace

StreamEvent eventOf(Vbid vbid, const storage::Document& doc, Seqno preparedSeqno) {
    const ItemMeta meta = metaOf(doc);
    StreamEvent event;
    event.preparedSeqno = preparedSeqno;
    if (isPrepareKey(doc.key)) {
        const bool abort = isAbortTombstone(doc);
        event.kind = abort ? StreamEventKind::Abort : StreamEventKind::Prepare;
        if (abort) {
            event.preparedSeqno = abortedPrepareOf(doc.value);
            event.item = itemOf(vbid, committedKeyOf(doc.key), {}, meta);
            return event;
        }
        event.item = itemOf(vbid, committedKeyOf(doc.key), doc.value, meta);
        event.level = static_cast<DurabilityLevel>(doc.level);
        return event;
    }
    event.item = itemOf(vbid, doc.key, doc.value, meta);
    event.kind = committedKindOf(doc, preparedSeqno);
    return event;
}

std::size_t VBucket::queueLocked(const std::string& key, StoredValue& value, bool newCas,
                                 const Stamp& stamp, Seqno preparedSeqno) {
    value.meta.seqno = ++highSeqno;
    if (newCas) {
        value.meta.cas = nextCasLocked();
    }
    if (stamp) {
        stamp(value.value, value.meta.cas, value.meta.seqno);
    }
    return appendLocked(key, value, preparedSeqno, DurabilityLevel::None);
}

std::size_t VBucket::queueReplicatedLocked(const std::string& key, StoredValue& value,
                                           Seqno preparedSeqno, DurabilityLevel level) {
    highSeqno = value.meta.seqno;
    maxCas = std::max(maxCas, value.meta.cas);
    return appendLocked(key, value, preparedSeqno, level);
}

std::size_t VBucket::appendLocked(const std::string& key, const StoredValue& value,
                                  Seqno preparedSeqno, DurabilityLevel level) {
    storage::Document doc;
    doc.key = key;
    doc.value = value.value;
    doc.seqno = value.meta.seqno;
    doc.deleted = value.meta.deleted;
    doc.cas = value.meta.cas;
    doc.flags = value.meta.flags;
    doc.expiry = value.meta.expiry;
    doc.datatype = value.meta.datatype;
    doc.level = static_cast<std::uint8_t>(level);
    doc.deletedByExpiry = value.deletedByExpiry;
    const auto now = Clock::now();
    if (!streams.empty()) {
        const auto event = eventOf(id, doc, preparedSeqno);
        for (const auto& stream : streams) {
            stream->pushLocked(StreamEntry{event, now});
        }
    }
    dirty.push_back(DirtyItem{std::move(doc), now, preparedSeqno});
    return footprint(key.size(), value.value.size());
}

std::size_t VBucket::queuePrepareLocked(const std::string& key, StoredValue& value,
                                        DurabilityLevel level, const Stamp& stamp) {
    value.meta.seqno = ++highSeqno;
    value.meta.cas = nextCasLocked();
    if (stamp) {
        stamp(value.value, value.meta.cas, value.meta.seqno);
    }
    return appendLocked(prepareKeyOf(key), value, 0, level);
}

std::size_t VBucket::queueAbortLocked(const std::string& key, Seqno preparedSeqno) {
    StoredValue tombstone = abortTombstone(preparedSeqno);
    return queueLocked(prepareKeyOf(key), tombstone, true, {}, preparedSeqno);
}

StoredValue abortTombstone(Seqno preparedSeqno) {
    StoredValue tombstone;
    tombstone.meta.deleted = true;
    tombstone.value.resize(sizeof(Seqno));
    std::memcpy(tombstone.value.data(), &preparedSeqno, sizeof(Seqno));
    return tombstone;
}

Seqno abortedPrepareOf(std::string_view tombstoneValue) {
    Seqno prepared = 0;
    if (tombstoneValue.size() == sizeof(Seqno)) {
        std::memcpy(&prepared, tombstoneValue.data(), sizeof(Seqno));
    }
    return prepared;
}

Seqno VBucket::replicaHighPreparedLocked() const {
    return highPrepared(replicaPrepares, wholeSeqnoLocked(), persistedSeqno, replicaPersists,
                        reportedHighPrepared);
}

Seqno VBucket::wholeSeqnoLocked() const {
    return diskSnapshot ? diskSnapshot->base : highSeqno;
}

std::int64_t VBucket::setCommittedLocked(const std::string& key, StoredValue value) {
    const auto added = static_cast<std::int64_t>(footprint(key.size(), value.value.size()));
    (value.meta.deleted ? tombstoneCount : liveCount) += 1;
    auto [stored, inserted] = committed.findOrInsert(key);
    if (inserted) {
        *stored = std::move(value);
        return added;
    }
    (stored->meta.deleted ? tombstoneCount : liveCount) -= 1;
    const auto removed = static_cast<std::int64_t>(footprint(key.size(), stored->value.size()));
    *stored = std::move(value);
    return added - removed;
}

std::int64_t VBucket::eraseCommittedLocked(const std::string& key) {
    const auto* stored = committed.find(key);
    if (stored == nullptr) {
        return 0;
    }
    (stored->meta.deleted ? tombstoneCount : liveCount) -= 1;
    const auto removed = static_cast<std::int64_t>(footprint(key.size(), stored->value.size()));
    committed.erase(key);
    return -removed;
}

// Both look in maps that are empty for nearly every request: checked first,
// since a lookup by view hashes the key even then (stored_key.h).
std::uint64_t VBucket::lockCasLocked(std::string_view key, std::uint32_t now) {
    if (locks.empty()) {
        return 0;
    }
    const auto it = locks.find(key);
    if (it == locks.end()) {
        return 0;
    }
    if (now >= it->second.until) {
        locks.erase(it);
        return 0;
    }
    return it->second.cas;
}

const StoredValue* VBucket::liveLocked(std::string_view key, std::uint32_t now) const {
    const auto* stored = committed.find(key);
    return stored != nullptr && isLive(*stored, now) ? stored : nullptr;
}

const StoredValue* VBucket::liveOrTombstoneLocked(std::string_view key, std::uint32_t now) const {
    const auto* stored = committed.find(key);
    const bool seen = stored != nullptr && (stored->meta.deleted || isLive(*stored, now));
    return seen ? stored : nullptr;
}

Status VBucket::pendingOnLocked(std::string_view key) const {
    if (pendingByKey.empty()) {
        return Status::Success;
    }
    const auto pending = pendingByKey.find(key);
    if (pending == pendingByKey.end()) {
        return Status::Success;
    }
    const auto write = syncWrites.find(pending->second);
    return write != syncWrites.end() && write->second.inherited
               ? Status::SyncWriteReCommitInProgress
               : Status::SyncWriteInProgress;
}

namespace {

template <class Pred>
std::vector<PersistenceWaiter> takeWaitersIf(std::vector<PersistenceWaiter>& waiters, Pred pred) {
    const auto taken = std::stable_partition(waiters.begin(), waiters.end(),
                                             [&](const PersistenceWaiter& w) { return !pred(w); });
    std::vector<PersistenceWaiter> out(std::make_move_iterator(taken),
                                       std::make_move_iterator(waiters.end()));
    waiters.erase(taken, waiters.end());
    return out;
}

}  // namespace

std::vector<PersistenceWaiter> VBucket::takePersistedWaitersLocked() {
    const Seqno persisted = persistedSeqno;
    return takeWaitersIf(persistenceWaiters,
                         [persisted](const PersistenceWaiter& w) { return w.seqno <= persisted; });
}

std::vector<PersistenceWaiter> VBucket::takeExpiredWaitersLocked(Clock::time_point now) {
    return takeWaitersIf(persistenceWaiters,
                         [now](const PersistenceWaiter& w) { return w.deadline <= now; });
}

}  // namespace kvexec::engine
