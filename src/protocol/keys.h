// protocol/keys.h: a key's vBucket as clients compute it. (The collection
// id prefix of a collection-aware connection's keys, and the paths of
// GET_COLLECTION_ID, are the engine's: kvexec/engine/collections.h.)
//
// Pure functions. Safe from any thread.
#pragma once

#include <cstdint>
#include <string_view>

namespace kvexec::protocol {

// The vBucket of `key` as the cluster map's "hashAlgorithm":"CRC" says:
// bits 16..30 of the CRC-32 (zlib's polynomial and bit order) of the key,
// modulo the vBucket count.
std::uint16_t vbucketOfKey(std::string_view key, std::uint16_t vbucketCount);

}  // namespace kvexec::protocol
