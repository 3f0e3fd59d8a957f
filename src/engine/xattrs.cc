// xattrs.cc: the blob at the front of a value with the XATTR datatype bit.
#include "kvexec/engine/xattrs.h"

#include <algorithm>
#include <cstddef>

namespace kvexec::engine {

std::string_view xattrBlob(std::string_view value, std::uint8_t datatype) {
    if ((datatype & kDatatypeXattr) == 0 || value.size() < 4) {
        return {};
    }
    std::size_t length = 0;
    for (std::size_t i = 0; i < 4; ++i) {
        length = (length << 8) | static_cast<unsigned char>(value[i]);
    }
    return value.substr(0, std::min(value.size(), 4 + length));
}

std::string_view documentBody(std::string_view value, std::uint8_t datatype) {
    return value.substr(xattrBlob(value, datatype).size());
}

namespace {

std::uint32_t readBe32(std::string_view bytes) {
    std::uint32_t n = 0;
    for (std::size_t i = 0; i < 4; ++i) {
        n = (n << 8) | static_cast<unsigned char>(bytes[i]);
    }
    return n;
}

void appendBe32(std::string& out, std::size_t n) {
    for (int shift = 24; shift >= 0; shift -= 8) {
        out.push_back(static_cast<char>((n >> shift) & 0xff));
    }
}

}  // namespace

std::string systemXattrs(std::string_view value, std::uint8_t datatype) {
    std::string_view pairs = xattrBlob(value, datatype);
    if (pairs.size() < 4) {
        return {};
    }
    pairs.remove_prefix(4);
    std::string kept(4, '\0');
    while (!pairs.empty()) {
        if (pairs.size() < 4 || readBe32(pairs) > pairs.size() - 4) {
            return {};
        }
        const std::string_view pair = pairs.substr(4, readBe32(pairs));
        if (pair.starts_with('_')) {
            appendBe32(kept, pair.size());
            kept += pair;
        }
        pairs.remove_prefix(4 + pair.size());
    }
    if (kept.size() == 4) {
        return {};
    }
    std::string length;
    appendBe32(length, kept.size() - 4);
    kept.replace(0, 4, length);
    return kept;
}

}  // namespace kvexec::engine
