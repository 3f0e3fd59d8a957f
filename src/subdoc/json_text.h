// subdoc/json_text.h: JSON text in and out of nlohmann::ordered_json (key
// order kept, as Couchbase keeps it), with the nesting depth bounded
// before the parser sees the text, so that hostile input cannot exhaust
// the stack or the time: a linear pre-scan counts bracket depth outside
// strings, and text deeper than the limit is refused unparsed.
//
// Pure functions; nlohmann's exceptions never leave them. Safe from any
// thread.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kvexec::subdoc {

using Json = nlohmann::ordered_json;

enum class JsonError { None, TooDeep, Invalid };

struct ParsedJson {
    JsonError error = JsonError::None;
    Json value;
};

// The deepest bracket nesting of `text` outside strings ({} and [] count
// as one level each; scalars are depth 0). Does not validate the text.
std::size_t bracketDepth(std::string_view text);

// Parses one JSON value (surrounding whitespace allowed). TooDeep when
// its nesting exceeds `maxDepth`.
ParsedJson parseJson(std::string_view text, std::size_t maxDepth);

// Parses a comma-separated list of JSON values (an array's insides, as
// array pushes accept) into an array; Invalid when the list is empty.
ParsedJson parseJsonList(std::string_view text, std::size_t maxDepth);

// The nesting depth of a parsed value (scalars 0, `{}` 1); iterative.
std::size_t depthOf(const Json& value);

// Compact text of a value. Never throws (invalid UTF-8 is replaced; the
// parser lets none in).
std::string dumpJson(const Json& value);

}  // namespace kvexec::subdoc
