// cluster/etcd_connection.h: the libevent HTTP connections the etcd client
// (etcd_http.h) and its watches (etcd_watch.h) talk to etcd over: plain for
// http://, TLS for https://, where etcd's certificate must be issued to the
// endpoint's host and signed by its CA file (tls/tls_client.h).
//
// Thread safety: built once; connect() and failure() may then be called
// from any thread, each connection used on its own event base's thread.
#pragma once

#include <sys/time.h>

#include <memory>
#include <string>

#include "cluster/etcd_types.h"

struct event_base;
struct evhttp_connection;

namespace kvexec::tls {
class TlsClientContext;
}

namespace kvexec::cluster {

class EtcdConnector {
  public:
    // Throws EtcdError when the endpoint's CA file cannot be read.
    explicit EtcdConnector(EtcdEndpoint endpoint);
    ~EtcdConnector();
    EtcdConnector(const EtcdConnector&) = delete;
    EtcdConnector& operator=(const EtcdConnector&) = delete;

    // A new connection on `base` whose every wait (connect, send, each
    // read) is bounded by `timeout`; the caller frees it
    // (evhttp_connection_free). Null if libevent or OpenSSL cannot make one.
    evhttp_connection* connect(event_base* base, const timeval& timeout) const;
    // Why a request on `connection` failed with libevent's `error`: over
    // TLS, the handshake's reason when there is one ("certificate refused:
    // ..."), else libevent's.
    std::string failure(evhttp_connection* connection, int error) const;

    const EtcdEndpoint& endpoint() const { return endpoint_; }

  private:
    EtcdEndpoint endpoint_;
    std::unique_ptr<tls::TlsClientContext> tls_;  // null for http://
};

}  // namespace kvexec::cluster
