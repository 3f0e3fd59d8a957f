#include "pillowfight/json_document.h"

#include <algorithm>

namespace kvexec::pillowfight {
namespace {

constexpr std::size_t kBraces = 2;

// "Field_<n>":"<value>" with its separating comma when not the first.
std::size_t fieldBytes(const std::string& path, std::size_t valueSize, bool first) {
    return (first ? 0 : 1) + path.size() + 2 + 1 + valueSize + 2;
}

std::string pathOf(std::size_t n) {
    return "Field_" + std::to_string(n);
}

// The value sizes of the fields: full-size values while another one fits,
// then the last one takes up what is left (or shrinks, for a document of
// one field that is too big).
std::vector<std::size_t> valueSizes(std::size_t size) {
    std::vector<std::size_t> sizes{kJsonFieldValueSize};
    std::size_t used = kBraces + fieldBytes(pathOf(1), kJsonFieldValueSize, true);
    for (std::size_t n = 2;; ++n) {
        const std::size_t next = fieldBytes(pathOf(n), kJsonFieldValueSize, false);
        if (used + next > size) {
            break;
        }
        sizes.push_back(kJsonFieldValueSize);
        used += next;
    }
    if (used <= size) {
        sizes.back() += size - used;
    } else {
        sizes.back() -= std::min(sizes.back(), used - size);
    }
    return sizes;
}

}  // namespace

JsonDocument makeJsonDocument(std::size_t size) {
    JsonDocument doc;
    const auto sizes = valueSizes(size);
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        doc.fields.push_back({pathOf(i + 1), '"' + std::string(sizes[i], '*') + '"'});
    }
    doc.text = jsonText(doc.fields);
    return doc;
}

std::string jsonText(const std::vector<JsonField>& fields) {
    std::string text = "{";
    for (const auto& field : fields) {
        if (text.size() > 1) {
            text += ',';
        }
        text += '"' + field.path + "\":" + field.value;
    }
    return text + "}";
}

}  // namespace kvexec::pillowfight
