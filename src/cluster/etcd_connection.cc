#include "cluster/etcd_connection.h"

#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/http.h>
#include <openssl/ssl.h>

#include <stdexcept>
#include <vector>

#include "cluster/etcd_http.h"
#include "tls/tls_client.h"

namespace kvexec::cluster {

EtcdConnector::EtcdConnector(EtcdEndpoint endpoint) : endpoint_(std::move(endpoint)) {
    if (!endpoint_.tls) {
        return;
    }
    try {
        tls_ = std::make_unique<tls::TlsClientContext>(endpoint_.caFile, "etcd CA file");
    } catch (const std::runtime_error& error) {
        throw EtcdError(error.what());
    }
}

EtcdConnector::~EtcdConnector() = default;

evhttp_connection* EtcdConnector::connect(event_base* base, const timeval& timeout) const {
    evhttp_connection* connection = nullptr;
    if (tls_ == nullptr) {
        connection =
            evhttp_connection_base_new(base, nullptr, endpoint_.host.c_str(), endpoint_.port);
    } else {
        SSL* session = tls_->newSession(endpoint_.host);
        if (session == nullptr) {
            return nullptr;
        }
        // With BEV_OPT_CLOSE_ON_FREE the bufferevent owns the session from
        // here, even when it cannot be made (libevent frees it then).
        bufferevent* bev = bufferevent_openssl_socket_new(
            base, -1, session, BUFFEREVENT_SSL_CONNECTING, BEV_OPT_CLOSE_ON_FREE);
        if (bev == nullptr) {
            return nullptr;
        }
        // etcd (Go) may close a connection without TLS's close_notify.
        bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
        connection = evhttp_connection_base_bufferevent_new(base, nullptr, bev,
                                                            endpoint_.host.c_str(), endpoint_.port);
        if (connection == nullptr) {
            bufferevent_free(bev);
        }
    }
    if (connection != nullptr) {
        evhttp_connection_set_timeout_tv(connection, &timeout);
    }
    return connection;
}

std::string EtcdConnector::failure(evhttp_connection* connection, int error) const {
    if (tls_ != nullptr && connection != nullptr) {
        bufferevent* bev = evhttp_connection_get_bufferevent(connection);
        std::vector<unsigned long> errors;
        while (const unsigned long code = bufferevent_get_openssl_error(bev)) {
            errors.push_back(code);
        }
        if (std::string why = tls::tlsFailure(bufferevent_openssl_get_ssl(bev), errors);
            !why.empty()) {
            return "TLS: " + why;
        }
    }
    return httpFailureName(error);
}

}  // namespace kvexec::cluster
