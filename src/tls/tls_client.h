// tls/tls_client.h: the client side of TLS, for connections kvexec opens:
// a node's replication streams to its peers (--cluster-tls-ca) and the etcd
// client (https:// with --etcd-ca). A session accepts only a certificate
// that the CA file signed (or, without one, a CA the system trusts),
// issued to the host dialed. OpenSSL's libssl does the protocol;
// libevent's bufferevent_openssl drives it on the connection's loop.
//
// TLS 1.2 and later, as Couchbase Server's and etcd's default minimum.
//
// Thread safety: a context is built once; newSession() may then be called
// from any thread (SSL_new on a shared SSL_CTX is safe in OpenSSL 3,
// Debian bookworm's). A session belongs to the one connection that asked
// for it.
#pragma once

#include <openssl/ssl.h>

#include <string>
#include <string_view>
#include <vector>

namespace kvexec::tls {

class TlsClientContext {
  public:
    // Trusts the CA certificates in `caFile` (PEM, one or more), or the
    // system's (OpenSSL's default paths) when it is empty. Throws
    // std::runtime_error naming `option` and the file, with OpenSSL's
    // reason, when it holds no certificate that can be read.
    explicit TlsClientContext(const std::string& caFile,
                              std::string_view option = "--cluster-tls-ca");
    ~TlsClientContext();
    TlsClientContext(const TlsClientContext&) = delete;
    TlsClientContext& operator=(const TlsClientContext&) = delete;

    // A new client-side session that accepts only a certificate issued to
    // `host`: an IP address in its subjectAltName, or a DNS name (then
    // also sent as SNI). The caller owns it. Null if OpenSSL cannot make
    // one.
    SSL* newSession(const std::string& host) const;

  private:
    SSL_CTX* context_ = nullptr;
};

// Why a client session failed, in words: the certificate check's reason
// when the peer's certificate was refused, else the text of `errors`
// (OpenSSL error codes, as bufferevent_get_openssl_error gives them);
// empty when neither says anything.
std::string tlsFailure(const SSL* session, const std::vector<unsigned long>& errors);

// OpenSSL's queued errors of this thread as one line (the queue is
// emptied); "unknown error" when none is queued.
std::string openSslErrors();

// Throws std::runtime_error: `what`, then openSslErrors().
[[noreturn]] void throwOpenSslError(const std::string& what);

// A new context of `method` (TLS_client_method(), TLS_server_method())
// that refuses anything older than TLS 1.2; the caller frees it
// (SSL_CTX_free). Throws std::runtime_error when OpenSSL cannot make one.
SSL_CTX* newTlsContext(const SSL_METHOD* method);

}  // namespace kvexec::tls
