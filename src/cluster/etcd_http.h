// cluster/etcd_http.h: blocking HTTP POSTs to one etcd endpoint over
// libevent's HTTP client, for EtcdClient, plain or over TLS
// (etcd_connection.h). The connection is kept open between requests, and
// evhttp reconnects (with a new TLS handshake) when etcd closed it. The
// loop runs only inside post(), so a close while idle is seen by the next
// request, which then fails; the one after reconnects.
//
// Thread safety: none. One thread at a time (EtcdClient serializes its
// callers); the event base is only ever run inside post().
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "cluster/etcd_connection.h"
#include "cluster/etcd_types.h"

struct event_base;
struct evhttp_connection;
struct evhttp_request;

namespace kvexec::cluster {

struct HttpReply {
    int status = 0;
    std::string body;
};

class EtcdHttp {
  public:
    // `timeout` bounds each wait for etcd (connect, send, each read).
    // Throws EtcdError when the endpoint's CA file cannot be read.
    EtcdHttp(EtcdEndpoint endpoint, std::chrono::milliseconds timeout);
    ~EtcdHttp();
    EtcdHttp(const EtcdHttp&) = delete;
    EtcdHttp& operator=(const EtcdHttp&) = delete;

    // POSTs `body` (JSON) to `path` and returns etcd's whole reply, of any
    // status. Throws EtcdError naming the URL when no reply came: refused,
    // reset, or the timeout passed.
    HttpReply post(std::string_view path, const std::string& body);

    const EtcdEndpoint& endpoint() const { return connector_.endpoint(); }

  private:
    EtcdConnector connector_;
    event_base* base_ = nullptr;
    evhttp_connection* connection_ = nullptr;
};

// Sets the Host and Content-Type headers and the JSON body of a request to
// etcd; shared with the watch stream.
void prepareEtcdRequest(evhttp_request* request, const EtcdEndpoint& endpoint,
                        const std::string& body);

// libevent's name for why a request failed (timeout, EOF, ...).
std::string httpFailureName(int error);

}  // namespace kvexec::cluster
