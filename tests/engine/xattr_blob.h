// xattr_blob.h: an xattr blob as tests write one into a value (in front of
// the body, datatype XATTR): u32 total length, then per pair u32 length,
// key, NUL, value, NUL; lengths big-endian.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <string>
#include <utility>

namespace kvexec::engine::test {

inline std::string xattrBlobOf(std::initializer_list<std::pair<std::string, std::string>> pairs) {
    const auto be32 = [](std::size_t n) {
        return std::string{static_cast<char>(n >> 24), static_cast<char>(n >> 16),
                           static_cast<char>(n >> 8), static_cast<char>(n)};
    };
    std::string body;
    for (const auto& [key, value] : pairs) {
        const std::string pair = key + '\0' + value + '\0';
        body += be32(pair.size()) + pair;
    }
    return be32(body.size()) + body;
}

}  // namespace kvexec::engine::test
