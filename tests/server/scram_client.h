// scram_client.h: the client side of SCRAM for the tests (the server is
// checked against it, and it is checked against the RFCs' examples).
#pragma once

#include <string>
#include <string_view>

#include "server/auth/crypto.h"

namespace kvexec::server::test {

struct ScramProof {
    std::string clientProof;      // base64
    std::string serverSignature;  // base64
};

inline ScramProof scramProof(auth::HashAlgorithm hash, std::string_view password,
                             std::string_view salt, int iterations, std::string_view authMessage) {
    using namespace auth;
    const std::string salted = pbkdf2(hash, password, salt, iterations);
    const std::string clientKey = hmac(hash, salted, "Client Key");
    const std::string signature = hmac(hash, digest(hash, clientKey), authMessage);
    std::string proof = clientKey;
    for (std::size_t i = 0; i < proof.size(); ++i) {
        proof[i] = static_cast<char>(proof[i] ^ signature[i]);
    }
    const std::string serverKey = hmac(hash, salted, "Server Key");
    return {base64Encode(proof), base64Encode(hmac(hash, serverKey, authMessage))};
}

}  // namespace kvexec::server::test
