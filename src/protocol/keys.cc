#include "protocol/keys.h"

#include <zlib.h>

namespace kvexec::protocol {

std::uint16_t vbucketOfKey(std::string_view key, std::uint16_t vbucketCount) {
    const uLong crc =
        crc32(0L, reinterpret_cast<const Bytef*>(key.data()), static_cast<uInt>(key.size()));
    return static_cast<std::uint16_t>(((crc >> 16) & 0x7fff) % vbucketCount);
}

}  // namespace kvexec::protocol
