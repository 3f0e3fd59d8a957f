// protocol/dcp_types.h: what every DCP message codec shares: the result of
// decoding a packet (the message, or the status and reason to refuse it
// with), failover log entries, and the enumerations several messages use.
//
// DCP (Couchbase's Database Change Protocol) is the binary protocol's
// replication stream: a consumer opens a connection (DCP_OPEN), asks a
// producer for a stream per vBucket (DCP_STREAM_REQ) and receives snapshot
// markers, mutations, deletions, expirations, prepares, commits and aborts,
// each a request with the stream's opaque. The message codecs are in
// dcp_connection.h, dcp_stream_request.h and dcp_documents.h; dcp.h
// includes them all.
//
// Plain values; no I/O, no state. Safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "protocol/binary_types.h"

namespace kvexec::protocol::dcp {

// Why a packet is not a valid message: the status to answer it with
// (InvalidArguments unless the message says otherwise) and a reason for the
// error context and the logs.
struct DecodeError {
    Status status = Status::InvalidArguments;
    std::string reason;
};

// A decoder's answer: the message, or why the packet is refused. Messages
// that carry bytes (keys, values, names) hold views into the parsed packet,
// so the packet's bytes must outlive the message.
template <typename Message>
struct Decoded {
    std::optional<Message> message;
    DecodeError error;  // meaningful only without a message

    explicit operator bool() const { return message.has_value(); }
    const Message& operator*() const { return *message; }
    const Message* operator->() const { return &*message; }

    static Decoded ok(Message m) { return {std::move(m), {}}; }
    static Decoded refuse(std::string reason, Status status = Status::InvalidArguments) {
        return {std::nullopt, {status, std::move(reason)}};
    }
};

// One failover log entry: the vBucket's history has been branch `uuid`
// since `seqno`. Logs travel newest first, 16 bytes per entry.
struct FailoverEntry {
    std::uint64_t uuid = 0;
    std::uint64_t seqno = 0;
    friend bool operator==(const FailoverEntry&, const FailoverEntry&) = default;
};

// DCP_SET_VBUCKET_STATE's state byte (the engine's VBucketState numbers).
enum class VbucketState : std::uint8_t { Active = 1, Replica = 2, Pending = 3, Dead = 4 };

// DCP_STREAM_END's reason.
enum class StreamEndReason : std::uint32_t {
    Ok = 0,              // the stream reached its end seqno
    Closed = 1,          // the consumer closed it (DCP_CLOSE_STREAM)
    StateChanged = 2,    // the vBucket left the state the stream needs
    Disconnected = 3,    // the connection is going away
    TooSlow = 4,         // the consumer read too slowly; reconnect
    BackfillFailed = 5,  // reading from disk failed
    Rollback = 6,        // the vBucket rolled back; request again
    FilterEmpty = 7,     // every collection the stream filtered is gone
    LostPrivileges = 8,  // the connection may no longer read the stream
};

}  // namespace kvexec::protocol::dcp
