#include "cluster/etcd_http.h"

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <sys/time.h>

namespace kvexec::cluster {
namespace {

// One POST in flight: what its callbacks learn, read after the loop ends.
struct Exchange {
    event_base* base = nullptr;
    bool answered = false;
    int failure = -1;  // an evhttp_request_error, when there was one
    HttpReply reply;
};

void onReply(evhttp_request* request, void* arg) {
    auto& exchange = *static_cast<Exchange*>(arg);
    // A request that failed arrives as null or with code 0; its error
    // callback has already said why.
    if (request != nullptr && evhttp_request_get_response_code(request) != 0) {
        exchange.answered = true;
        exchange.reply.status = evhttp_request_get_response_code(request);
        evbuffer* input = evhttp_request_get_input_buffer(request);
        exchange.reply.body.resize(evbuffer_get_length(input));
        evbuffer_copyout(input, exchange.reply.body.data(), exchange.reply.body.size());
    }
    event_base_loopexit(exchange.base, nullptr);
}

void onFailure(evhttp_request_error error, void* arg) {
    static_cast<Exchange*>(arg)->failure = error;
}

[[noreturn]] void failed(const EtcdEndpoint& endpoint, std::string_view path,
                         std::string_view why) {
    std::string message = "etcd ";
    message += endpoint.url();
    message += path;
    message += ": ";
    message += why;
    throw EtcdError(message);
}

}  // namespace

std::string httpFailureName(int error) {
    switch (error) {
        case EVREQ_HTTP_TIMEOUT:
            return "timed out";
        case EVREQ_HTTP_EOF:
            return "connection closed or refused";
        case EVREQ_HTTP_INVALID_HEADER:
            return "invalid HTTP header";
        case EVREQ_HTTP_BUFFER_ERROR:
            return "connection error";
        case EVREQ_HTTP_REQUEST_CANCEL:
            return "cancelled";
        case EVREQ_HTTP_DATA_TOO_LONG:
            return "reply too long";
        default:
            return "no reply";
    }
}

void prepareEtcdRequest(evhttp_request* request, const EtcdEndpoint& endpoint,
                        const std::string& body) {
    evkeyvalq* headers = evhttp_request_get_output_headers(request);
    std::string host = endpoint.host.find(':') != std::string::npos ? "[" : "";
    host += endpoint.host;
    host += host.front() == '[' ? "]:" : ":";
    host += std::to_string(endpoint.port);
    evhttp_add_header(headers, "Host", host.c_str());
    evhttp_add_header(headers, "Content-Type", "application/json");
    evbuffer_add(evhttp_request_get_output_buffer(request), body.data(), body.size());
}

EtcdHttp::EtcdHttp(EtcdEndpoint endpoint, std::chrono::milliseconds timeout)
    : connector_(std::move(endpoint)) {
    base_ = event_base_new();
    if (base_ == nullptr) {
        throw EtcdError("etcd client: event_base_new failed");
    }
    const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(timeout).count();
    const timeval tv{static_cast<time_t>(micros / 1'000'000),
                     static_cast<suseconds_t>(micros % 1'000'000)};
    connection_ = connector_.connect(base_, tv);
    if (connection_ == nullptr) {
        event_base_free(base_);
        throw EtcdError("etcd client: cannot make a connection");
    }
}

EtcdHttp::~EtcdHttp() {
    evhttp_connection_free(connection_);
    event_base_free(base_);
}

HttpReply EtcdHttp::post(std::string_view path, const std::string& body) {
    const EtcdEndpoint& endpoint = connector_.endpoint();
    Exchange exchange;
    exchange.base = base_;
    // The connection owns the request from here and frees it after onReply.
    evhttp_request* request = evhttp_request_new(onReply, &exchange);
    if (request == nullptr) {
        failed(endpoint, path, "evhttp_request_new failed");
    }
    evhttp_request_set_error_cb(request, onFailure);
    prepareEtcdRequest(request, endpoint, body);
    const std::string uri(path);
    if (evhttp_make_request(connection_, request, EVHTTP_REQ_POST, uri.c_str()) != 0) {
        failed(endpoint, path, "evhttp_make_request failed");
    }
    event_base_dispatch(base_);
    if (!exchange.answered) {
        failed(endpoint, path, connector_.failure(connection_, exchange.failure));
    }
    return std::move(exchange.reply);
}

}  // namespace kvexec::cluster
