#include "server/tls_context.h"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <stdexcept>

namespace kvexec::server {

TlsContext::TlsContext(const std::string& certificateChainFile, const std::string& privateKeyFile)
    : context_(tls::newTlsContext(TLS_server_method())) {
    try {
        if (SSL_CTX_use_certificate_chain_file(context_, certificateChainFile.c_str()) != 1) {
            tls::throwOpenSslError("--tls-cert " + certificateChainFile);
        }
        // Also checks that the key is the certificate's ("key values mismatch").
        if (SSL_CTX_use_PrivateKey_file(context_, privateKeyFile.c_str(), SSL_FILETYPE_PEM) != 1) {
            tls::throwOpenSslError("--tls-key " + privateKeyFile);
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
