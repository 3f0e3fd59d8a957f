// xattrs.cc: the blob at the front of a value with the XATTR datatype bit.
#include "kvexec/engine/xattrs.h"

#include <algorithm>
#include <cstddef>

namespace kvexec::engine {

namespace {

// The blob's lengths: big-endian u32 (the caller checked there are 4 bytes).
std::uint32_t readBe32(std::string_view bytes) {
    std::uint32_t n = 0;
    for (std::size_t i = 0; i < 4; ++i) {
        n = (n << 8) | static_cast<unsigned char>(bytes[i]);
    }
    return n;
}

std::string be32(std::size_t n) {
    return {static_cast<char>((n >> 24) & 0xff), static_cast<char>((n >> 16) & 0xff),
            static_cast<char>((n >> 8) & 0xff), static_cast<char>(n & 0xff)};
}

}  // namespace

std::string_view xattrBlob(std::string_view value, std::uint8_t datatype) {
    if ((datatype & kDatatypeXattr) == 0 || value.size() < 4) {
        return {};
    }
    return value.substr(0, std::min<std::size_t>(value.size(), 4 + std::size_t{readBe32(value)}));
}

std::string_view documentBody(std::string_view value, std::uint8_t datatype) {
    return value.substr(xattrBlob(value, datatype).size());
}

std::string systemXattrs(std::string_view value, std::uint8_t datatype) {
    std::string_view pairs = xattrBlob(value, datatype);
    if (pairs.size() < 4) {
        return {};
    }
    pairs.remove_prefix(4);
    std::string kept;
    while (!pairs.empty()) {
        if (pairs.size() < 4 || readBe32(pairs) > pairs.size() - 4) {
            return {};
        }
        const std::string_view pair = pairs.substr(4, readBe32(pairs));
        if (pair.starts_with('_')) {
            kept += be32(pair.size());
            kept += pair;
        }
        pairs.remove_prefix(4 + pair.size());
    }
    return kept.empty() ? std::string() : be32(kept.size()) + kept;
}

}  // namespace kvexec::engine
