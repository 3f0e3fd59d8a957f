// bound_port.h: the port a listening socket was bound to (what --port 0 and
// --mgmt-port 0 print in their ready lines), and the error when a port
// could not be bound.
//
// Pure functions of the socket (and of errno). Safe from any thread.
#pragma once

#include <event2/util.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace kvexec::server {

// The local port of `fd` (IPv4 or IPv6); 0 if it cannot be read.
std::uint16_t boundPort(evutil_socket_t fd);

// "OPTION: cannot listen on HOST:PORT: " and the last socket error, to
// throw right after the bind failed.
std::runtime_error cannotListen(const char* option, const std::string& host, std::uint16_t port);

}  // namespace kvexec::server
