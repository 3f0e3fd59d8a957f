// tls_context.h: the server's TLS settings (--tls-cert, --tls-key), from
// which each connection accepted on the TLS port (--tls-port) gets its
// own TLS session; and a node's settings towards its peers
// (--cluster-tls-ca), from which each replication connection it opens
// gets a client session that checks the peer's certificate. OpenSSL's
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
#include <vector>

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

// The client side: peers must present a certificate that the CA file
// (PEM, one or more certificates) signed, issued to the address the
// node dials (an IP address in its subjectAltName; a DNS name is checked
// and sent as SNI, though the replication client dials IP addresses only).
class TlsClientContext {
  public:
    // Throws std::runtime_error naming the file and OpenSSL's reason when
    // it holds no certificate that can be read.
    explicit TlsClientContext(const std::string& caFile);
    ~TlsClientContext();
    TlsClientContext(const TlsClientContext&) = delete;
    TlsClientContext& operator=(const TlsClientContext&) = delete;

    // A new client-side session that accepts only a certificate issued to
    // `host` (an IP address or a DNS name; SNI carries a name). The
    // caller owns it. Null if OpenSSL cannot make one.
    SSL* newSession(const std::string& host) const;

  private:
    SSL_CTX* context_ = nullptr;
};

// Why a client session failed, in words: the certificate check's reason
// when the peer's certificate was refused, else the text of `errors`
// (OpenSSL error codes, as bufferevent_get_openssl_error gives them);
// empty when neither says anything.
std::string tlsFailure(const SSL* session, const std::vector<unsigned long>& errors);

}  // namespace kvexec::server
