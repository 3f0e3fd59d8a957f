// users_file.h: who may authenticate to kvexec-server, and which buckets
// each may use. --user/--password gives one user every bucket; --users FILE
// gives more, each confined to the buckets it lists, as Couchbase's
// per-bucket roles confine its users:
//
//   {"users": [{"name": "app", "password": "secret", "buckets": ["travel"]},
//              {"name": "ops", "password": "pw"}]}        no "buckets": all
//
// Thread safety: functions of their arguments, called at start-up.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "protocol/auth/sasl_server.h"
#include "server/server_config.h"

namespace kvexec::server {

struct UserEntry {
    std::string name;
    std::string password;
    std::optional<std::vector<std::string>> buckets;  // nullopt: every bucket
};

// The users in `text` (the file's contents; `path` names it in errors).
// Throws std::invalid_argument saying which user and what is wrong: not
// JSON, a name or password missing or empty, a bucket that is no string.
std::vector<UserEntry> parseUsersFile(const std::string& text, const std::string& path);

// Every user `config` asks for into `users`: --user (every bucket), the
// --users file's (each bucket it names must be one of config.buckets), and
// the nodes' own user with --node-password. Throws std::invalid_argument
// on a file that cannot be read or checked, or a name given twice.
void addConfiguredUsers(const ServerConfig& config, protocol::auth::Users& users);

}  // namespace kvexec::server
