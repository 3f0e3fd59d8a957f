#include "subdoc/virtual_xattr.h"

#include <cstdio>

#include "storage/crc32c.h"

namespace kvexec::subdoc {

std::string hex64(std::uint64_t v) {
    char buffer[19];
    std::snprintf(buffer, sizeof buffer, "0x%016llx", static_cast<unsigned long long>(v));
    return buffer;
}

std::string hex32(std::uint32_t v) {
    char buffer[11];
    std::snprintf(buffer, sizeof buffer, "0x%08x", static_cast<unsigned>(v));
    return buffer;
}

namespace {

Json datatypeNames(std::uint8_t datatype) {
    Json names = Json::array();
    if (datatype & kDatatypeJson) {
        names.push_back("json");
    }
    if (datatype & kDatatypeSnappy) {
        names.push_back("snappy");
    }
    if (datatype & kDatatypeXattr) {
        names.push_back("xattr");
    }
    if (names.empty()) {
        names.push_back("raw");
    }
    return names;
}

}  // namespace

Json documentVattr(const DocumentMeta& meta, std::string_view body) {
    Json doc = Json::object();
    doc["CAS"] = hex64(meta.cas);
    doc["vbucket_uuid"] = hex64(meta.vbucketUuid);
    doc["seqno"] = hex64(meta.seqno);
    // The engine keeps no revision count (its DCP messages say 1 too);
    // transactions read the field and keep it only to restore.
    doc["revid"] = "1";
    doc["exptime"] = meta.expiry;
    doc["flags"] = meta.flags;
    doc["value_bytes"] = body.size();
    doc["datatype"] = datatypeNames(meta.datatype);
    doc["deleted"] = meta.deleted;
    // Couchbase CAS values are hybrid logical clocks in nanoseconds.
    doc["last_modified"] = std::to_string(meta.cas / 1000000000ull);
    doc["value_crc32c"] = hex32(storage::crc32c(body.data(), body.size()));
    return doc;
}

std::optional<Json> virtualXattr(std::string_view key, const DocumentMeta& meta,
                                 std::string_view body, const std::vector<XattrPair>& xattrs) {
    if (key == "$document") {
        return documentVattr(meta, body);
    }
    if (key == "$vbucket") {
        // Couchbase reports seconds, as a string, and whether the clock
        // is the machine's ("real") or ran ahead of it ("logical").
        Json hlc = Json::object();
        hlc["now"] = std::to_string(meta.hlcNow / 1000000000ull);
        hlc["mode"] = "real";
        Json vbucket = Json::object();
        vbucket["HLC"] = std::move(hlc);
        return vbucket;
    }
    if (key == "$XTOC") {
        Json keys = Json::array();
        for (const auto& x : xattrs) {
            keys.push_back(x.key);
        }
        return keys;
    }
    return std::nullopt;
}

}  // namespace kvexec::subdoc
