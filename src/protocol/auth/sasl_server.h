// protocol/auth/sasl_server.h: the server side of SASL for one connection: PLAIN
// and SCRAM-SHA1 / SHA256 / SHA512 (RFC 5802, no channel binding), the way
// memcached's SASL_AUTH / SASL_STEP carry them.
//
// Credentials and Users are built once at start-up (Credentials runs
// PBKDF2 per mechanism so that a login costs HMACs only) and are then
// read-only: share them across threads. A SaslSession belongs to one
// connection and is used from that connection's event loop only.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/auth/crypto.h"

namespace kvexec::protocol::auth {

// One user the server knows, with SCRAM's stored and server keys per hash
// (only a digest of the password is kept, for PLAIN).
class Credentials {
  public:
    Credentials(std::string user, std::string password, int iterations = 4096);

    struct ScramKeys {
        std::string salt;
        std::string storedKey;
        std::string serverKey;
    };

    const std::string& user() const { return user_; }
    int iterations() const { return iterations_; }
    const ScramKeys& scram(HashAlgorithm hash) const;
    bool checkPassword(std::string_view password) const;

  private:
    std::string user_;
    std::string passwordDigest_;  // SHA-512 of the password
    int iterations_;
    std::array<ScramKeys, 3> scram_;
};

// What an authenticated user may do. A client reads and writes documents;
// a node (another member of the cluster) may also open DCP, which streams
// every document of the bucket.
enum class Role { Client, Node };

// The users a server knows, each with its role and the buckets it may use;
// names are unique.
class Users {
  public:
    struct User {
        Credentials credentials;
        Role role;
        // The buckets the user may select and use, by name; nullopt: every
        // bucket.
        std::optional<std::vector<std::string>> buckets;

        bool mayAccess(std::string_view bucket) const;
    };

    // Throws std::invalid_argument when the name is taken.
    void add(Credentials credentials, Role role,
             std::optional<std::vector<std::string>> buckets = std::nullopt);
    // The user with that name; nullptr when there is none.
    const User* find(std::string_view name) const;
    // No users: the server asks for no authentication.
    bool empty() const { return users_.empty(); }

  private:
    std::vector<User> users_;
};

// What SASL_LIST_MECHS answers, strongest first.
inline constexpr std::string_view kSaslMechanisms = "SCRAM-SHA512 SCRAM-SHA256 SCRAM-SHA1 PLAIN";

enum class SaslOutcome { Success, Continue, Failure };

struct SaslReply {
    SaslOutcome outcome = SaslOutcome::Failure;
    std::string payload;  // challenge (Continue) or server-final (Success)
    std::string error;    // why, for Failure (logged, not sent)
    // Who logged in, with the role and buckets, on Success (Users outlives
    // every session).
    const Users::User* user = nullptr;
};

class SaslSession {
  public:
    explicit SaslSession(const Users& users) : users_(users) {}

    // SASL_AUTH: the mechanism and the client's first message.
    SaslReply start(std::string_view mechanism, std::string_view payload);
    // SASL_STEP: the client's next message (SCRAM's client-final).
    SaslReply step(std::string_view mechanism, std::string_view payload);

  private:
    SaslReply plain(std::string_view payload);
    SaslReply scramFirst(HashAlgorithm hash, std::string_view payload);
    SaslReply scramFinal(std::string_view payload);

    const Users& users_;
    // SCRAM state between the two steps.
    bool scramPending_ = false;
    const Users::User* scramUser_ = nullptr;
    HashAlgorithm hash_ = HashAlgorithm::Sha512;
    std::string mechanism_;
    std::string clientFirstBare_;
    std::string serverFirst_;
    std::string nonce_;
};

}  // namespace kvexec::protocol::auth
