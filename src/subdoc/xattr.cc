#include "subdoc/xattr.h"

namespace kvexec::subdoc {

namespace {

std::uint32_t readU32(std::string_view bytes, std::size_t at) {
    std::uint32_t v = 0;
    for (std::size_t i = 0; i < 4; ++i) {
        v = (v << 8) | static_cast<unsigned char>(bytes[at + i]);
    }
    return v;
}

void appendU32(std::string& out, std::size_t v) {
    for (int shift = 24; shift >= 0; shift -= 8) {
        out.push_back(static_cast<char>((v >> shift) & 0xff));
    }
}

// Decodes one pair occupying exactly `pair` (its length prefix removed).
std::optional<XattrPair> decodePair(std::string_view pair) {
    const std::size_t keyEnd = pair.find('\0');
    if (keyEnd == std::string_view::npos || keyEnd == 0 || pair.size() < keyEnd + 2 ||
        pair.back() != '\0') {
        return std::nullopt;
    }
    const std::string_view value = pair.substr(keyEnd + 1, pair.size() - keyEnd - 2);
    if (value.find('\0') != std::string_view::npos) {
        return std::nullopt;
    }
    return XattrPair{std::string(pair.substr(0, keyEnd)), std::string(value)};
}

}  // namespace

std::optional<SplitValue> splitValue(std::string_view stored, std::uint8_t datatype) {
    SplitValue split;
    if ((datatype & kDatatypeXattr) == 0) {
        split.body = stored;
        return split;
    }
    if (stored.size() < 4) {
        return std::nullopt;
    }
    const std::size_t total = readU32(stored, 0);
    if (total > stored.size() - 4) {
        return std::nullopt;
    }
    std::size_t at = 4;
    const std::size_t end = 4 + total;
    while (at < end) {
        if (end - at < 4) {
            return std::nullopt;
        }
        const std::size_t length = readU32(stored, at);
        at += 4;
        if (length > end - at) {
            return std::nullopt;
        }
        auto pair = decodePair(stored.substr(at, length));
        if (!pair) {
            return std::nullopt;
        }
        split.xattrs.push_back(std::move(*pair));
        at += length;
    }
    split.body = stored.substr(end);
    return split;
}

std::string encodeXattrs(const std::vector<XattrPair>& xattrs) {
    if (xattrs.empty()) {
        return {};
    }
    std::size_t total = 0;
    for (const auto& x : xattrs) {
        total += 4 + x.key.size() + 1 + x.value.size() + 1;
    }
    std::string out;
    out.reserve(4 + total);
    appendU32(out, total);
    for (const auto& x : xattrs) {
        appendU32(out, x.key.size() + 1 + x.value.size() + 1);
        out.append(x.key);
        out.push_back('\0');
        out.append(x.value);
        out.push_back('\0');
    }
    return out;
}

std::vector<std::size_t> valueOffsets(const std::vector<XattrPair>& xattrs) {
    std::vector<std::size_t> offsets;
    std::size_t at = 4;
    for (const auto& x : xattrs) {
        offsets.push_back(at + 4 + x.key.size() + 1);
        at += 4 + x.key.size() + 1 + x.value.size() + 1;
    }
    return offsets;
}

}  // namespace kvexec::subdoc
