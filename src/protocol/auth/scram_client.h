// protocol/auth/scram_client.h: the client side of SCRAM (RFC 5802, no channel
// binding) as memcached's SASL_AUTH / SASL_STEP carry it: kvexec-pillowfight
// logs in with it, and the server's tests check the server against it.
//
// scramProof() is a pure function. A ScramClient holds one login's state
// (nonce, messages so far) and belongs to one connection: use it from one
// thread at a time.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "protocol/auth/crypto.h"

namespace kvexec::protocol::auth {

struct ScramProof {
    std::string clientProof;      // base64
    std::string serverSignature;  // base64
};

// The client proof and the server signature the client expects, for a
// password, the server's salt and iteration count, and the auth message.
ScramProof scramProof(HashAlgorithm hash, std::string_view password, std::string_view salt,
                      int iterations, std::string_view authMessage);

// The hash of a mechanism name ("SCRAM-SHA512" ...), or nullopt.
std::optional<HashAlgorithm> scramHashOf(std::string_view mechanism);

class ScramClient {
  public:
    // `nonce` empty: 24 random bytes, base64.
    ScramClient(HashAlgorithm hash, std::string user, std::string password, std::string nonce = {});

    // SASL_AUTH's payload: "n,,n=<user>,r=<nonce>".
    std::string clientFirst() const;
    // SASL_STEP's payload from the server's challenge, or nullopt with
    // `error` set when the challenge is malformed or does not extend our
    // nonce.
    std::optional<std::string> clientFinal(std::string_view serverFirst, std::string& error);
    // Whether the server's final message ("v=<signature>") proves that it
    // knows the password too.
    bool verifyServerFinal(std::string_view serverFinal) const;

  private:
    HashAlgorithm hash_;
    std::string user_;
    std::string password_;
    std::string nonce_;
    std::string expectedSignature_;  // set by clientFinal()
};

}  // namespace kvexec::protocol::auth
