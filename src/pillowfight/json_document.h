// pillowfight/json_document.h: the JSON documents that -J/--json-values and
// --subdoc store, in cbc-pillowfight's --json manner: an object of fields
// "Field_1", "Field_2", ... whose values are 16-character strings, as many
// as the document's size holds. Unlike cbc-pillowfight (whose documents
// only come near the size), the last field's value is padded so that the
// text is exactly `size` bytes, the size a raw value would have: full- and
// sub-document runs then store the same bytes.
//
// The fields are what --subdoc's paths name and its upserts write.
// Pure functions. Safe from any thread.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace kvexec::pillowfight {

inline constexpr std::size_t kJsonFieldValueSize = 16;

struct JsonField {
    std::string path;   // Field_<n>
    std::string value;  // the value as JSON text, quotes included
};

struct JsonDocument {
    std::string text;
    std::vector<JsonField> fields;
};

// Values are '*' characters. Sizes below the smallest document
// ({"Field_1":""}, 14 bytes) give that document.
JsonDocument makeJsonDocument(std::size_t size);

// The object's text: {"<path>":<value>,...}. Callers that change the
// values' characters (random bodies) rebuild the text with it.
std::string jsonText(const std::vector<JsonField>& fields);

}  // namespace kvexec::pillowfight
