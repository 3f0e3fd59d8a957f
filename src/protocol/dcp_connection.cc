#include "protocol/dcp_connection.h"

#include <nlohmann/json.hpp>

#include "protocol/binary_response.h"
#include "protocol/client_codec.h"
#include "protocol/dcp_wire.h"

namespace kvexec::protocol::dcp {
namespace {

using wire::Part;

constexpr std::uint32_t kKnownOpenFlags =
    kOpenProducer | kOpenIncludeXattrs | kOpenNoValue | kOpenIncludeDeleteTimes |
    kOpenNoValueWithUnderlyingDatatype | kOpenIncludeDeletedUserXattrs |
    kOpenSkipDeletesInInitialBackfill;

bool has(std::uint32_t flags, std::uint32_t flag) {
    return (flags & flag) != 0;
}

// Why DCP_OPEN's flags cannot go together; empty if they can.
std::optional<std::string> openFlagsProblem(std::uint32_t flags) {
    if ((flags & ~kKnownOpenFlags) != 0) {
        return wire::joined({"DCP_OPEN: unknown flags ", std::to_string(flags & ~kKnownOpenFlags)});
    }
    if (has(flags, kOpenNoValue) && has(flags, kOpenNoValueWithUnderlyingDatatype)) {
        return "DCP_OPEN: no-value and no-value-with-underlying-datatype exclude each other";
    }
    if (has(flags, kOpenIncludeDeletedUserXattrs) && !has(flags, kOpenIncludeXattrs)) {
        return "DCP_OPEN: deleted user xattrs need include-xattrs";
    }
    if (has(flags, kOpenSkipDeletesInInitialBackfill) && !has(flags, kOpenProducer)) {
        return "DCP_OPEN: skipping deletes in the initial backfill is a producer's flag";
    }
    return std::nullopt;
}

// Why DCP_OPEN's value is not {"consumer_name": "..."} (or empty) on a
// consumer; empty if it is.
std::optional<std::string> openValueProblem(std::string_view value, std::uint8_t datatype,
                                            std::uint32_t flags) {
    if (value.empty()) {
        if (datatype != 0) {
            return std::string("DCP_OPEN: an empty value has raw datatype");
        }
        return std::nullopt;
    }
    if (datatype != kDatatypeJson) {
        return std::string("DCP_OPEN: a value must have the JSON datatype");
    }
    const auto json = nlohmann::json::parse(value, nullptr, /*allow_exceptions=*/false);
    if (!json.is_object()) {
        return std::string("DCP_OPEN: the value must be a JSON object");
    }
    for (const auto& [key, item] : json.items()) {
        if (key != "consumer_name") {
            return wire::joined({"DCP_OPEN: unsupported value key ", key});
        }
        if (!item.is_string() || has(flags, kOpenProducer)) {
            return std::string("DCP_OPEN: consumer_name is a string, on consumers only");
        }
    }
    return std::nullopt;
}

}  // namespace

void encodeOpen(std::string& out, const Open& m) {
    // The first four bytes once carried a seqno; they are reserved now.
    wire::Fields extras;
    extras.be32(0).be32(m.flags);
    const std::uint8_t datatype = m.json.empty() ? 0 : kDatatypeJson;
    appendRequest(out, {Opcode::DcpOpen, 0, m.opaque, 0, datatype}, {}, extras.view(), m.name,
                  m.json);
}

Decoded<Open> decodeOpen(const Request& r) {
    const wire::Shape shape{.opcode = Opcode::DcpOpen,
                            .extras = 8,
                            .key = Part::Required,
                            .value = Part::Optional,
                            .maxKey = kMaxConnectionNameLength,
                            .datatypes = kDatatypeJson};
    if (auto why = wire::checkShape(r, shape)) {
        return Decoded<Open>::refuse(std::move(*why));
    }
    const std::uint32_t flags = readBe32(r.extras, 4);
    if (auto why = openFlagsProblem(flags)) {
        return Decoded<Open>::refuse(std::move(*why));
    }
    if (auto why = openValueProblem(r.value, r.datatype, flags)) {
        return Decoded<Open>::refuse(std::move(*why));
    }
    return Decoded<Open>::ok({r.opaque, flags, r.key, r.value});
}

void encodeControl(std::string& out, const Control& m) {
    appendRequest(out, {Opcode::DcpControl, 0, m.opaque, 0, 0}, {}, {}, m.key, m.value);
}

Decoded<Control> decodeControl(const Request& r) {
    const wire::Shape shape{
        .opcode = Opcode::DcpControl, .key = Part::Required, .value = Part::Required};
    if (auto why = wire::checkShape(r, shape)) {
        return Decoded<Control>::refuse(std::move(*why));
    }
    return Decoded<Control>::ok({r.opaque, r.key, r.value});
}

void encodeNoop(std::string& out, const Noop& m) {
    appendRequest(out, {Opcode::DcpNoop, 0, m.opaque, 0, 0});
}

Decoded<Noop> decodeNoop(const Request& r) {
    if (auto why = wire::checkShape(r, {.opcode = Opcode::DcpNoop})) {
        return Decoded<Noop>::refuse(std::move(*why));
    }
    return Decoded<Noop>::ok({r.opaque});
}

void encodeBufferAcknowledgement(std::string& out, const BufferAcknowledgement& m) {
    wire::Fields extras;
    extras.be32(m.bytes);
    appendRequest(out, {Opcode::DcpBufferAcknowledgement, 0, m.opaque, 0, 0}, {}, extras.view());
}

Decoded<BufferAcknowledgement> decodeBufferAcknowledgement(const Request& r) {
    if (auto why = wire::checkShape(r, {.opcode = Opcode::DcpBufferAcknowledgement, .extras = 4})) {
        return Decoded<BufferAcknowledgement>::refuse(std::move(*why));
    }
    return Decoded<BufferAcknowledgement>::ok({r.opaque, readBe32(r.extras, 0)});
}

}  // namespace kvexec::protocol::dcp
