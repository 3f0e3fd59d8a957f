// server/range_scan_wire.h: the wire forms of RANGE_SCAN_CREATE (0xda),
// RANGE_SCAN_CONTINUE (0xdb) and RANGE_SCAN_CANCEL (0xdc), Couchbase's
// (kv_engine docs/range_scans): the create's JSON value, the continue's and
// cancel's extras, and the records a continue's responses carry.
//
// Pure functions; safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "kvexec/engine/item.h"
#include "kvexec/engine/range_scan.h"

namespace kvexec::server {

// The create's value, e.g. {"collection":"8","key_only":true,
// "range":{"start":"<base64>","excl_end":"<base64>"}}, or "sampling":
// {"samples":N,"seed":S}, and optionally "include_xattrs", "name" and
// "snapshot_requirements":{"vb_uuid":"<decimal>","seqno":N,
// "seqno_exists":bool,"timeout_ms":N}. Unknown keys are ignored, as
// Couchbase does. nullopt, with `error` saying what is wrong, for bad
// input: not a JSON object, a field of the wrong type, neither or both of
// range and sampling, both start and excl_start (or end and excl_end),
// keys that are not base64 or over 250 bytes, a name over 50 bytes, a
// zero sample, key_only with include_xattrs, a vb_uuid that is no
// decimal number.
std::optional<engine::RangeScanRequest> parseRangeScanCreate(std::string_view json,
                                                             engine::Vbid vbid, std::string& error);

struct RangeScanContinue {
    engine::RangeScanId id{};
    engine::RangeScanLimits limits;
};
// 28 bytes of extras: the scan's id, then item, time (ms) and byte limits
// (each u32, big-endian; 0: none). nullopt for any other size.
std::optional<RangeScanContinue> parseRangeScanContinue(std::string_view extras);
// 16 bytes of extras: the scan's id. nullopt for any other size.
std::optional<engine::RangeScanId> parseRangeScanId(std::string_view extras);

// The 4-byte extras of every continue response: 0 when the records are
// keys, 1 when they are documents.
std::string rangeScanResponseExtras(bool keyOnly);
// One record of a continue response's value. A key: its length (LEB128)
// and bytes. A document: flags, expiry (u32 each), seqno, CAS (u64 each),
// datatype (u8), then its key and its value, each after its length
// (LEB128).
void appendRangeScanKey(std::string& out, std::string_view key);
void appendRangeScanDocument(std::string& out, const engine::Item& item, std::uint8_t datatype);

}  // namespace kvexec::server
