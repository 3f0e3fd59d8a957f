// protocol/dcp_wire.h: what the DCP codecs (dcp_*.cc) share underneath:
// the shape check every decoder starts with (opcode, extras length, key,
// value, datatype), fixed-width fields built without allocating, and the
// failover log's wire form. Internal to the codecs; callers use dcp.h.
//
// Pure functions and a stack-only builder. Safe from any thread.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/binary_request.h"
#include "protocol/binary_types.h"
#include "protocol/dcp_types.h"

namespace kvexec::protocol::dcp::wire {

// Fixed-width fields, big-endian like every header field: an extras
// section, or a v2 snapshot marker's value. At most kCapacity bytes (the
// v2.2 marker's value is the longest).
class Fields {
  public:
    static constexpr std::size_t kCapacity = 52;

    Fields& u8(std::uint8_t v);
    Fields& be16(std::uint16_t v);
    Fields& be32(std::uint32_t v);
    Fields& be64(std::uint64_t v);
    std::string_view view() const { return {bytes_.data(), size_}; }

  private:
    void put(std::uint64_t v, std::size_t width);

    std::array<char, kCapacity> bytes_{};
    std::size_t size_ = 0;
};

enum class Part { Forbidden, Required, Optional };

// What a message's packet must look like.
struct Shape {
    Opcode opcode = Opcode::Noop;
    std::size_t extras = 0;
    Part key = Part::Forbidden;
    Part value = Part::Forbidden;
    std::size_t maxKey = kMaxBinaryKeyLength;
    std::uint8_t datatypes = 0;  // the datatype bits allowed; 0: raw bytes only
    bool casMustBeZero = false;
};

// The datatype bits a document's value may carry.
inline constexpr std::uint8_t kDocumentDatatypes = kDatatypeJson | kDatatypeSnappy | kDatatypeXattr;

// The parts one after the other (reasons are built by appending: GCC 12
// warns falsely on "literal" + std::string).
std::string joined(std::initializer_list<std::string_view> parts);

// Empty when `request` has `shape`; else why it has not (the packet is
// well framed, so this is the reason an InvalidArguments answer gives).
std::optional<std::string> checkShape(const Request& request, const Shape& shape);

// Appends `entries` as a failover log value: (uuid, seqno) pairs, 16 bytes
// each, in the order given (newest first).
void appendFailoverLog(std::string& out, const std::vector<FailoverEntry>& entries);
// Reads a failover log value; empty when it is not a non-empty sequence of
// whole entries with non-zero uuids.
std::optional<std::vector<FailoverEntry>> parseFailoverLog(std::string_view value);

}  // namespace kvexec::protocol::dcp::wire
