// protocol/framing.h: splits a connection's received bytes into requests:
// which protocol the request at the front speaks (memcached tells them
// apart by its first byte) and how many bytes the parser must see, so that
// a connection neither parses a request before it is complete nor buffers
// without bound before refusing it.
//
// Pure functions over caller-owned bytes. Safe from any thread.
#pragma once

#include <cstddef>
#include <string_view>

#include "protocol/binary_request.h"
#include "protocol/text_request.h"

namespace kvexec::protocol {

enum class Wire { Binary, Text };

// Text requests start with a printable character or white space; anything
// else is a binary request (whose magic the parser then checks), so that
// binary garbage is refused at once instead of waiting for a line end.
Wire wireOf(char first);

struct FramingLimits {
    RequestLimits binary;
    TextLimits text;
};

// How many bytes at the front of the buffer the framer needs to look at
// (`head` below): enough for a binary header or the longest text line.
std::size_t probeLength(Wire wire, const FramingLimits& limits);

// `head` is the first min(buffered, probeLength()) bytes. Returns how many
// bytes the parser needs contiguous to decide on the request at the front:
// when that is more than is buffered, wait for more input; otherwise parse
// exactly that many bytes, and the parser does not answer Incomplete.
// Requests refused from their header (a body over the limit, a line too
// long) need no more than `head`, so they are never buffered.
std::size_t requestExtent(Wire wire, std::string_view head, const FramingLimits& limits);

// The same for a packet in response layout that the connection takes from
// its peer (a DCP consumer's 0x81, a duplex client's 0x83), framed by its
// header alone: the header, then the header and its body; one whose body
// is over `limits.maxBodyLength` needs no more than `head`.
std::size_t responseExtent(std::string_view head, const RequestLimits& limits);

}  // namespace kvexec::protocol
