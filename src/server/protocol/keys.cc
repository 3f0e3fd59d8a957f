#include "server/protocol/keys.h"

#include <zlib.h>

namespace kvexec::server::protocol {

std::optional<CollectionKey> splitCollectionKey(std::string_view wireKey) {
    CollectionKey result;
    std::uint32_t shift = 0;
    for (std::size_t i = 0; i < wireKey.size() && i < 5; ++i) {
        const auto byte = static_cast<std::uint8_t>(wireKey[i]);
        result.collectionId |= static_cast<std::uint32_t>(byte & 0x7f) << shift;
        shift += 7;
        if ((byte & 0x80) == 0) {
            result.key = wireKey.substr(i + 1);
            if (result.key.empty()) {
                return std::nullopt;
            }
            return result;
        }
    }
    return std::nullopt;
}

std::uint16_t vbucketOfKey(std::string_view key, std::uint16_t vbucketCount) {
    const uLong crc =
        crc32(0L, reinterpret_cast<const Bytef*>(key.data()), static_cast<uInt>(key.size()));
    return static_cast<std::uint16_t>(((crc >> 16) & 0x7fff) % vbucketCount);
}

}  // namespace kvexec::server::protocol
