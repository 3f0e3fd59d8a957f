// engine/stored_key.h: a document's key as a vBucket stores it, its
// collection's id in front as unsigned LEB128 (collections.h), built on the
// stack so that a read looks its key up without allocating; and the maps
// keyed by stored keys that such a view finds.
//
// Thread safety: values; a const StoredKey may be shared.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>

#include "kvexec/engine/collections.h"

namespace kvexec::engine {

inline constexpr std::size_t kMaxKeySize = 250;  // memcached's limit

// Writes `collection` as unsigned LEB128 at `out`, which has room for
// kMaxCollectionPrefix bytes; returns the bytes written.
inline constexpr std::size_t kMaxCollectionPrefix = 5;
static_assert(sizeof(CollectionId) <= 4, "kMaxCollectionPrefix holds a 32-bit id");
inline std::size_t writeCollectionPrefix(CollectionId collection, char* out) {
    std::size_t size = 0;
    do {
        auto byte = static_cast<std::uint8_t>(collection & 0x7f);
        collection >>= 7;
        if (collection != 0) {
            byte |= 0x80;
        }
        out[size++] = static_cast<char>(byte);
    } while (collection != 0);
    return size;
}

class StoredKey {
  public:
    // Throws std::length_error for a key over kMaxKeySize bytes
    // (BucketImpl::admit refuses those first).
    StoredKey(CollectionId collection, std::string_view key) {
        if (key.size() > kMaxKeySize) {
            throw std::length_error("kvexec: a key longer than kMaxKeySize");
        }
        size_ = writeCollectionPrefix(collection, bytes_.data());
        std::memcpy(bytes_.data() + size_, key.data(), key.size());
        size_ += key.size();
    }
    std::string_view view() const noexcept { return {bytes_.data(), size_}; }

  private:
    std::array<char, kMaxCollectionPrefix + kMaxKeySize> bytes_;
    std::size_t size_ = 0;
};

// Hashes std::string and std::string_view alike, so that a map keyed by
// std::string finds a view. A heterogeneous find hashes even in an empty
// map (libstdc++ 12 scans small maps only for the key type): callers check
// empty() first. Not noexcept, so that libstdc++ keeps each node's hash
// (it recomputes a noexcept hash at every step along a chain).
struct StoredKeyHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view key) const {
        return std::hash<std::string_view>{}(key);
    }
};

template <class Value>
using StoredKeyMap = std::unordered_map<std::string, Value, StoredKeyHash, std::equal_to<>>;

}  // namespace kvexec::engine
