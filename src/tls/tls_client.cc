#include "tls/tls_client.h"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <stdexcept>

namespace kvexec::tls {
namespace {

// OpenSSL error codes as one line.
std::string errorText(const std::vector<unsigned long>& codes) {
    std::string text;
    for (const unsigned long code : codes) {
        char line[256];
        ERR_error_string_n(code, line, sizeof line);
        if (!text.empty()) {
            text += "; ";
        }
        text += line;
    }
    return text;
}

bool isIpAddress(const std::string& host) {
    unsigned char address[sizeof(in6_addr)];
    return inet_pton(AF_INET, host.c_str(), address) == 1 ||
           inet_pton(AF_INET6, host.c_str(), address) == 1;
}

// The certificate must name `host`: as an IP address in its
// subjectAltName, or as a DNS name (then also sent as SNI).
bool expectPeer(SSL* session, const std::string& host) {
    if (isIpAddress(host)) {
        return X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(session), host.c_str()) == 1;
    }
    return SSL_set1_host(session, host.c_str()) == 1 &&
           SSL_set_tlsext_host_name(session, host.c_str()) == 1;
}

}  // namespace

std::string openSslErrors() {
    std::vector<unsigned long> codes;
    while (const unsigned long code = ERR_get_error()) {
        codes.push_back(code);
    }
    return codes.empty() ? std::string("unknown error") : errorText(codes);
}

void throwOpenSslError(const std::string& what) {
    throw std::runtime_error(what + ": " + openSslErrors());
}

SSL_CTX* newTlsContext(const SSL_METHOD* method) {
    SSL_CTX* context = SSL_CTX_new(method);
    if (context == nullptr) {
        throwOpenSslError("TLS: cannot create a context");
    }
    if (SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION) != 1) {
        SSL_CTX_free(context);
        throwOpenSslError("TLS: cannot require TLS 1.2");
    }
    return context;
}

TlsClientContext::TlsClientContext(const std::string& caFile, std::string_view option)
    : context_(newTlsContext(TLS_client_method())) {
    try {
        if (caFile.empty()) {
            if (SSL_CTX_set_default_verify_paths(context_) != 1) {
                throwOpenSslError(std::string(option) + ": the system's CA certificates");
            }
        } else if (SSL_CTX_load_verify_locations(context_, caFile.c_str(), nullptr) != 1) {
            throwOpenSslError(std::string(option) + " " + caFile);
        }
        SSL_CTX_set_verify(context_, SSL_VERIFY_PEER, nullptr);
    } catch (...) {
        SSL_CTX_free(context_);
        throw;
    }
}

TlsClientContext::~TlsClientContext() {
    SSL_CTX_free(context_);
}

SSL* TlsClientContext::newSession(const std::string& host) const {
    SSL* session = SSL_new(context_);
    if (session != nullptr && !expectPeer(session, host)) {
        SSL_free(session);
        return nullptr;
    }
    return session;
}

std::string tlsFailure(const SSL* session, const std::vector<unsigned long>& errors) {
    const long verified = session != nullptr ? SSL_get_verify_result(session) : X509_V_OK;
    if (verified != X509_V_OK) {
        return std::string("certificate refused: ") + X509_verify_cert_error_string(verified);
    }
    return errorText(errors);
}

}  // namespace kvexec::tls
