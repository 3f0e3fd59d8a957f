#include "protocol/auth/scram_client.h"

#include <charconv>

namespace kvexec::protocol::auth {
namespace {

// The value of attribute `name` ("r", "s", "i") of a SCRAM message.
std::optional<std::string_view> attribute(std::string_view message, char name) {
    std::size_t start = 0;
    while (start < message.size()) {
        std::size_t end = message.find(',', start);
        if (end == std::string_view::npos) {
            end = message.size();
        }
        const std::string_view field = message.substr(start, end - start);
        if (field.size() >= 2 && field[0] == name && field[1] == '=') {
            return field.substr(2);
        }
        start = end + 1;
    }
    return std::nullopt;
}

// RFC 5802 section 5.1: ',' and '=' in a user name are escaped.
std::string saslName(std::string_view user) {
    std::string out;
    for (const char c : user) {
        if (c == ',') {
            out += "=2C";
        } else if (c == '=') {
            out += "=3D";
        } else {
            out += c;
        }
    }
    return out;
}

}  // namespace

ScramProof scramProof(HashAlgorithm hash, std::string_view password, std::string_view salt,
                      int iterations, std::string_view authMessage) {
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

std::optional<HashAlgorithm> scramHashOf(std::string_view mechanism) {
    if (mechanism == "SCRAM-SHA1") {
        return HashAlgorithm::Sha1;
    }
    if (mechanism == "SCRAM-SHA256") {
        return HashAlgorithm::Sha256;
    }
    if (mechanism == "SCRAM-SHA512") {
        return HashAlgorithm::Sha512;
    }
    return std::nullopt;
}

ScramClient::ScramClient(HashAlgorithm hash, std::string user, std::string password,
                         std::string nonce)
    : hash_(hash),
      user_(std::move(user)),
      password_(std::move(password)),
      nonce_(nonce.empty() ? base64Encode(randomBytes(24)) : std::move(nonce)) {}

std::string ScramClient::clientFirst() const {
    return "n,,n=" + saslName(user_) + ",r=" + nonce_;
}

std::optional<std::string> ScramClient::clientFinal(std::string_view serverFirst,
                                                    std::string& error) {
    const auto nonce = attribute(serverFirst, 'r');
    const auto salt64 = attribute(serverFirst, 's');
    const auto iterationsText = attribute(serverFirst, 'i');
    if (!nonce || !salt64 || !iterationsText) {
        error = "SCRAM challenge without r=, s= or i=";
        return std::nullopt;
    }
    if (nonce->substr(0, nonce_.size()) != nonce_ || nonce->size() <= nonce_.size()) {
        error = "SCRAM challenge does not extend the client's nonce";
        return std::nullopt;
    }
    const auto salt = base64Decode(*salt64);
    int iterations = 0;
    const auto [end, ec] = std::from_chars(
        iterationsText->data(), iterationsText->data() + iterationsText->size(), iterations);
    if (!salt || ec != std::errc() || end != iterationsText->data() + iterationsText->size() ||
        iterations <= 0) {
        error = "SCRAM challenge with a bad salt or iteration count";
        return std::nullopt;
    }
    const std::string withoutProof = "c=biws,r=" + std::string(*nonce);
    const std::string authMessage =
        clientFirst().substr(3) + "," + std::string(serverFirst) + "," + withoutProof;
    ScramProof proof = scramProof(hash_, password_, *salt, iterations, authMessage);
    expectedSignature_ = std::move(proof.serverSignature);
    return withoutProof + ",p=" + proof.clientProof;
}

bool ScramClient::verifyServerFinal(std::string_view serverFinal) const {
    const auto signature = attribute(serverFinal, 'v');
    return signature && !expectedSignature_.empty() &&
           constantTimeEqual(*signature, expectedSignature_);
}

}  // namespace kvexec::protocol::auth
