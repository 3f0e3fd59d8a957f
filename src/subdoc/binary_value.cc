#include "subdoc/binary_value.h"

#include "protocol/auth/crypto.h"

namespace kvexec::subdoc {
namespace {

constexpr std::string_view kPrefix = "cb-content-base64-encoded:";

}  // namespace

std::string encodeBinaryValue(std::string_view bytes) {
    std::string out = "\"";
    out += kPrefix;
    out += protocol::auth::base64Encode(bytes);
    out += '"';
    return out;
}

std::optional<std::string> decodeBinaryValue(std::string_view json) {
    if (json.size() >= 2 && json.front() == '"' && json.back() == '"') {
        json = json.substr(1, json.size() - 2);
    }
    if (!json.starts_with(kPrefix)) {
        return std::nullopt;
    }
    return protocol::auth::base64Decode(json.substr(kPrefix.size()));
}

}  // namespace kvexec::subdoc
