#include "subdoc/json_text.h"

#include <utility>
#include <vector>

namespace kvexec::subdoc {

std::size_t bracketDepth(std::string_view text) {
    std::size_t depth = 0;
    std::size_t deepest = 0;
    bool inString = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (inString) {
            if (c == '\\') {
                ++i;  // skip the escaped character
            } else if (c == '"') {
                inString = false;
            }
            continue;
        }
        if (c == '"') {
            inString = true;
        } else if (c == '{' || c == '[') {
            deepest = std::max(deepest, ++depth);
        } else if ((c == '}' || c == ']') && depth > 0) {
            --depth;
        }
    }
    return deepest;
}

ParsedJson parseJson(std::string_view text, std::size_t maxDepth) {
    ParsedJson parsed;
    if (bracketDepth(text) > maxDepth) {
        parsed.error = JsonError::TooDeep;
        return parsed;
    }
    try {
        parsed.value = Json::parse(text.begin(), text.end(), nullptr, false);
        if (parsed.value.is_discarded()) {
            parsed.error = JsonError::Invalid;
        }
    } catch (const std::exception&) {
        // allow_exceptions=false covers syntax errors; this covers the rest.
        parsed.error = JsonError::Invalid;
    }
    return parsed;
}

ParsedJson parseJsonList(std::string_view text, std::size_t maxDepth) {
    std::string wrapped;
    wrapped.reserve(text.size() + 2);
    wrapped.push_back('[');
    wrapped.append(text);
    wrapped.push_back(']');
    // The wrapping array is not part of the values' depth.
    ParsedJson parsed = parseJson(wrapped, maxDepth + 1);
    if (parsed.error == JsonError::None && parsed.value.empty()) {
        parsed.error = JsonError::Invalid;
    }
    return parsed;
}

std::size_t depthOf(const Json& value) {
    std::size_t deepest = 0;
    std::vector<std::pair<const Json*, std::size_t>> pending{{&value, 0}};
    while (!pending.empty()) {
        auto [node, depth] = pending.back();
        pending.pop_back();
        if (!node->is_structured()) {
            continue;
        }
        deepest = std::max(deepest, depth + 1);
        for (const auto& child : *node) {
            pending.emplace_back(&child, depth + 1);
        }
    }
    return deepest;
}

std::string dumpJson(const Json& value) {
    return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace kvexec::subdoc
