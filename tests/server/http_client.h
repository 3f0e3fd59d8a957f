// http_client.h: one HTTP request to a kvexec-server's management endpoint
// (--mgmt-port), the way the tests speak to it: libevent's HTTP client on
// an event base of its own, on the calling thread, over a fresh loopback
// connection.
//
// Thread safety: any thread; calls share nothing.
#pragma once

#include <event2/http.h>

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace kvexec::server::test {

struct HttpReply {
    int status = 0;  // 0: no reply before the deadline
    std::string body;
    std::string contentType;
    std::string authenticate;  // WWW-Authenticate

    nlohmann::json parsed() const { return nlohmann::json::parse(body); }
};

// `form` goes as application/x-www-form-urlencoded; an empty
// `authorization` sends no Authorization header.
HttpReply httpRequest(std::uint16_t port, evhttp_cmd_type method, const std::string& uri,
                      const std::string& form = "", const std::string& authorization = "",
                      std::chrono::seconds deadline = std::chrono::seconds(20));

}  // namespace kvexec::server::test
