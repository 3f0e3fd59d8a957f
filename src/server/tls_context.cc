#include "server/tls_context.h"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <stdexcept>

namespace kvexec::server {
namespace {

[[noreturn]] void fail(const std::string& what) {
    throw std::runtime_error(what + ": " + tls::openSslErrors());
}

}  // namespace

TlsContext::TlsContext(const std::string& certificateChainFile, const std::string& privateKeyFile)
    : context_(SSL_CTX_new(TLS_server_method())) {
    if (context_ == nullptr) {
        fail("TLS: cannot create a context");
    }
    try {
        if (SSL_CTX_set_min_proto_version(context_, TLS1_2_VERSION) != 1) {
            fail("TLS: cannot require TLS 1.2");
        }
        if (SSL_CTX_use_certificate_chain_file(context_, certificateChainFile.c_str()) != 1) {
            fail("--tls-cert " + certificateChainFile);
        }
        // Also checks that the key is the certificate's ("key values mismatch").
        if (SSL_CTX_use_PrivateKey_file(context_, privateKeyFile.c_str(), SSL_FILETYPE_PEM) != 1) {
            fail("--tls-key " + privateKeyFile);
        }
    } catch (...) {
        SSL_CTX_free(context_);
        throw;
    }
}

TlsContext::~TlsContext() {
    SSL_CTX_free(context_);
}

SSL* TlsContext::newSession() const {
    return SSL_new(context_);
}

}  // namespace kvexec::server
