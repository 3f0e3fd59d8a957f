// --users FILE (server/users_file.h): the users it lists and the buckets
// each may use; what is wrong with a file is said, naming the user.
#include "server/users_file.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace kvexec::server {
namespace {

using Buckets = std::vector<std::string>;

// The message parseUsersFile throws for `text`; "" if it takes it.
std::string refusal(const std::string& text) {
    try {
        parseUsersFile(text, "u.json");
    } catch (const std::invalid_argument& error) {
        return error.what();
    }
    return "";
}

TEST(UsersFileTest, EachUserHasItsBucketsOrAll) {
    const auto users = parseUsersFile(R"({"users": [
        {"name": "app", "password": "pw", "buckets": ["travel", "beer"]},
        {"name": "ops", "password": "pw2"},
        {"name": "none", "password": "pw3", "buckets": []}]})",
                                      "u.json");
    ASSERT_EQ(users.size(), 3u);
    EXPECT_EQ(users[0].name, "app");
    EXPECT_EQ(users[0].password, "pw");
    EXPECT_EQ(users[0].buckets, (Buckets{"travel", "beer"}));
    EXPECT_FALSE(users[1].buckets.has_value());
    EXPECT_EQ(users[2].buckets, Buckets{});
}

TEST(UsersFileTest, WhatIsWrongIsSaidWithTheUser) {
    EXPECT_EQ(refusal("{"), "--users u.json: not JSON");
    EXPECT_EQ(refusal("[]"), "--users u.json: expected {\"users\": [...]}");
    EXPECT_EQ(refusal(R"({"users": [1]})"), "--users u.json: user 1 is not an object");
    EXPECT_EQ(refusal(R"({"users": [{"password": "pw"}]})"),
              "--users u.json: user 1: \"name\" must be a non-empty string");
    EXPECT_EQ(refusal(R"({"users": [{"name": "a", "password": ""}]})"),
              "--users u.json: a: \"password\" must be a non-empty string");
    EXPECT_EQ(refusal(R"({"users": [{"name": "a", "password": "p", "buckets": "b"}]})"),
              "--users u.json: a: \"buckets\" must be a list of bucket names");
    EXPECT_EQ(refusal(R"({"users": [{"name": "a", "password": "p", "buckets": [7]}]})"),
              "--users u.json: a: \"buckets\" must be a list of bucket names");
}

class ConfiguredUsersTest : public ::testing::Test {
  protected:
    ConfiguredUsersTest() {
        path_ = (std::filesystem::temp_directory_path() /
                 ("kvexec-users-" + std::to_string(::getpid()) + ".json"))
                    .string();
    }
    ~ConfiguredUsersTest() override { std::filesystem::remove(path_); }

    ServerConfig withFile(const std::string& text) {
        std::ofstream(path_) << text;
        ServerConfig config;
        config.buckets = {"default", "travel"};
        config.usersFile = path_;
        return config;
    }

    std::string path_;
};

TEST_F(ConfiguredUsersTest, FileUsersAreConfinedAndTheCommandLinesUserIsNot) {
    ServerConfig config = withFile(R"({"users": [
        {"name": "app", "password": "pw", "buckets": ["travel"]}]})");
    config.user = "admin";
    config.password = "secret";
    config.nodePassword = "node-pw";
    protocol::auth::Users users;
    addConfiguredUsers(config, users);
    ASSERT_NE(users.find("app"), nullptr);
    EXPECT_TRUE(users.find("app")->mayAccess("travel"));
    EXPECT_FALSE(users.find("app")->mayAccess("default"));
    ASSERT_NE(users.find("admin"), nullptr);
    EXPECT_TRUE(users.find("admin")->mayAccess("default"));
    ASSERT_NE(users.find(kNodeUser), nullptr);
    EXPECT_EQ(users.find(kNodeUser)->role, protocol::auth::Role::Node);
    EXPECT_TRUE(users.find(kNodeUser)->mayAccess("travel"));
}

TEST_F(ConfiguredUsersTest, UnservedBucketsTheNodesNameAndTwiceGivenNamesAreRefused) {
    protocol::auth::Users users;
    EXPECT_THROW(
        addConfiguredUsers(
            withFile(R"({"users": [{"name": "a", "password": "p", "buckets": ["beer"]}]})"), users),
        std::invalid_argument);
    protocol::auth::Users none;
    EXPECT_THROW(addConfiguredUsers(
                     withFile(R"({"users": [{"name": "@kvexec-node", "password": "p"}]})"), none),
                 std::invalid_argument);
    ServerConfig twice = withFile(R"({"users": [{"name": "admin", "password": "p"}]})");
    twice.user = "admin";
    twice.password = "q";
    protocol::auth::Users again;
    EXPECT_THROW(addConfiguredUsers(twice, again), std::invalid_argument);
    ServerConfig missing;
    missing.usersFile = path_ + ".missing";
    protocol::auth::Users unread;
    EXPECT_THROW(addConfiguredUsers(missing, unread), std::invalid_argument);
}

TEST(UsersCommandLineTest, UsersGoWithANodePasswordOnACluster) {
    bool help = false;
    EXPECT_EQ(parseCommandLine({"--users", "u.json"}, help).usersFile, "u.json");
    EXPECT_THROW(
        parseCommandLine(
            {"--users", "u.json", "--cluster", "http://127.0.0.1:2379", "--node", "n0"}, help),
        std::invalid_argument);
    EXPECT_NO_THROW(parseCommandLine({"--users", "u.json", "--cluster", "http://127.0.0.1:2379",
                                      "--node", "n0", "--node-password", "np"},
                                     help));
    EXPECT_NO_THROW(parseCommandLine({"--users", "u.json", "--node-password", "np"}, help));
}

}  // namespace
}  // namespace kvexec::server
