// engine/collection_ttls.h: the collections a vBucket serves, each with its
// maxTtl (0: none). Every request looks its collection up under the
// vBucket's lock, and a vBucket is usually cold in the cache when a request
// comes: every entry is in a vector sorted by id, and the default
// collection's is copied inline too (the VBucket places the set beside its
// mutex), so that a request in the default collection reads no other line.
// A hash map read its header, a bucket array and a node: three cache misses
// per request, measured under memcaslap.
//
// Thread safety: none; the owner (VBucket) locks. A value, copied whole:
// it has no moves, which would leave the inline copy behind.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>

#include "kvexec/engine/collections.h"

namespace kvexec::engine {

class CollectionTtls {
  public:
    using Entry = std::pair<CollectionId, std::uint32_t>;  // id, maxTtl

    CollectionTtls() = default;
    // An id given twice keeps its first entry.
    CollectionTtls(std::initializer_list<Entry> entries)
        : CollectionTtls(std::vector<Entry>(entries)) {}
    explicit CollectionTtls(std::vector<Entry> entries);
    CollectionTtls(const CollectionTtls&) = default;
    CollectionTtls& operator=(const CollectionTtls&) = default;

    bool contains(CollectionId id) const { return maxTtl(id) != nullptr; }
    // The collection's maxTtl, or null when the vBucket does not serve it.
    const std::uint32_t* maxTtl(CollectionId id) const {
        if (id == kDefaultCollection) {
            return hasDefault_ ? &defaultMaxTtl_ : nullptr;
        }
        const auto it =
            std::lower_bound(entries_.begin(), entries_.end(), id,
                             [](const Entry& e, CollectionId v) { return e.first < v; });
        return it != entries_.end() && it->first == id ? &it->second : nullptr;
    }
    // Every entry, the default collection's included, by id.
    auto begin() const { return entries_.begin(); }
    auto end() const { return entries_.end(); }

  private:
    bool hasDefault_ = false;
    std::uint32_t defaultMaxTtl_ = 0;
    std::vector<Entry> entries_;
};

inline CollectionTtls::CollectionTtls(std::vector<Entry> entries) : entries_(std::move(entries)) {
    // The classic algorithms: clang 14 cannot compile libstdc++ 12's
    // ranges::unique (its subrange result).
    std::stable_sort(entries_.begin(), entries_.end(),
                     [](const Entry& a, const Entry& b) { return a.first < b.first; });
    entries_.erase(std::unique(entries_.begin(), entries_.end(),
                               [](const Entry& a, const Entry& b) { return a.first == b.first; }),
                   entries_.end());
    if (!entries_.empty() && entries_.front().first == kDefaultCollection) {
        hasDefault_ = true;
        defaultMaxTtl_ = entries_.front().second;
    }
}

}  // namespace kvexec::engine
