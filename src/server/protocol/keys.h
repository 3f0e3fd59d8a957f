// protocol/keys.h: what a key on the wire means: the collection id prefix
// of collection-aware connections and the key's vBucket.
//
// Pure functions. Safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace kvexec::server::protocol {

struct CollectionKey {
    std::uint32_t collectionId = 0;
    std::string_view key;  // the key without its prefix
};

// Splits the unsigned LEB128 collection id off the front of `wireKey`
// (a connection that negotiated HELLO collections sends it on every key).
// Returns nullopt if the prefix is malformed or leaves no key.
std::optional<CollectionKey> splitCollectionKey(std::string_view wireKey);

// The vBucket of `key` as the cluster map's "hashAlgorithm":"CRC" says:
// bits 16..30 of the CRC-32 (zlib's) of the key, modulo the vBucket count.
std::uint16_t vbucketOfKey(std::string_view key, std::uint16_t vbucketCount);

}  // namespace kvexec::server::protocol
