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
    // Makes `entry` the latest version of `key`.
    void apply(const std::string& key, const IndexEntry& entry);
    const IndexEntry* find(const std::string& key) const;
    // Every entry whose seqno is >= from, in seqno order.
    std::vector<IndexEntry> fromSeqno(Seqno from) const;
    std::size_t size() const noexcept { return bySeqno_.size(); }
    // The bytes of the latest version's record of every key: what a
    // compaction that purges no tombstone keeps of the file's documents.
    std::uint64_t liveBytes() const noexcept { return liveBytes_; }
    void clear();

  private:
    std::unordered_map<std::string, Seqno> seqnoByKey_;
    std::map<Seqno, IndexEntry> bySeqno_;
    std::uint64_t liveBytes_ = 0;
};

}  // namespace kvexec::storage
