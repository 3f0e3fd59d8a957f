#include "protocol/dcp_streams.h"

#include <nlohmann/json.hpp>

#include "protocol/binary_response.h"
#include "protocol/dcp_wire.h"

namespace kvexec::protocol::dcp {
namespace {

using wire::Part;

constexpr std::uint32_t kStreamNoValue = 0x08;  // moved to DCP_OPEN in Couchbase 5.0
constexpr std::uint32_t kKnownStreamFlags = kStreamTakeover | kStreamDiskOnly | kStreamToLatest |
                                            kStreamActiveOnly | kStreamStrictVbUuid |
                                            kStreamFromLatest | kStreamIgnorePurgedTombstones;

std::optional<std::string> streamFlagsProblem(Opcode opcode, std::uint32_t flags) {
    if ((flags & kStreamNoValue) != 0) {
        return wire::joined({opcodeName(opcode), ": the no-value flag belongs to DCP_OPEN"});
    }
    if ((flags & ~kKnownStreamFlags) != 0) {
        return wire::joined(
            {opcodeName(opcode), ": unknown flags ", std::to_string(flags & ~kKnownStreamFlags)});
    }
    return std::nullopt;
}

// Why the seqnos of a stream request cannot describe a resumption point;
// empty if they can. ToLatest lets the producer pick the end, FromLatest
// the start (and with it the snapshot).
std::optional<std::string> streamRangeProblem(const StreamRequest& m) {
    const bool producerPicksStart = (m.flags & kStreamFromLatest) != 0;
    const bool producerPicksEnd = (m.flags & kStreamToLatest) != 0;
    if (!producerPicksStart && !producerPicksEnd && m.start > m.end) {
        return std::string("DCP_STREAM_REQ: start seqno above the end seqno");
    }
    if (!producerPicksStart && (m.snapStart > m.start || m.start > m.snapEnd)) {
        return std::string("DCP_STREAM_REQ: start seqno outside [snapshot start, snapshot end]");
    }
    return std::nullopt;
}

// What every DCP response must look like: the expected opcode, no key, and
// extras only where the message has them.
std::optional<std::string> responseProblem(const Response& r, Opcode opcode, std::size_t extras) {
    if (r.opcode != opcode) {
        return wire::joined({"not a ", opcodeName(opcode), " response"});
    }
    if (r.extras.size() != extras || !r.key.empty()) {
        return wire::joined({opcodeName(opcode), " response: unexpected extras or key"});
    }
    return std::nullopt;
}

void appendStatusResponse(std::string& out, Opcode opcode, std::uint32_t opaque, Status status,
                          std::string_view extras = {}, std::string_view value = {}) {
    appendResponse(out, {opcode, status, opaque, 0, 0}, extras, {}, value);
}

// The topology's JSON: chains of names, null for an empty slot.
std::string topologyJson(const std::vector<Chain>& chains) {
    nlohmann::json json = nlohmann::json::array();
    for (const Chain& chain : chains) {
        nlohmann::json nodes = nlohmann::json::array();
        for (const std::string& node : chain) {
            nodes.push_back(node.empty() ? nlohmann::json(nullptr) : nlohmann::json(node));
        }
        json.push_back(std::move(nodes));
    }
    return nlohmann::json{{"topology", std::move(json)}}.dump();
}

std::optional<Chain> parseChain(const nlohmann::json& json) {
    if (!json.is_array() || json.empty() || json.size() > kMaxChainLength ||
        !json.front().is_string()) {
        return std::nullopt;
    }
    Chain chain;
    for (const auto& node : json) {
        if (node.is_null()) {
            chain.emplace_back();
        } else if (node.is_string() && !node.get_ref<const std::string&>().empty()) {
            chain.push_back(node.get<std::string>());
        } else {
            return std::nullopt;
        }
    }
    return chain;
}

std::optional<std::vector<Chain>> parseTopology(const nlohmann::json& json) {
    if (!json.is_array() || json.empty() || json.size() > kMaxTopologyChains) {
        return std::nullopt;
    }
    std::vector<Chain> chains;
    for (const auto& item : json) {
        auto chain = parseChain(item);
        if (!chain) {
            return std::nullopt;
        }
        chains.push_back(std::move(*chain));
    }
    return chains;
}

// SET_VBUCKET_STATE's value: nothing, or an object with maybe a topology.
Decoded<std::optional<std::vector<Chain>>> decodeStateValue(const Request& r) {
    using Result = Decoded<std::optional<std::vector<Chain>>>;
    if (r.value.empty()) {
        return Result::ok(std::nullopt);
    }
    if (r.datatype != kDatatypeJson) {
        return Result::refuse("DCP_SET_VBUCKET_STATE: a value must have the JSON datatype");
    }
    const auto json = nlohmann::json::parse(r.value, nullptr, /*allow_exceptions=*/false);
    if (!json.is_object()) {
        return Result::refuse("DCP_SET_VBUCKET_STATE: the value must be a JSON object");
    }
    const auto topology = json.find("topology");
    if (topology == json.end()) {
        return Result::ok(std::nullopt);
    }
    auto chains = parseTopology(*topology);
    if (!chains) {
        return Result::refuse(
            "DCP_SET_VBUCKET_STATE: topology must be 1 or 2 chains of 1 to 4 node names or "
            "nulls, the active named");
    }
    return Result::ok(std::move(chains));
}

}  // namespace

void encodeAddStream(std::string& out, const AddStream& m) {
    wire::Fields extras;
    extras.be32(m.flags);
    appendRequest(out, {Opcode::DcpAddStream, m.vbucket, m.opaque, 0, 0}, {}, extras.view());
}

Decoded<AddStream> decodeAddStream(const Request& r) {
    if (auto why = wire::checkShape(r, {.opcode = Opcode::DcpAddStream, .extras = 4})) {
        return Decoded<AddStream>::refuse(std::move(*why));
    }
    const std::uint32_t flags = readBe32(r.extras, 0);
    if (auto why = streamFlagsProblem(r.opcode, flags)) {
        return Decoded<AddStream>::refuse(std::move(*why));
    }
    return Decoded<AddStream>::ok({r.vbucket, r.opaque, flags});
}

void encodeAddStreamResponse(std::string& out, const AddStreamResponse& m) {
    wire::Fields extras;
    if (m.status == Status::Success) {
        extras.be32(m.streamOpaque);
    }
    appendStatusResponse(out, Opcode::DcpAddStream, m.opaque, m.status, extras.view());
}

Decoded<AddStreamResponse> decodeAddStreamResponse(const Response& r) {
    const bool success = r.status == Status::Success;
    if (auto why = responseProblem(r, Opcode::DcpAddStream, success ? 4 : 0)) {
        return Decoded<AddStreamResponse>::refuse(std::move(*why));
    }
    return Decoded<AddStreamResponse>::ok(
        {r.opaque, r.status, success ? readBe32(r.extras, 0) : 0});
}

void encodeCloseStream(std::string& out, const CloseStream& m) {
    appendRequest(out, {Opcode::DcpCloseStream, m.vbucket, m.opaque, 0, 0});
}

Decoded<CloseStream> decodeCloseStream(const Request& r) {
    if (auto why = wire::checkShape(r, {.opcode = Opcode::DcpCloseStream})) {
        return Decoded<CloseStream>::refuse(std::move(*why));
    }
    return Decoded<CloseStream>::ok({r.vbucket, r.opaque});
}

void encodeStreamRequest(std::string& out, const StreamRequest& m) {
    wire::Fields extras;
    extras.be32(m.flags).be32(0);  // reserved
    extras.be64(m.start).be64(m.end).be64(m.vbucketUuid).be64(m.snapStart).be64(m.snapEnd);
    appendRequest(out, {Opcode::DcpStreamReq, m.vbucket, m.opaque, 0, 0}, {}, extras.view(), {},
                  m.json);
}

Decoded<StreamRequest> decodeStreamRequest(const Request& r) {
    const wire::Shape shape{.opcode = Opcode::DcpStreamReq, .extras = 48, .value = Part::Optional};
    if (auto why = wire::checkShape(r, shape)) {
        return Decoded<StreamRequest>::refuse(std::move(*why));
    }
    const std::string_view x = r.extras;
    const StreamRequest m{.vbucket = r.vbucket,
                          .opaque = r.opaque,
                          .flags = readBe32(x, 0),  // 4-7 reserved
                          .start = readBe64(x, 8),
                          .end = readBe64(x, 16),
                          .vbucketUuid = readBe64(x, 24),
                          .snapStart = readBe64(x, 32),
                          .snapEnd = readBe64(x, 40),
                          .json = r.value};
    if (auto why = streamFlagsProblem(r.opcode, m.flags)) {
        return Decoded<StreamRequest>::refuse(std::move(*why));
    }
    if (auto why = streamRangeProblem(m)) {
        return Decoded<StreamRequest>::refuse(std::move(*why), Status::OutOfRange);
    }
    return Decoded<StreamRequest>::ok(m);
}

void encodeStreamRequestResponse(std::string& out, const StreamRequestResponse& m) {
    std::string value;
    if (m.status == Status::Success) {
        wire::appendFailoverLog(value, m.failoverLog);
    } else if (m.status == Status::Rollback) {
        appendBe64(value, m.rollbackSeqno);
    }
    appendStatusResponse(out, Opcode::DcpStreamReq, m.opaque, m.status, {}, value);
}

Decoded<StreamRequestResponse> decodeStreamRequestResponse(const Response& r) {
    using Result = Decoded<StreamRequestResponse>;
    if (auto why = responseProblem(r, Opcode::DcpStreamReq, 0)) {
        return Result::refuse(std::move(*why));
    }
    StreamRequestResponse m{r.opaque, r.status, {}, 0};
    if (r.status == Status::Success) {
        auto log = wire::parseFailoverLog(r.value);
        if (!log) {
            return Result::refuse(
                "DCP_STREAM_REQ response: the failover log must be whole 16-byte entries with "
                "non-zero uuids");
        }
        m.failoverLog = std::move(*log);
    } else if (r.status == Status::Rollback) {
        if (r.value.size() != 8) {
            return Result::refuse("DCP_STREAM_REQ response: a rollback carries an 8-byte seqno");
        }
        m.rollbackSeqno = readBe64(r.value, 0);
    }
    return Result::ok(std::move(m));
}

void encodeGetFailoverLog(std::string& out, const GetFailoverLog& m) {
    appendRequest(out, {Opcode::DcpGetFailoverLog, m.vbucket, m.opaque, 0, 0});
}

Decoded<GetFailoverLog> decodeGetFailoverLog(const Request& r) {
    if (auto why = wire::checkShape(r, {.opcode = Opcode::DcpGetFailoverLog})) {
        return Decoded<GetFailoverLog>::refuse(std::move(*why));
    }
    return Decoded<GetFailoverLog>::ok({r.vbucket, r.opaque});
}

void encodeFailoverLogResponse(std::string& out, const FailoverLogResponse& m) {
    std::string value;
    if (m.status == Status::Success) {
        wire::appendFailoverLog(value, m.failoverLog);
    }
    appendStatusResponse(out, Opcode::DcpGetFailoverLog, m.opaque, m.status, {}, value);
}

Decoded<FailoverLogResponse> decodeFailoverLogResponse(const Response& r) {
    using Result = Decoded<FailoverLogResponse>;
    if (auto why = responseProblem(r, Opcode::DcpGetFailoverLog, 0)) {
        return Result::refuse(std::move(*why));
    }
    FailoverLogResponse m{r.opaque, r.status, {}};
    if (r.status == Status::Success) {
        auto log = wire::parseFailoverLog(r.value);
        if (!log) {
            return Result::refuse(
                "DCP_GET_FAILOVER_LOG response: the log must be whole 16-byte entries with "
                "non-zero uuids");
        }
        m.failoverLog = std::move(*log);
    }
    return Result::ok(std::move(m));
}

void encodeStreamEnd(std::string& out, const StreamEnd& m) {
    wire::Fields extras;
    extras.be32(static_cast<std::uint32_t>(m.reason));
    appendRequest(out, {Opcode::DcpStreamEnd, m.vbucket, m.opaque, 0, 0}, {}, extras.view());
}

Decoded<StreamEnd> decodeStreamEnd(const Request& r) {
    if (auto why = wire::checkShape(r, {.opcode = Opcode::DcpStreamEnd, .extras = 4})) {
        return Decoded<StreamEnd>::refuse(std::move(*why));
    }
    const std::uint32_t reason = readBe32(r.extras, 0);
    if (reason > static_cast<std::uint32_t>(StreamEndReason::LostPrivileges)) {
        return Decoded<StreamEnd>::refuse(
            wire::joined({"DCP_STREAM_END: unknown reason ", std::to_string(reason)}));
    }
    return Decoded<StreamEnd>::ok({r.vbucket, r.opaque, static_cast<StreamEndReason>(reason)});
}

void encodeSetVbucketState(std::string& out, const SetVbucketState& m) {
    wire::Fields extras;
    extras.u8(static_cast<std::uint8_t>(m.state));
    const std::string value = m.topology ? topologyJson(*m.topology) : std::string();
    const std::uint8_t datatype = value.empty() ? 0 : kDatatypeJson;
    appendRequest(out, {Opcode::DcpSetVbucketState, m.vbucket, m.opaque, 0, datatype}, {},
                  extras.view(), {}, value);
}

Decoded<SetVbucketState> decodeSetVbucketState(const Request& r) {
    const wire::Shape shape{.opcode = Opcode::DcpSetVbucketState,
                            .extras = 1,
                            .value = Part::Optional,
                            .datatypes = kDatatypeJson};
    if (auto why = wire::checkShape(r, shape)) {
        return Decoded<SetVbucketState>::refuse(std::move(*why));
    }
    const auto state = static_cast<std::uint8_t>(r.extras[0]);
    if (state < static_cast<std::uint8_t>(VbucketState::Active) ||
        state > static_cast<std::uint8_t>(VbucketState::Dead)) {
        return Decoded<SetVbucketState>::refuse(
            wire::joined({"DCP_SET_VBUCKET_STATE: unknown state ", std::to_string(state)}));
    }
    auto topology = decodeStateValue(r);
    if (!topology) {
        return Decoded<SetVbucketState>::refuse(std::move(topology.error.reason));
    }
    return Decoded<SetVbucketState>::ok(
        {r.vbucket, r.opaque, static_cast<VbucketState>(state), std::move(*topology.message)});
}

}  // namespace kvexec::protocol::dcp
