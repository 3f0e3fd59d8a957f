// bound_port.h: the port a listening socket was bound to (what --port 0 and
// --mgmt-port 0 print in their ready lines).
//
// A pure function of the socket. Safe from any thread.
#pragma once

#include <event2/util.h>

#include <cstdint>

namespace kvexec::server {

// The local port of `fd` (IPv4 or IPv6); 0 if it cannot be read.
std::uint16_t boundPort(evutil_socket_t fd);

}  // namespace kvexec::server
