#include "server/users_file.h"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

namespace kvexec::server {
namespace {

using nlohmann::json;

[[noreturn]] void refuse(const std::string& path, const std::string& why) {
    throw std::invalid_argument("--users " + path + ": " + why);
}

std::string nonEmptyString(const json& entry, const char* field, const std::string& path,
                           const std::string& which) {
    const auto found = entry.find(field);
    if (found == entry.end() || !found->is_string() || found->get<std::string>().empty()) {
        refuse(path, which + ": \"" + field + "\" must be a non-empty string");
    }
    return found->get<std::string>();
}

UserEntry parseUser(const json& entry, std::size_t index, const std::string& path) {
    const std::string which = "user " + std::to_string(index + 1);
    if (!entry.is_object()) {
        refuse(path, which + " is not an object");
    }
    UserEntry user;
    user.name = nonEmptyString(entry, "name", path, which);
    user.password = nonEmptyString(entry, "password", path, user.name);
    if (const auto buckets = entry.find("buckets"); buckets != entry.end()) {
        if (!buckets->is_array()) {
            refuse(path, user.name + ": \"buckets\" must be a list of bucket names");
        }
        user.buckets.emplace();
        for (const auto& bucket : *buckets) {
            if (!bucket.is_string()) {
                refuse(path, user.name + ": \"buckets\" must be a list of bucket names");
            }
            user.buckets->push_back(bucket.get<std::string>());
        }
    }
    return user;
}

std::string readFile(const std::string& path) {
    std::ifstream in(path);
    if (!in) {
        refuse(path, "cannot be read");
    }
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

}  // namespace

std::vector<UserEntry> parseUsersFile(const std::string& text, const std::string& path) {
    const json document = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (document.is_discarded()) {
        refuse(path, "not JSON");
    }
    const auto list = document.is_object() ? document.find("users") : document.end();
    if (list == document.end() || !list->is_array()) {
        refuse(path, "expected {\"users\": [...]}");
    }
    std::vector<UserEntry> users;
    for (std::size_t i = 0; i < list->size(); ++i) {
        users.push_back(parseUser((*list)[i], i, path));
    }
    return users;
}

void addConfiguredUsers(const ServerConfig& config, protocol::auth::Users& users) {
    using protocol::auth::Role;
    if (config.user) {
        users.add({*config.user, *config.password}, Role::Client);
    }
    if (!config.usersFile.empty()) {
        for (auto& user : parseUsersFile(readFile(config.usersFile), config.usersFile)) {
            if (user.name == kNodeUser) {
                refuse(config.usersFile, user.name + " is the nodes' own user name");
            }
            for (const auto& bucket : user.buckets.value_or(std::vector<std::string>{})) {
                if (std::find(config.buckets.begin(), config.buckets.end(), bucket) ==
                    config.buckets.end()) {
                    refuse(config.usersFile,
                           user.name + ": no bucket named " + bucket + " is served (--bucket)");
                }
            }
            users.add({user.name, user.password}, Role::Client, std::move(user.buckets));
        }
    }
    if (config.nodePassword) {
        users.add({std::string(kNodeUser), *config.nodePassword}, Role::Node);
    }
}

}  // namespace kvexec::server
