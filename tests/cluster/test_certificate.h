// test_certificate.h: self-signed certificates for the TLS tests (the
// server's, replication's, etcd's), made with the openssl command
// (tools/install-deps installs it). Library kvexec_test_certificate.
//
// Thread safety: none needed; each test makes its own files.
#pragma once

#include <string>

namespace kvexec::test {

// A self-signed certificate issued to `subjectAltName` (e.g.
// "IP:127.0.0.1"), valid for a day: DIR/NAME.pem, its key DIR/NAME.key.
// Being self-signed, it is also the CA a node may trust. False if the
// openssl command failed.
bool makeCertificate(const std::string& dir, const std::string& name,
                     const std::string& subjectAltName);

}  // namespace kvexec::test
