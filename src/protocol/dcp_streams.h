// protocol/dcp_streams.h: the DCP messages that open, end and steer a
// vBucket stream: DCP_STREAM_REQ (0x53) and its answer (the failover log,
// or ROLLBACK with the seqno to roll back to), DCP_GET_FAILOVER_LOG (0x54),
// DCP_ADD_STREAM (0x51: an orchestrator tells a consumer to open a stream),
// DCP_CLOSE_STREAM (0x52), DCP_STREAM_END (0x55) and
// DCP_SET_VBUCKET_STATE (0x5b: takeover, and the replication topology a
// new active needs for SyncWrites).
//
// Each message has an encoder appending the whole packet and a decoder over
// the parsed Request or Response (binary_request.h, client_codec.h) that
// refuses anything malformed. Messages hold views into caller-owned bytes
// except where noted. Pure functions; safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/binary_request.h"
#include "protocol/client_codec.h"
#include "protocol/dcp_types.h"

namespace kvexec::protocol::dcp {

// Stream flags (DCP_STREAM_REQ and DCP_ADD_STREAM).
inline constexpr std::uint32_t kStreamTakeover = 0x01;      // end by handing the vBucket over
inline constexpr std::uint32_t kStreamDiskOnly = 0x02;      // only what is on disk now
inline constexpr std::uint32_t kStreamToLatest = 0x04;      // end at the current high seqno
inline constexpr std::uint32_t kStreamActiveOnly = 0x10;    // refuse unless the vBucket is active
inline constexpr std::uint32_t kStreamStrictVbUuid = 0x20;  // check the uuid even from seqno 0
inline constexpr std::uint32_t kStreamFromLatest = 0x40;    // start at the high seqno
inline constexpr std::uint32_t kStreamIgnorePurgedTombstones = 0x80;

struct AddStream {
    std::uint16_t vbucket = 0;
    std::uint32_t opaque = 0;
    std::uint32_t flags = 0;  // passed on to the stream request
    friend bool operator==(const AddStream&, const AddStream&) = default;
};

void encodeAddStream(std::string& out, const AddStream& message);
Decoded<AddStream> decodeAddStream(const Request& request);

// The consumer's answer to ADD_STREAM: on success, the opaque its stream's
// messages will carry.
struct AddStreamResponse {
    std::uint32_t opaque = 0;
    Status status = Status::Success;
    std::uint32_t streamOpaque = 0;  // Success only
    friend bool operator==(const AddStreamResponse&, const AddStreamResponse&) = default;
};

void encodeAddStreamResponse(std::string& out, const AddStreamResponse& message);
Decoded<AddStreamResponse> decodeAddStreamResponse(const Response& response);

struct CloseStream {
    std::uint16_t vbucket = 0;
    std::uint32_t opaque = 0;
    friend bool operator==(const CloseStream&, const CloseStream&) = default;
};

void encodeCloseStream(std::string& out, const CloseStream& message);
Decoded<CloseStream> decodeCloseStream(const Request& request);

// Where the consumer asks to resume: it has everything up to `start`,
// which lies in the snapshot [snapStart, snapEnd] of branch `vbucketUuid`
// (0 with start 0: from the beginning). The stream ends after the snapshot
// holding `end` (~0: never).
struct StreamRequest {
    std::uint16_t vbucket = 0;
    std::uint32_t opaque = 0;  // every message of the stream carries it
    std::uint32_t flags = 0;
    std::uint64_t start = 0;
    std::uint64_t end = 0;
    std::uint64_t vbucketUuid = 0;
    std::uint64_t snapStart = 0;
    std::uint64_t snapEnd = 0;
    // The value: empty, or a JSON object (collection filter, stream id,
    // manifest uid...) that is the producer's to read.
    std::string_view json{};
    friend bool operator==(const StreamRequest&, const StreamRequest&) = default;
};

void encodeStreamRequest(std::string& out, const StreamRequest& message);
// Refuses unknown flags (and no-value 0x08, which moved to DCP_OPEN) as
// InvalidArguments, and with OutOfRange (as Couchbase) a start above the
// end or outside [snapStart, snapEnd] (unless the flags say the producer
// picks the start or end).
Decoded<StreamRequest> decodeStreamRequest(const Request& request);

struct StreamRequestResponse {
    std::uint32_t opaque = 0;
    Status status = Status::Success;
    std::vector<FailoverEntry> failoverLog{};  // Success: the producer's log, newest first
    std::uint64_t rollbackSeqno = 0;           // Rollback: roll back to this and ask again
    friend bool operator==(const StreamRequestResponse&, const StreamRequestResponse&) = default;
};

// Other statuses than Success and Rollback go without a body.
void encodeStreamRequestResponse(std::string& out, const StreamRequestResponse& message);
// Refuses a success without a (non-empty, whole-entry) failover log and a
// rollback without its 8-byte seqno; other statuses' bodies are ignored.
Decoded<StreamRequestResponse> decodeStreamRequestResponse(const Response& response);

struct GetFailoverLog {
    std::uint16_t vbucket = 0;
    std::uint32_t opaque = 0;
    friend bool operator==(const GetFailoverLog&, const GetFailoverLog&) = default;
};

void encodeGetFailoverLog(std::string& out, const GetFailoverLog& message);
Decoded<GetFailoverLog> decodeGetFailoverLog(const Request& request);

struct FailoverLogResponse {
    std::uint32_t opaque = 0;
    Status status = Status::Success;
    std::vector<FailoverEntry> failoverLog{};  // Success only, newest first
    friend bool operator==(const FailoverLogResponse&, const FailoverLogResponse&) = default;
};

void encodeFailoverLogResponse(std::string& out, const FailoverLogResponse& message);
Decoded<FailoverLogResponse> decodeFailoverLogResponse(const Response& response);

struct StreamEnd {
    std::uint16_t vbucket = 0;
    std::uint32_t opaque = 0;
    StreamEndReason reason = StreamEndReason::Ok;
    friend bool operator==(const StreamEnd&, const StreamEnd&) = default;
};

void encodeStreamEnd(std::string& out, const StreamEnd& message);
Decoded<StreamEnd> decodeStreamEnd(const Request& request);

// A replication chain: the active node's name, then its replicas'; ""
// stands for a slot the cluster has no node for (JSON null on the wire).
using Chain = std::vector<std::string>;

// At most two chains (the second: the topology after a rebalance), of at
// most four nodes (Couchbase's three replicas).
inline constexpr std::size_t kMaxTopologyChains = 2;
inline constexpr std::size_t kMaxChainLength = 4;

struct SetVbucketState {
    std::uint16_t vbucket = 0;
    std::uint32_t opaque = 0;
    VbucketState state = VbucketState::Active;
    // Travels as the JSON value {"topology":[[...], ...]}; absent: no value.
    // Owned strings (decoded from JSON).
    std::optional<std::vector<Chain>> topology{};
    friend bool operator==(const SetVbucketState&, const SetVbucketState&) = default;
};

// Throws (nlohmann::json::type_error) on node names that are not UTF-8.
void encodeSetVbucketState(std::string& out, const SetVbucketState& message);
// Refuses a state byte outside 1..4, and a value that is not a JSON object
// (with the JSON datatype) whose "topology", if present, is 1 or 2 chains
// of 1..4 nodes each: non-empty names or null, the active not null. Other
// keys of the object are ignored (they steer Couchbase's rebalance).
Decoded<SetVbucketState> decodeSetVbucketState(const Request& request);

}  // namespace kvexec::protocol::dcp
