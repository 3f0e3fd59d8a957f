// connection_info.h: what "stats conns" reports about one connection, in
// memcached's terms: its descriptor, both addresses, its state and the
// seconds since its last command.
//
// Plain values: a front end's loop thread builds them from its own
// connections and hands them to the thread that asked.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kvexec::server {

struct ConnectionInfo {
    int fd = -1;
    std::string peer;   // "tcp:<address>:<port>"
    std::string local;  // the same, the server's end
    // memcached's state names: conn_waiting (idle), conn_read (part of a
    // request buffered), conn_parse_cmd (a command executing), conn_mwrite
    // (reading paused until responses drain), conn_closing.
    std::string state;
    std::int64_t secondsSinceLastCommand = 0;
};

using ConnectionList = std::vector<ConnectionInfo>;

}  // namespace kvexec::server
