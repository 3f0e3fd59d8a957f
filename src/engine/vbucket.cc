// vbucket.cc: a vBucket's hash-table steps: CAS, dirty queue, committed values, lookup.
#include "engine/vbucket.h"

#include <algorithm>
#include <chrono>

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

std::uint64_t VBucket::nextCasLocked() {
    const auto wall = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
    maxCas = std::max(maxCas + 1, static_cast<std::uint64_t>(wall));
    return maxCas;
}

std::size_t VBucket::queueLocked(const std::string& key, StoredValue& value, bool newCas,
                                 const Stamp& stamp) {
    value.meta.seqno = ++highSeqno;
    if (newCas) {
        value.meta.cas = nextCasLocked();
    }
    if (stamp) {
        stamp(value.value, value.meta.cas, value.meta.seqno);
    }
    storage::Document doc;
    doc.key = key;
    doc.value = value.value;
    doc.seqno = value.meta.seqno;
    doc.deleted = value.meta.deleted;
    doc.cas = value.meta.cas;
    doc.flags = value.meta.flags;
    doc.expiry = value.meta.expiry;
    doc.datatype = value.meta.datatype;
    const auto now = Clock::now();
    if (!isPrepareKey(key)) {
        for (const auto& stream : streams) {
            stream->pushLocked(StreamEntry{itemOf(id, key, value.value, value.meta), now});
        }
    }
    dirty.push_back(DirtyItem{std::move(doc), now});
    return footprint(key.size(), value.value.size());
}

std::size_t VBucket::queuePrepareLocked(const std::string& key, StoredValue& value,
                                        DurabilityLevel level, const Stamp& stamp) {
    const auto bytes = queueLocked(prepareKeyOf(key), value, true, stamp);
    dirty.back().doc.level = static_cast<std::uint8_t>(level);
    return bytes;
}

std::size_t VBucket::queueAbortLocked(const std::string& key) {
    StoredValue tombstone;
    tombstone.meta.deleted = true;
    return queueLocked(prepareKeyOf(key), tombstone);
}

std::int64_t VBucket::setCommittedLocked(const std::string& key, StoredValue value) {
    const auto added = static_cast<std::int64_t>(footprint(key.size(), value.value.size()));
    (value.meta.deleted ? tombstoneCount : liveCount) += 1;
    auto [it, inserted] = committed.try_emplace(key);
    if (inserted) {
        it->second = std::move(value);
        return added;
    }
    (it->second.meta.deleted ? tombstoneCount : liveCount) -= 1;
    const auto removed = static_cast<std::int64_t>(footprint(key.size(), it->second.value.size()));
    it->second = std::move(value);
    return added - removed;
}

std::int64_t VBucket::eraseCommittedLocked(const std::string& key) {
    const auto it = committed.find(key);
    if (it == committed.end()) {
        return 0;
    }
    (it->second.meta.deleted ? tombstoneCount : liveCount) -= 1;
    const auto removed = static_cast<std::int64_t>(footprint(key.size(), it->second.value.size()));
    committed.erase(it);
    return -removed;
}

std::uint64_t VBucket::lockCasLocked(const std::string& key, std::uint32_t now) {
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

const StoredValue* VBucket::liveLocked(const std::string& key, std::uint32_t now) const {
    const auto it = committed.find(key);
    if (it == committed.end() || it->second.meta.deleted) {
        return nullptr;
    }
    const auto expiry = it->second.meta.expiry;
    if (expiry != 0 && expiry <= now) {
        return nullptr;
    }
    return &it->second;
}

}  // namespace kvexec::engine
