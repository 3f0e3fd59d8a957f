// storage/vbucket_index.h: the in-memory index of one vBucket file: where
// the latest version of each key is, and the same entries in seqno order
// (for scans and compaction).
//
// Thread safety: none; the owner (KVStore's per-vBucket state) locks.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kvexec/storage/types.h"

namespace kvexec::storage {

struct IndexEntry {
    std::uint64_t offset = 0;  // of the record in the file
    std::uint32_t size = 0;    // of the whole record
    Seqno seqno = 0;
    bool deleted = false;
};

class VBucketIndex {
  public:
    VBucketIndex() = default;
    // Moves keep the entries' nodes (and so byKey_'s iterators) valid; a
    // copy would leave them pointing into the original.
    // The moved-from index is empty.
    VBucketIndex(VBucketIndex&& other) noexcept;
    VBucketIndex& operator=(VBucketIndex&& other) noexcept;
    VBucketIndex(const VBucketIndex&) = delete;
    VBucketIndex& operator=(const VBucketIndex&) = delete;

    // Makes `entry` the latest version of `key`. Seqnos are unique in a
    // vBucket (std::logic_error for one indexed for another key); one above
    // every indexed seqno (a save's, a load's, a compaction's) costs no
    // search of the seqno order.
    void apply(const std::string& key, const IndexEntry& entry);
    // Room for `keys` keys without rehashing (an index built in one go).
    void reserve(std::size_t keys) { byKey_.reserve(keys); }
    const IndexEntry* find(const std::string& key) const;
    // Every entry whose seqno is >= from, in seqno order.
    std::vector<IndexEntry> fromSeqno(Seqno from) const;
    std::size_t size() const noexcept { return bySeqno_.size(); }
    // The bytes of the latest version's record of every key: what a
    // compaction that purges no tombstone keeps of the file's documents.
    std::uint64_t liveBytes() const noexcept { return liveBytes_; }
    void clear();

  private:
    using BySeqno = std::map<Seqno, IndexEntry>;
    // Each key's node in bySeqno_: a key's new version moves that node
    // without searching for it.
    std::unordered_map<std::string, BySeqno::iterator> byKey_;
    BySeqno bySeqno_;
    std::uint64_t liveBytes_ = 0;
};

}  // namespace kvexec::storage
