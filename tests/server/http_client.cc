#include "server/http_client.h"

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/keyvalq_struct.h>

namespace kvexec::server::test {
namespace {

struct Exchange {
    event_base* base = nullptr;
    HttpReply reply;
};

std::string header(evhttp_request* answered, const char* name) {
    const char* value = evhttp_find_header(evhttp_request_get_input_headers(answered), name);
    return value != nullptr ? value : "";
}

void onReply(evhttp_request* answered, void* arg) {
    auto& exchange = *static_cast<Exchange*>(arg);
    if (answered != nullptr) {
        exchange.reply.status = evhttp_request_get_response_code(answered);
        evbuffer* input = evhttp_request_get_input_buffer(answered);
        exchange.reply.body.resize(evbuffer_get_length(input));
        evbuffer_copyout(input, exchange.reply.body.data(), exchange.reply.body.size());
        exchange.reply.contentType = header(answered, "Content-Type");
        exchange.reply.authenticate = header(answered, "WWW-Authenticate");
    }
    event_base_loopexit(exchange.base, nullptr);
}

}  // namespace

HttpReply httpRequest(std::uint16_t port, evhttp_cmd_type method, const std::string& uri,
                      const std::string& form, const std::string& authorization,
                      std::chrono::seconds deadline) {
    Exchange exchange;
    exchange.base = event_base_new();
    evhttp_connection* connection =
        evhttp_connection_base_new(exchange.base, nullptr, "127.0.0.1", port);
    evhttp_connection_set_timeout(connection, static_cast<int>(deadline.count()));
    evhttp_request* outgoing = evhttp_request_new(&onReply, &exchange);
    evkeyvalq* headers = evhttp_request_get_output_headers(outgoing);
    const std::string host = "127.0.0.1:" + std::to_string(port);
    evhttp_add_header(headers, "Host", host.c_str());
    if (!form.empty()) {
        evhttp_add_header(headers, "Content-Type", "application/x-www-form-urlencoded");
        evbuffer_add(evhttp_request_get_output_buffer(outgoing), form.data(), form.size());
    }
    if (!authorization.empty()) {
        evhttp_add_header(headers, "Authorization", authorization.c_str());
    }
    if (evhttp_make_request(connection, outgoing, method, uri.c_str()) == 0) {
        event_base_dispatch(exchange.base);
    }
    evhttp_connection_free(connection);
    event_base_free(exchange.base);
    return exchange.reply;
}

}  // namespace kvexec::server::test
