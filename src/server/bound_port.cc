#include "server/bound_port.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstring>

namespace kvexec::server {

std::uint16_t boundPort(evutil_socket_t fd) {
    sockaddr_storage address{};
    socklen_t length = sizeof address;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
        return 0;
    }
    if (address.ss_family == AF_INET6) {
        return ntohs(reinterpret_cast<sockaddr_in6*>(&address)->sin6_port);
    }
    return ntohs(reinterpret_cast<sockaddr_in*>(&address)->sin_port);
}

std::runtime_error cannotListen(const char* option, const std::string& host, std::uint16_t port) {
    std::string why = option;
    why += ": cannot listen on ";
    why += host;
    why += ":";
    why += std::to_string(port);
    why += ": ";
    why += evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR());
    return std::runtime_error(why);
}

}  // namespace kvexec::server
