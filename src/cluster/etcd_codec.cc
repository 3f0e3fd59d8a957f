#include "cluster/etcd_codec.h"

#include <charconv>

#include "protocol/auth/crypto.h"

namespace kvexec::cluster::etcd_codec {
namespace {

using protocol::auth::base64Decode;
using protocol::auth::base64Encode;

[[noreturn]] void malformed(std::string_view what) {
    std::string message = "malformed reply from etcd: ";
    message += what;
    throw EtcdError(message);
}

// The member `name` of `object`, or nullptr when it is absent (etcd leaves
// out fields at their default).
const json* member(const json& object, const char* name) {
    if (!object.is_object()) {
        malformed("expected an object");
    }
    const auto found = object.find(name);
    return found == object.end() ? nullptr : &*found;
}

const json& objectMember(const json& object, const char* name) {
    static const json kEmpty = json::object();
    const json* value = member(object, name);
    if (value == nullptr) {
        return kEmpty;
    }
    if (!value->is_object()) {
        std::string what = name;
        what += " is not an object";
        malformed(what);
    }
    return *value;
}

const json& arrayMember(const json& object, const char* name) {
    static const json kEmpty = json::array();
    const json* value = member(object, name);
    if (value == nullptr) {
        return kEmpty;
    }
    if (!value->is_array()) {
        std::string what = name;
        what += " is not an array";
        malformed(what);
    }
    return *value;
}

// int64 fields arrive as decimal strings; numbers are taken too.
std::int64_t int64Member(const json& object, const char* name) {
    const json* value = member(object, name);
    if (value == nullptr) {
        return 0;
    }
    if (value->is_number_integer()) {
        return value->get<std::int64_t>();
    }
    std::int64_t parsed = 0;
    if (value->is_string()) {
        const std::string& text = value->get_ref<const std::string&>();
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), parsed);
        if (error == std::errc() && end == text.data() + text.size() && !text.empty()) {
            return parsed;
        }
    }
    std::string what = name;
    what += " is not an int64";
    malformed(what);
}

bool boolMember(const json& object, const char* name) {
    const json* value = member(object, name);
    if (value != nullptr && !value->is_boolean()) {
        std::string what = name;
        what += " is not a boolean";
        malformed(what);
    }
    return value != nullptr && value->get<bool>();
}

std::string stringMember(const json& object, const char* name) {
    const json* value = member(object, name);
    if (value != nullptr && !value->is_string()) {
        std::string what = name;
        what += " is not a string";
        malformed(what);
    }
    return value != nullptr ? value->get<std::string>() : std::string();
}

std::string bytesMember(const json& object, const char* name) {
    auto bytes = base64Decode(stringMember(object, name));
    if (!bytes) {
        std::string what = name;
        what += " is not base64";
        malformed(what);
    }
    return std::move(*bytes);
}

KeyValue readKeyValue(const json& kv) {
    return KeyValue{bytesMember(kv, "key"), bytesMember(kv, "value"),
                    int64Member(kv, "create_revision"), int64Member(kv, "mod_revision"),
                    int64Member(kv, "lease")};
}

std::vector<KeyValue> readKvs(const json& reply) {
    std::vector<KeyValue> kvs;
    for (const json& kv : arrayMember(reply, "kvs")) {
        kvs.push_back(readKeyValue(kv));
    }
    return kvs;
}

// A streamed reply: {"result": {...}} or {"error": {"message": ...}}.
const json& streamResult(const json& message) {
    if (const json* error = member(message, "error"); error != nullptr) {
        std::string what = "etcd: ";
        what += error->is_object() ? stringMember(*error, "message") : error->dump();
        throw EtcdError(what);
    }
    return objectMember(message, "result");
}

}  // namespace

std::string prefixEnd(std::string_view prefix) {
    std::string end(prefix);
    while (!end.empty()) {
        auto& last = reinterpret_cast<unsigned char&>(end.back());
        if (last < 0xff) {
            ++last;
            return end;
        }
        end.pop_back();
    }
    return std::string(1, '\0');
}

json rangeRequest(std::string_view key, std::string_view rangeEnd) {
    json request = {{"key", base64Encode(key)}};
    if (!rangeEnd.empty()) {
        request["range_end"] = base64Encode(rangeEnd);
    }
    return request;
}

json putRequest(std::string_view key, std::string_view value, std::int64_t lease) {
    json request = {{"key", base64Encode(key)}, {"value", base64Encode(value)}};
    if (lease != 0) {
        request["lease"] = std::to_string(lease);
    }
    return request;
}

json deleteRequest(std::string_view key) {
    return {{"key", base64Encode(key)}};
}

json casPutRequest(std::string_view key, std::string_view value, std::int64_t expectedModRevision,
                   std::int64_t lease) {
    return fencedPutRequest(key, value, {ModRevisionCompare{std::string(key), expectedModRevision}},
                            lease);
}

json fencedPutRequest(std::string_view key, std::string_view value,
                      const std::vector<ModRevisionCompare>& compares, std::int64_t lease) {
    json compare = json::array();
    for (const ModRevisionCompare& condition : compares) {
        // An absent key compares as mod revision 0 in etcd's txn.
        compare.push_back({{"target", "MOD"},
                           {"result", "EQUAL"},
                           {"key", base64Encode(condition.key)},
                           {"mod_revision", std::to_string(condition.modRevision)}});
    }
    return {{"compare", std::move(compare)},
            {"success", json::array({{{"request_put", putRequest(key, value, lease)}}})},
            {"failure", json::array({{{"request_range", rangeRequest(key)}}})}};
}

json leaseGrantRequest(std::int64_t ttlSeconds) {
    return {{"TTL", std::to_string(ttlSeconds)}};
}

json leaseRequest(std::int64_t leaseId) {
    return {{"ID", std::to_string(leaseId)}};
}

json watchCreateRequest(std::string_view key, std::string_view rangeEnd,
                        std::int64_t startRevision) {
    json create = rangeRequest(key, rangeEnd);
    if (startRevision > 0) {
        create["start_revision"] = std::to_string(startRevision);
    }
    return {{"create_request", std::move(create)}};
}

json parseReply(std::string_view body) {
    json reply = json::parse(body, nullptr, /*allow_exceptions=*/false);
    if (reply.is_discarded() || !reply.is_object()) {
        std::string what = "not a JSON object: ";
        what += body.substr(0, 200);
        malformed(what);
    }
    return reply;
}

std::string errorMessage(std::string_view body) {
    const json reply = json::parse(body, nullptr, /*allow_exceptions=*/false);
    if (reply.is_object()) {
        for (const char* name : {"message", "error"}) {
            const auto found = reply.find(name);
            if (found != reply.end() && found->is_string()) {
                return found->get<std::string>();
            }
        }
    }
    return std::string(body.substr(0, 200));
}

std::vector<KeyValue> readRange(const json& reply) {
    return readKvs(reply);
}

std::int64_t readHeaderRevision(const json& reply) {
    return int64Member(objectMember(reply, "header"), "revision");
}

std::int64_t readDeleted(const json& reply) {
    return int64Member(reply, "deleted");
}

CasResult readCasPut(const json& reply) {
    CasResult result;
    result.succeeded = boolMember(reply, "succeeded");
    result.revision = readHeaderRevision(reply);
    if (result.succeeded) {
        return result;
    }
    // The failure branch holds one range reply: the key as it is.
    const json& responses = arrayMember(reply, "responses");
    if (responses.size() != 1) {
        malformed("a failed txn without its one range reply");
    }
    const auto kvs = readKvs(objectMember(responses.front(), "response_range"));
    if (!kvs.empty()) {
        result.current = kvs.front();
    }
    return result;
}

std::int64_t readLeaseGrant(const json& reply) {
    const std::string error = stringMember(reply, "error");
    if (!error.empty()) {
        std::string what = "etcd: ";
        what += error;
        throw EtcdError(what);
    }
    const std::int64_t id = int64Member(reply, "ID");
    if (id == 0) {
        malformed("a lease grant without an ID");
    }
    return id;
}

std::int64_t readKeepAlive(const json& reply) {
    return int64Member(streamResult(reply), "TTL");
}

WatchMessage readWatchMessage(std::string_view line) {
    const json message = parseReply(line);  // streamResult points into it
    const json& result = streamResult(message);
    WatchMessage watch;
    watch.created = boolMember(result, "created");
    watch.canceled = boolMember(result, "canceled");
    watch.cancelReason = stringMember(result, "cancel_reason");
    watch.compactRevision = int64Member(result, "compact_revision");
    watch.headerRevision = readHeaderRevision(result);
    for (const json& event : arrayMember(result, "events")) {
        const std::string type = stringMember(event, "type");
        if (!type.empty() && type != "PUT" && type != "DELETE") {
            malformed("an event of unknown type");
        }
        KeyValue kv = readKeyValue(objectMember(event, "kv"));
        watch.events.push_back(
            WatchEvent{type == "DELETE" ? WatchEvent::Type::Delete : WatchEvent::Type::Put,
                       std::move(kv.key), std::move(kv.value), kv.modRevision});
    }
    return watch;
}

}  // namespace kvexec::cluster::etcd_codec
