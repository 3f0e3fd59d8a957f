// RANGE_SCAN_CREATE, RANGE_SCAN_CONTINUE and RANGE_SCAN_CANCEL (0xda-0xdc),
// Couchbase's range scans (kvexec/engine/range_scan.h, server/range_scan_wire.h):
// what the SDKs' collection.scan sends, one scan per vBucket.
//
// The engine answers each inline, so these run on the loop thread with no
// operation pending. A continue's documents go out in responses of about
// kResponseBytes each; the last carries RANGE_SCAN_MORE or
// RANGE_SCAN_COMPLETE (or the error that ended the scan).
#include <algorithm>

#include "kvexec/engine/xattrs.h"
#include "server/connection.h"
#include "server/range_scan_wire.h"

namespace kvexec::server {

using protocol::Request;
using protocol::Status;

namespace {

// Records are packed into responses of about this many bytes.
constexpr std::size_t kResponseBytes = 16 * 1024;
// A continue returns at most about this much however large the client's
// limits, then answers RANGE_SCAN_MORE (Couchbase lets a server stop
// early): one continue never holds the loop thread or the output buffer
// for a whole vBucket.
constexpr std::size_t kContinueBytes = 1024 * 1024;

std::string_view idBytes(const engine::RangeScanId& id) {
    return {reinterpret_cast<const char*>(id.data()), id.size()};
}

}  // namespace

void Connection::binaryRangeScanCreate(const Request& request) {
    std::string error;
    const auto scan = parseRangeScanCreate(request.value, request.vbucket, error);
    if (!scan) {
        return respondError(request, Status::InvalidArguments, error);
    }
    if (scan->includeXattrs && !xattr_) {
        return respondError(request, Status::NotSupported,
                            "include_xattrs needs the XATTR feature (HELLO 0x06)");
    }
    // Completes later when it waits for the snapshot's seqno to persist.
    auto done = completion<engine::RangeScanCreateResult>(
        [this, request](const engine::RangeScanCreateResult& created) {
            if (created.status != engine::Status::Success) {
                return respondEngine(request, created.status);
            }
            respond(request, Status::Success, {}, {}, idBytes(created.id));
        });
    callEngine([&] { bucket().createRangeScan(*scan, std::move(done)); });
}

void Connection::binaryRangeScanContinue(const Request& request) {
    auto scan = parseRangeScanContinue(request.extras);
    if (!scan) {
        return respondError(request, Status::InvalidArguments, "extras must be 28 bytes");
    }
    auto& limits = scan->limits;
    limits.bytes = limits.bytes == 0 ? kContinueBytes : std::min(limits.bytes, kContinueBytes);
    const auto batch = bucket().continueRangeScan(request.vbucket, scan->id, limits);
    if (batch.status != engine::Status::Success && batch.items.empty()) {
        return respondEngine(request, batch.status);
    }
    sendRangeScanBatch(request, batch);
}

// The records in responses of about kResponseBytes; the last one says how
// the continue ended.
void Connection::sendRangeScanBatch(const Request& request, const engine::RangeScanBatch& batch) {
    const std::string extras = rangeScanResponseExtras(batch.keyOnly);
    std::string records;
    for (const auto& item : batch.items) {
        if (batch.keyOnly) {
            appendRangeScanKey(records, item.key);
        } else {
            appendRangeScanDocument(records, item, scanDatatype(item));
        }
        if (records.size() >= kResponseBytes) {
            respond(request, Status::Success, extras, {}, records);
            records.clear();
        }
    }
    if (batch.status != engine::Status::Success) {
        if (!records.empty()) {
            respond(request, Status::Success, extras, {}, records);
        }
        return respondEngine(request, batch.status);
    }
    respond(request, batch.complete ? Status::RangeScanComplete : Status::RangeScanMore, extras, {},
            records);
}

// A document's datatype as a scan returns it: JSON if the client
// negotiated it, XATTR when the value holds xattrs (include_xattrs).
std::uint8_t Connection::scanDatatype(const engine::Item& item) const {
    return clientDatatype(item) | (item.meta.datatype & engine::kDatatypeXattr);
}

void Connection::binaryRangeScanCancel(const Request& request) {
    const auto id = parseRangeScanId(request.extras);
    if (!id) {
        return respondError(request, Status::InvalidArguments, "extras must be 16 bytes");
    }
    const auto status = bucket().cancelRangeScan(request.vbucket, *id);
    if (status != engine::Status::Success) {
        return respondEngine(request, status);
    }
    respond(request, Status::Success);
}

}  // namespace kvexec::server
