#include "server/range_scan_wire.h"

#include <charconv>
#include <nlohmann/json.hpp>
#include <system_error>

#include "protocol/base64.h"
#include "protocol/binary_response.h"

namespace kvexec::server {

namespace {

using nlohmann::json;

constexpr std::size_t kMaxKeyBytes = 250;
constexpr std::size_t kMaxNameBytes = 50;

// `text` is a number in `base`, all of it, that fits `out`.
template <class Number>
bool wholeNumber(const std::string& text, int base, Number& out) {
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, out, base);
    return !text.empty() && ec == std::errc() && ptr == end;
}

// Reads `object[name]` when it is there; false (with `error`) when it has
// the wrong type.
bool optionalBool(const json& object, const char* name, bool& out, std::string& error) {
    const auto it = object.find(name);
    if (it == object.end()) {
        return true;
    }
    if (!it->is_boolean()) {
        error = std::string(name) + " must be a boolean";
        return false;
    }
    out = it->get<bool>();
    return true;
}

bool unsignedNumber(const json& value, const char* name, std::uint64_t& out, std::string& error) {
    if (!value.is_number_unsigned() &&
        !(value.is_number_integer() && value.get<std::int64_t>() >= 0)) {
        error = std::string(name) + " must be a non-negative integer";
        return false;
    }
    out = value.get<std::uint64_t>();
    return true;
}

// One end of a range: exactly one of `inclusive` and `exclusive`, base64.
bool rangeEnd(const json& range, const char* inclusive, const char* exclusive, std::string& key,
              bool& isExclusive, std::string& error) {
    const bool hasInclusive = range.contains(inclusive);
    if (hasInclusive == range.contains(exclusive)) {
        error = std::string("range needs exactly one of ") + inclusive + " and " + exclusive;
        return false;
    }
    isExclusive = !hasInclusive;
    const char* name = hasInclusive ? inclusive : exclusive;
    const auto& value = range.at(name);
    if (!value.is_string()) {
        error = std::string(name) + " must be a base64 string";
        return false;
    }
    const auto& text = value.get_ref<const std::string&>();
    auto decoded = text.empty() ? std::optional<std::string>("") : protocol::decodeBase64(text);
    if (!decoded) {
        error = std::string(name) + " is not base64";
        return false;
    }
    if (decoded->size() > kMaxKeyBytes) {
        error = "a range key is longer than 250 bytes";
        return false;
    }
    key = std::move(*decoded);
    return true;
}

bool parseRange(const json& range, engine::RangeScanRequest& out, std::string& error) {
    if (!range.is_object()) {
        error = "range must be an object";
        return false;
    }
    engine::KeyRange keys;
    if (!rangeEnd(range, "start", "excl_start", keys.start, keys.startExclusive, error) ||
        !rangeEnd(range, "end", "excl_end", keys.end, keys.endExclusive, error)) {
        return false;
    }
    out.keys = std::move(keys);
    return true;
}

bool parseSampling(const json& sampling, engine::RangeScanRequest& out, std::string& error) {
    if (!sampling.is_object() || !sampling.contains("samples")) {
        error = "sampling must be an object with samples";
        return false;
    }
    engine::KeySample sample;
    if (!unsignedNumber(sampling.at("samples"), "samples", sample.samples, error)) {
        return false;
    }
    if (sample.samples == 0) {
        error = "samples must be above 0";
        return false;
    }
    if (sampling.contains("seed") &&
        !unsignedNumber(sampling.at("seed"), "seed", sample.seed, error)) {
        return false;
    }
    out.keys = sample;
    return true;
}

bool parseSnapshot(const json& snapshot, engine::RangeScanRequest& out, std::string& error) {
    if (!snapshot.is_object() || !snapshot.contains("vb_uuid") || !snapshot.contains("seqno")) {
        error = "snapshot_requirements must be an object with vb_uuid and seqno";
        return false;
    }
    engine::SnapshotRequirements requirements;
    const auto& uuid = snapshot.at("vb_uuid");
    if (!uuid.is_string() ||
        !wholeNumber(uuid.get_ref<const std::string&>(), 10, requirements.vbucketUuid)) {
        error = "vb_uuid must be a decimal number in a string";
        return false;
    }
    std::uint64_t timeoutMs = 0;
    if (!unsignedNumber(snapshot.at("seqno"), "seqno", requirements.seqno, error) ||
        !optionalBool(snapshot, "seqno_exists", requirements.seqnoExists, error) ||
        (snapshot.contains("timeout_ms") &&
         !unsignedNumber(snapshot.at("timeout_ms"), "timeout_ms", timeoutMs, error))) {
        return false;
    }
    requirements.timeout = std::chrono::milliseconds(timeoutMs);
    out.snapshot = requirements;
    return true;
}

bool parseCollection(const json& object, engine::RangeScanRequest& out, std::string& error) {
    const auto it = object.find("collection");
    if (it == object.end()) {
        return true;
    }
    if (!it->is_string() || !wholeNumber(it->get_ref<const std::string&>(), 16, out.collection)) {
        error = "collection must be a collection id in hexadecimal";
        return false;
    }
    return true;
}

bool parseName(const json& object, std::string& error) {
    const auto it = object.find("name");
    if (it != object.end() &&
        (!it->is_string() || it->get_ref<const std::string&>().size() > kMaxNameBytes)) {
        error = "name must be a string of at most 50 bytes";
        return false;
    }
    return true;
}

void appendLeb128(std::string& out, std::size_t value) {
    do {
        auto byte = static_cast<std::uint8_t>(value & 0x7f);
        value >>= 7;
        if (value != 0) {
            byte |= 0x80;
        }
        out.push_back(static_cast<char>(byte));
    } while (value != 0);
}

}  // namespace

std::optional<engine::RangeScanRequest> parseRangeScanCreate(std::string_view text,
                                                             engine::Vbid vbid,
                                                             std::string& error) {
    const auto object = json::parse(text, nullptr, false);
    if (!object.is_object()) {
        error = "the value must be a JSON object";
        return std::nullopt;
    }
    engine::RangeScanRequest out;
    out.vbid = vbid;
    if (!parseCollection(object, out, error) || !parseName(object, error) ||
        !optionalBool(object, "key_only", out.keyOnly, error) ||
        !optionalBool(object, "include_xattrs", out.includeXattrs, error)) {
        return std::nullopt;
    }
    if (out.keyOnly && out.includeXattrs) {
        error = "include_xattrs cannot be set for a key_only scan";
        return std::nullopt;
    }
    const bool hasRange = object.contains("range");
    if (hasRange == object.contains("sampling")) {
        error = "the scan needs exactly one of range and sampling";
        return std::nullopt;
    }
    if (!(hasRange ? parseRange(object.at("range"), out, error)
                   : parseSampling(object.at("sampling"), out, error))) {
        return std::nullopt;
    }
    if (object.contains("snapshot_requirements") &&
        !parseSnapshot(object.at("snapshot_requirements"), out, error)) {
        return std::nullopt;
    }
    return out;
}

std::optional<engine::RangeScanId> parseRangeScanId(std::string_view extras) {
    engine::RangeScanId id;
    if (extras.size() != id.size()) {
        return std::nullopt;
    }
    std::copy(extras.begin(), extras.end(), id.begin());
    return id;
}

std::optional<RangeScanContinue> parseRangeScanContinue(std::string_view extras) {
    constexpr std::size_t kIdBytes = std::tuple_size_v<engine::RangeScanId>;
    if (extras.size() != kIdBytes + 12) {
        return std::nullopt;
    }
    RangeScanContinue out;
    out.id = *parseRangeScanId(extras.substr(0, kIdBytes));
    out.limits.items = protocol::readBe32(extras, kIdBytes);
    out.limits.time = std::chrono::milliseconds(protocol::readBe32(extras, kIdBytes + 4));
    out.limits.bytes = protocol::readBe32(extras, kIdBytes + 8);
    return out;
}

std::string rangeScanResponseExtras(bool keyOnly) {
    std::string out;
    protocol::appendBe32(out, keyOnly ? 0 : 1);
    return out;
}

void appendRangeScanKey(std::string& out, std::string_view key) {
    appendLeb128(out, key.size());
    out += key;
}

void appendRangeScanDocument(std::string& out, const engine::Item& item, std::uint8_t datatype) {
    protocol::appendBe32(out, item.meta.flags);
    protocol::appendBe32(out, item.meta.expiry);
    protocol::appendBe64(out, item.meta.seqno);
    protocol::appendBe64(out, item.meta.cas);
    out.push_back(static_cast<char>(datatype));
    appendRangeScanKey(out, item.key);
    appendLeb128(out, item.value.size());
    out += item.value;
}

}  // namespace kvexec::server
