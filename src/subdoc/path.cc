#include "subdoc/path.h"

#include <charconv>

#include "subdoc/spec.h"

namespace kvexec::subdoc {

namespace {

// Reads `[N]` at `pos` (pos at the '['); advances past the ']'.
Status readIndex(std::string_view path, std::size_t& pos, PathComponent& out) {
    const std::size_t close = path.find(']', pos);
    if (close == std::string_view::npos) {
        return Status::PathInvalid;
    }
    const std::string_view digits = path.substr(pos + 1, close - pos - 1);
    pos = close + 1;
    out.isIndex = true;
    if (digits == "-1") {
        out.index = -1;
        return Status::Success;
    }
    // Only -1 is a valid negative index (the docs leave others invalid).
    if (digits.empty() || digits[0] < '0' || digits[0] > '9') {
        return Status::PathInvalid;
    }
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), out.index);
    if (ec != std::errc() || end != digits.data() + digits.size()) {
        return Status::PathInvalid;
    }
    return Status::Success;
}

// Reads a key up to an unquoted `.` or `[` (or the end); backticks quote.
Status readKey(std::string_view path, std::size_t& pos, PathComponent& out) {
    bool quoted = false;
    bool wasQuoted = false;
    while (pos < path.size()) {
        const char c = path[pos];
        if (c == '`') {
            if (quoted && pos + 1 < path.size() && path[pos + 1] == '`') {
                out.key.push_back('`');
                pos += 2;
                continue;
            }
            quoted = !quoted;
            wasQuoted = true;
            ++pos;
            continue;
        }
        if (!quoted && (c == '.' || c == '[')) {
            break;
        }
        if (!quoted && c == ']') {
            return Status::PathInvalid;
        }
        out.key.push_back(c);
        ++pos;
    }
    if (quoted || (out.key.empty() && !wasQuoted)) {
        return Status::PathInvalid;
    }
    return Status::Success;
}

// Parses `path` from `pos`, where a key may follow only after a '.'
// unless this is the very start.
Status parseFrom(std::string_view path, std::size_t pos, bool atStart,
                 std::vector<PathComponent>& out) {
    bool needKey = atStart;  // a key is allowed (or required after '.')
    bool afterDot = false;
    while (pos < path.size()) {
        if (out.size() >= kMaxPathComponents) {
            return Status::PathTooBig;
        }
        PathComponent component;
        Status status = Status::Success;
        if (path[pos] == '[') {
            if (afterDot) {
                return Status::PathInvalid;  // `a.[0]`
            }
            status = readIndex(path, pos, component);
        } else if (path[pos] == '.') {
            if (needKey || afterDot) {
                return Status::PathInvalid;  // `.a`, `a..b`
            }
            afterDot = true;
            ++pos;
            continue;
        } else {
            if (!needKey && !afterDot) {
                return Status::PathInvalid;  // `a[0]b`
            }
            status = readKey(path, pos, component);
        }
        if (status != Status::Success) {
            return status;
        }
        out.push_back(std::move(component));
        needKey = false;
        afterDot = false;
    }
    return afterDot ? Status::PathInvalid : Status::Success;
}

bool isValidUtf8(std::string_view s) {
    std::size_t i = 0;
    while (i < s.size()) {
        const auto c = static_cast<unsigned char>(s[i]);
        std::size_t width = c < 0x80             ? 1
                            : (c & 0xe0) == 0xc0 ? 2
                            : (c & 0xf0) == 0xe0 ? 3
                            : (c & 0xf8) == 0xf0 ? 4
                                                 : 0;
        if (width == 0 || i + width > s.size()) {
            return false;
        }
        for (std::size_t k = 1; k < width; ++k) {
            if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) {
                return false;
            }
        }
        i += width;
    }
    return true;
}

bool isPunctOrControl(char c) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
        return true;
    }
    return (u >= 0x21 && u <= 0x2f) || (u >= 0x3a && u <= 0x40) || (u >= 0x5b && u <= 0x60) ||
           (u >= 0x7b && u <= 0x7e);
}

}  // namespace

ParsedPath parsePath(std::string_view path) {
    ParsedPath parsed;
    if (path.size() > kMaxPathLength) {
        parsed.status = Status::PathTooBig;
        return parsed;
    }
    parsed.status = parseFrom(path, 0, true, parsed.components);
    if (parsed.status != Status::Success) {
        parsed.components.clear();
    }
    return parsed;
}

std::string_view xattrKeyOf(std::string_view path) {
    return path.substr(0, std::min(path.find('.'), path.find('[')));
}

bool isValidXattrKey(std::string_view key) {
    if (key.empty() || key.size() > kMaxXattrKeyLength || !isValidUtf8(key)) {
        return false;
    }
    if (key.find_first_of(std::string_view(".[\0", 3)) != std::string_view::npos) {
        return false;
    }
    if (isPunctOrControl(key[0])) {
        return (key[0] == '_' || key[0] == '$') && key.size() >= 2;
    }
    return true;
}

ParsedPath parseXattrPath(std::string_view path) {
    ParsedPath parsed;
    if (path.size() > kMaxPathLength) {
        parsed.status = Status::PathTooBig;
        return parsed;
    }
    const std::string_view key = xattrKeyOf(path);
    if (!isValidXattrKey(key)) {
        parsed.status = Status::XattrInvalid;
        return parsed;
    }
    PathComponent first;
    first.key = std::string(key);
    parsed.components.push_back(std::move(first));
    parsed.status = parseFrom(path, key.size(), false, parsed.components);
    if (parsed.status != Status::Success) {
        parsed.components.clear();
    }
    return parsed;
}

}  // namespace kvexec::subdoc
