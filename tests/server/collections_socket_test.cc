// Scopes and collections over the binary protocol, against the real
// kvexec-server: a collection-aware client (HELLO Collections) resolves
// paths to ids, keeps the same key apart in two collections, is refused
// at once for an unknown collection or scope with the manifest's uid, and
// finds it all again after a restart. The manifest is the data directory's
// collections.json (written here as the bucket would write it).
#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "protocol/binary_response.h"
#include "protocol/keys.h"
#include "server_process.h"

namespace kvexec::server::test {
namespace {

using protocol::Opcode;
using protocol::Status;

constexpr auto kSuccess = static_cast<std::uint16_t>(Status::Success);
constexpr char kManifest[] = R"({"uid":"2","next_scope_uid":"9","next_collection_uid":"9",
 "scopes":[{"name":"_default","uid":"0","collections":[{"name":"_default","uid":"0"}]},
           {"name":"shop","uid":"8","collections":[{"name":"orders","uid":"8"}]}]})";

std::uint64_t be64(std::string_view bytes) {
    std::uint64_t value = 0;
    for (const char c : bytes) {
        value = (value << 8) | static_cast<std::uint8_t>(c);
    }
    return value;
}

class CollectionsSocketTest : public ::testing::Test {
  protected:
    void SetUp() override {
        std::ofstream(dir_.path() + "/collections.json") << kManifest;
        start();
    }
    void TearDown() override {
        if (server_) {
            EXPECT_EQ(server_->stop(SIGTERM), 0);
        }
    }
    void start() {
        server_ = std::make_unique<ServerProcess>(
            dir_.path(), std::vector<std::string>{"--sync", "none", "--vbuckets", "64"});
        client_ = std::make_unique<Client>(server_->port());
        std::string features;
        protocol::appendBe16(features, 0x12);  // Collections
        protocol::appendBe16(features, 0x07);  // XERROR
        ASSERT_EQ(statusOf(client_->call(request(Opcode::Hello, "collections-test", "", features))),
                  kSuccess);
    }
    void restart() {
        client_.reset();
        ASSERT_EQ(server_->stop(SIGTERM), 0);
        start();
    }
    // A request for `key` in `collection` (LEB128 prefix, one byte here),
    // on the key's vBucket as a Couchbase client computes it.
    static RawRequest keyed(Opcode op, std::uint8_t collection, const std::string& key,
                            std::string extras = {}, std::string value = {}) {
        auto r = request(op, std::string(1, static_cast<char>(collection)) + key, std::move(extras),
                         std::move(value));
        r.vbucket = protocol::vbucketOfKey(key, 64);
        return r;
    }
    std::optional<BinaryResponse> set(std::uint8_t collection, const std::string& key,
                                      const std::string& value) {
        return client_->call(keyed(Opcode::Set, collection, key, std::string(8, '\0'), value));
    }
    std::string get(std::uint8_t collection, const std::string& key) {
        auto response = client_->call(keyed(Opcode::Get, collection, key));
        if (!response) {
            return "no response";
        }
        return response->status == kSuccess ? response->value
                                            : "status " + std::to_string(response->status);
    }

    TempDir dir_;
    std::unique_ptr<ServerProcess> server_;
    std::unique_ptr<Client> client_;
};

TEST_F(CollectionsSocketTest, PathsResolveToTheManifestsIdsAndUid) {
    auto orders = client_->call(request(Opcode::GetCollectionId, "", "", "shop.orders"));
    ASSERT_EQ(statusOf(orders), kSuccess);
    ASSERT_EQ(orders->extras.size(), 12u);
    EXPECT_EQ(be64(orders->extras.substr(0, 8)), 2u);  // the manifest's uid
    EXPECT_EQ(be64(orders->extras.substr(8)), 8u);     // the collection's id
    auto byOmission = client_->call(request(Opcode::GetCollectionId, "", "", "."));
    ASSERT_EQ(statusOf(byOmission), kSuccess);
    EXPECT_EQ(be64(byOmission->extras.substr(8)), 0u);
    auto scope = client_->call(request(Opcode::GetScopeId, "", "", "shop"));
    ASSERT_EQ(statusOf(scope), kSuccess);
    EXPECT_EQ(be64(scope->extras.substr(8)), 8u);

    auto manifest = client_->call(request(Opcode::GetCollectionsManifest));
    ASSERT_EQ(statusOf(manifest), kSuccess);
    const auto json = nlohmann::json::parse(manifest->value);
    EXPECT_EQ(json["uid"], "2");
    EXPECT_EQ(json["scopes"][1]["collections"][0]["name"], "orders");
}

TEST_F(CollectionsSocketTest, UnknownNamesAreRefusedAtOnceWithTheManifestUid) {
    auto collection = client_->call(request(Opcode::GetCollectionId, "", "", "shop.nope"));
    EXPECT_EQ(statusOf(collection), static_cast<std::uint16_t>(Status::UnknownCollection));
    ASSERT_TRUE(collection);
    EXPECT_EQ(nlohmann::json::parse(collection->value)["manifest_uid"], "2");
    auto scope = client_->call(request(Opcode::GetCollectionId, "", "", "nope.orders"));
    EXPECT_EQ(statusOf(scope), static_cast<std::uint16_t>(Status::UnknownScope));
    EXPECT_EQ(statusOf(client_->call(request(Opcode::GetScopeId, "", "", "nope"))),
              static_cast<std::uint16_t>(Status::UnknownScope));
    for (const char* bad : {"orders", "a.b.c", "shop.%bad"}) {
        EXPECT_EQ(statusOf(client_->call(request(Opcode::GetCollectionId, "", "", bad))),
                  static_cast<std::uint16_t>(Status::InvalidArguments))
            << bad;
    }
    auto write = set(99, "k", "v");
    EXPECT_EQ(statusOf(write), static_cast<std::uint16_t>(Status::UnknownCollection));
    ASSERT_TRUE(write);
    EXPECT_EQ(nlohmann::json::parse(write->value)["manifest_uid"], "2");
    EXPECT_EQ(get(99, "k"), "status 136");
}

TEST_F(CollectionsSocketTest, TheSameKeyInTwoCollectionsStaysApartAcrossARestart) {
    ASSERT_EQ(statusOf(set(0, "k", "in default")), kSuccess);
    ASSERT_EQ(statusOf(set(8, "k", "in orders")), kSuccess);
    EXPECT_EQ(get(0, "k"), "in default");
    EXPECT_EQ(get(8, "k"), "in orders");
    restart();
    EXPECT_EQ(get(0, "k"), "in default");
    EXPECT_EQ(get(8, "k"), "in orders");
    Client text(server_->port());  // text clients see the default collection
    EXPECT_EQ(text.ask("get k").value_or(""), "VALUE k 0 10\r\n");
}

}  // namespace
}  // namespace kvexec::server::test
