#include "subdoc/binary_value.h"

#include "protocol/auth/crypto.h"

namespace kvexec::subdoc {

std::string encodeBinaryValue(std::string_view bytes) {
    std::string out = "\"";
    out += kBinaryValuePrefix;
    out += protocol::auth::base64Encode(bytes);
    out += '"';
    return out;
}

std::optional<std::string> decodeBinaryValue(std::string_view json) {
    if (json.size() >= 2 && json.front() == '"' && json.back() == '"') {
        json = json.substr(1, json.size() - 2);
    }
    if (!json.starts_with(kBinaryValuePrefix)) {
        return std::nullopt;
    }
    return protocol::auth::base64Decode(json.substr(kBinaryValuePrefix.size()));
}

}  // namespace kvexec::subdoc
