#include "protocol/auth/sasl_server.h"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <vector>

namespace kvexec::protocol::auth {
namespace {

std::size_t indexOf(HashAlgorithm hash) {
    return static_cast<std::size_t>(hash);
}

std::optional<HashAlgorithm> scramHash(std::string_view mechanism) {
    if (mechanism == "SCRAM-SHA512") {
        return HashAlgorithm::Sha512;
    }
    if (mechanism == "SCRAM-SHA256") {
        return HashAlgorithm::Sha256;
    }
    if (mechanism == "SCRAM-SHA1") {
        return HashAlgorithm::Sha1;
    }
    return std::nullopt;
}

SaslReply failure(std::string why) {
    return {SaslOutcome::Failure, {}, std::move(why)};
}

SaslReply success(std::string payload, const Users::User& user) {
    return {SaslOutcome::Success, std::move(payload), {}, &user};
}

std::vector<std::string_view> split(std::string_view s, char sep) {
    std::vector<std::string_view> parts;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= s.size(); ++i) {
        if (i == s.size() || s[i] == sep) {
            parts.push_back(s.substr(start, i - start));
            start = i + 1;
        }
    }
    return parts;
}

// The value of attribute `name` ("n=", "r=", ...) among `parts`.
std::optional<std::string_view> attribute(const std::vector<std::string_view>& parts, char name) {
    for (auto part : parts) {
        if (part.size() >= 2 && part[0] == name && part[1] == '=') {
            return part.substr(2);
        }
    }
    return std::nullopt;
}

// SCRAM escapes ',' and '=' in user names as "=2C" and "=3D".
std::optional<std::string> unescapeUser(std::string_view name) {
    std::string out;
    for (std::size_t i = 0; i < name.size(); ++i) {
        if (name[i] != '=') {
            out.push_back(name[i]);
            continue;
        }
        const auto code = name.substr(i + 1, 2);
        if (code == "2C") {
            out.push_back(',');
        } else if (code == "3D") {
            out.push_back('=');
        } else {
            return std::nullopt;
        }
        i += 2;
    }
    return out;
}

std::string xorBytes(std::string_view a, std::string_view b) {
    std::string out(a);
    for (std::size_t i = 0; i < out.size() && i < b.size(); ++i) {
        out[i] = static_cast<char>(out[i] ^ b[i]);
    }
    return out;
}

}  // namespace

Credentials::Credentials(std::string user, std::string password, int iterations)
    : user_(std::move(user)),
      passwordDigest_(digest(HashAlgorithm::Sha512, password)),
      iterations_(iterations) {
    for (auto hash : {HashAlgorithm::Sha1, HashAlgorithm::Sha256, HashAlgorithm::Sha512}) {
        ScramKeys& keys = scram_[indexOf(hash)];
        keys.salt = randomBytes(16);
        const std::string salted = pbkdf2(hash, password, keys.salt, iterations_);
        keys.storedKey = digest(hash, hmac(hash, salted, "Client Key"));
        keys.serverKey = hmac(hash, salted, "Server Key");
    }
}

const Credentials::ScramKeys& Credentials::scram(HashAlgorithm hash) const {
    return scram_[indexOf(hash)];
}

bool Credentials::checkPassword(std::string_view password) const {
    return constantTimeEqual(digest(HashAlgorithm::Sha512, password), passwordDigest_);
}

bool Users::User::mayAccess(std::string_view bucket) const {
    return !buckets || std::find(buckets->begin(), buckets->end(), bucket) != buckets->end();
}

void Users::add(Credentials credentials, Role role,
                std::optional<std::vector<std::string>> buckets) {
    if (find(credentials.user())) {
        throw std::invalid_argument("user " + credentials.user() + " is given twice");
    }
    users_.push_back({std::move(credentials), role, std::move(buckets)});
}

const Users::User* Users::find(std::string_view name) const {
    for (const User& user : users_) {
        if (user.credentials.user() == name) {
            return &user;
        }
    }
    return nullptr;
}

SaslReply SaslSession::start(std::string_view mechanism, std::string_view payload) {
    scramPending_ = false;
    if (mechanism == "PLAIN") {
        return plain(payload);
    }
    if (auto hash = scramHash(mechanism)) {
        mechanism_ = std::string(mechanism);
        return scramFirst(*hash, payload);
    }
    return failure("unsupported mechanism " + std::string(mechanism));
}

SaslReply SaslSession::step(std::string_view mechanism, std::string_view payload) {
    if (!scramPending_ || mechanism != mechanism_) {
        return failure("SASL_STEP without a SCRAM exchange in progress");
    }
    scramPending_ = false;
    return scramFinal(payload);
}

// PLAIN: [authzid] NUL authcid NUL password.
SaslReply SaslSession::plain(std::string_view payload) {
    const auto parts = split(payload, '\0');
    if (parts.size() != 3) {
        return failure("malformed PLAIN message");
    }
    const Users::User* user = users_.find(parts[1]);
    if (!user || !user->credentials.checkPassword(parts[2])) {
        return failure("PLAIN: wrong user or password");
    }
    return success({}, *user);
}

SaslReply SaslSession::scramFirst(HashAlgorithm hash, std::string_view payload) {
    // client-first = gs2-header client-first-bare, gs2-header = "n,," or "y,,".
    if (payload.size() < 3 || (payload.substr(0, 3) != "n,," && payload.substr(0, 3) != "y,,")) {
        return failure("SCRAM: channel binding and authzid are not supported");
    }
    clientFirstBare_ = std::string(payload.substr(3));
    const auto parts = split(clientFirstBare_, ',');
    const auto name = attribute(parts, 'n');
    const auto clientNonce = attribute(parts, 'r');
    const auto user = name ? unescapeUser(*name) : std::nullopt;
    if (!user || !clientNonce || clientNonce->empty()) {
        return failure("SCRAM: malformed client-first message");
    }
    scramUser_ = users_.find(*user);
    if (!scramUser_) {
        return failure("SCRAM: unknown user");
    }
    const Credentials& credentials = scramUser_->credentials;
    hash_ = hash;
    nonce_ = std::string(*clientNonce) + base64Encode(randomBytes(18));
    const auto& keys = credentials.scram(hash);
    serverFirst_ = "r=" + nonce_ + ",s=" + base64Encode(keys.salt) +
                   ",i=" + std::to_string(credentials.iterations());
    scramPending_ = true;
    return {SaslOutcome::Continue, serverFirst_, {}};
}

SaslReply SaslSession::scramFinal(std::string_view payload) {
    // client-final = "c=" base64(gs2-header) ",r=" nonce ",p=" proof
    const std::size_t proofAt = payload.rfind(",p=");
    if (proofAt == std::string_view::npos) {
        return failure("SCRAM: client-final without proof");
    }
    const std::string_view withoutProof = payload.substr(0, proofAt);
    const auto parts = split(withoutProof, ',');
    const auto channel = attribute(parts, 'c');
    const auto nonce = attribute(parts, 'r');
    const auto proof = base64Decode(payload.substr(proofAt + 3));
    if (!channel || (*channel != "biws" && *channel != "eSws") || !nonce || *nonce != nonce_ ||
        !proof) {
        return failure("SCRAM: malformed client-final message or wrong nonce");
    }
    const auto& keys = scramUser_->credentials.scram(hash_);
    const std::string authMessage =
        clientFirstBare_ + "," + serverFirst_ + "," + std::string(withoutProof);
    const std::string clientSignature = hmac(hash_, keys.storedKey, authMessage);
    const std::string clientKey = xorBytes(*proof, clientSignature);
    if (proof->size() != clientSignature.size() ||
        !constantTimeEqual(digest(hash_, clientKey), keys.storedKey)) {
        return failure("SCRAM: wrong password");
    }
    const std::string serverSignature = hmac(hash_, keys.serverKey, authMessage);
    return success("v=" + base64Encode(serverSignature), *scramUser_);
}

}  // namespace kvexec::protocol::auth
