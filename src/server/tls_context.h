// tls_context.h: the server's TLS settings (--tls-cert, --tls-key), from
// which each connection accepted on the TLS port (--tls-port) gets its
// own TLS session (a node's towards its peers, --cluster-tls-ca, are
// tls/tls_client.h's TlsClientContext). OpenSSL's
// libssl does the protocol; libevent's bufferevent_openssl drives it on
// the connection's loop.
//
// TLS 1.2 and later, as Couchbase Server's default minimum; the
// certificate file may hold a chain (leaf first), as memcached's
// ssl_chain_cert.
//
// Thread safety: built once, before the front ends start; newSession()
// may then be called from any thread (SSL_new on a shared SSL_CTX is safe
// in OpenSSL 3, Debian bookworm's). A session belongs to the one connection
// that asked for it.
#pragma once

#include <openssl/types.h>

#include <string>

#include "tls/tls_client.h"

namespace kvexec::server {

class TlsContext {
  public:
    // Loads the certificate chain and its private key (PEM). Throws
    // std::runtime_error naming the file and OpenSSL's reason when one
    // cannot be read or the key does not match the certificate.
    TlsContext(const std::string& certificateChainFile, const std::string& privateKeyFile);
    ~TlsContext();
    TlsContext(const TlsContext&) = delete;
    TlsContext& operator=(const TlsContext&) = delete;

    // A new server-side session; the caller owns it (SSL_free, or hands
    // it to a bufferevent that frees it). Null if OpenSSL is out of memory.
    SSL* newSession() const;

  private:
    SSL_CTX* context_ = nullptr;
};

// The client side (towards the peers, --cluster-tls-ca) is tls/'s.
using tls::TlsClientContext;
using tls::tlsFailure;

}  // namespace kvexec::server
