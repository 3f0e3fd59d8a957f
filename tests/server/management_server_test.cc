// The management (REST) endpoint as the Couchbase SDKs' collection and
// bucket managers use it: a real Server (KV port and --mgmt-port 0, both on
// loopback) over a fresh bucket, run on a thread of the test, spoken to
// with libevent's HTTP client. The texts and JSON shapes asserted here are
// the ones the SDK (couchbase-cxx-client, under Node.js SDK 4.7.0) searches
// for or reads without a check.
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/thread.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <streambuf>
#include <string>
#include <thread>
#include <vector>

#include "kvexec/engine/bucket.h"
#include "protocol/auth/crypto.h"
#include "server/http_client.h"
#include "server/server.h"
#include "server/server_config.h"

namespace kvexec::server {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// Generous: sanitizer builds on a loaded 2-core machine are slow; a pass
// is fast anyway.
constexpr std::chrono::seconds kDeadline{20};
const std::string kBuckets = "/pools/default/buckets";
const std::string kScopes = kBuckets + "/default/scopes";

// Server::requestStop reaches the server's loop from the test thread.
[[maybe_unused]] const int kLibeventThreads = evthread_use_pthreads();

class TempDir {
  public:
    TempDir() {
        std::string pattern =
            (std::filesystem::temp_directory_path() / "kvexec-mgmt-XXXXXX").string();
        if (mkdtemp(pattern.data()) == nullptr) {
            throw std::runtime_error("mkdtemp failed");
        }
        path_ = pattern;
    }
    ~TempDir() {
        std::error_code ignored;
        std::filesystem::remove_all(path_, ignored);
    }
    const std::string& path() const { return path_; }

  private:
    std::string path_;
};

// What Server::run prints, written from its thread; a test waits for a
// line to appear.
class WatchedOutput : public std::streambuf {
  public:
    // True once `text` was written or the server failed, false at the deadline.
    bool waitFor(std::string_view text) {
        std::unique_lock lock(mutex_);
        return changed_.wait_for(lock, kDeadline, [&] {
            return written_.find(text) != std::string::npos || !failure_.empty();
        }) && failure_.empty();
    }
    void fail(std::string why) {
        std::lock_guard lock(mutex_);
        failure_ = std::move(why);
        changed_.notify_all();
    }
    std::string written() const {
        std::lock_guard lock(mutex_);
        return written_ + failure_;
    }

  protected:
    int_type overflow(int_type c) override {
        if (c != traits_type::eof()) {
            const char byte = traits_type::to_char_type(c);
            xsputn(&byte, 1);
        }
        return traits_type::not_eof(c);
    }
    std::streamsize xsputn(const char* bytes, std::streamsize n) override {
        std::lock_guard lock(mutex_);
        written_.append(bytes, static_cast<std::size_t>(n));
        changed_.notify_all();
        return n;
    }

  private:
    mutable std::mutex mutex_;
    std::condition_variable changed_;
    std::string written_;
    std::string failure_;
};

// A real Server with --mgmt-port 0 over two fresh buckets, "default" (the
// first) and "travel".
class RunningServer {
  public:
    explicit RunningServer(bool withCredentials) : output_(&watched_) {
        pool_ = ExecutorPool::create(Backend::Wheel);
        context_.config.buckets.clear();
        for (const std::string name : {"default", "travel"}) {
            engine::BucketConfig bucketConfig;
            bucketConfig.name = name;
            bucketConfig.dataDir = dir_.path() + "/" + name;
            bucketConfig.numVBuckets = 16;
            bucketConfig.numShards = 2;
            bucketConfig.syncMode = storage::SyncMode::None;
            bucketConfig.memoryQuota = std::size_t{64} << 20;
            buckets_.push_back(engine::Bucket::open(*pool_, bucketConfig));
            waitForWarmup(*buckets_.back());
            context_.buckets.push_back({name, buckets_.back().get()});
            context_.config.buckets.push_back(name);
        }
        context_.config.host = "127.0.0.1";
        context_.config.port = 0;
        context_.config.mgmtPort = 0;
        context_.config.dataDir = dir_.path();
        context_.config.vbuckets = 16;
        context_.config.frontendThreads = 1;
        if (withCredentials) {
            context_.users.add({"admin", "s3cret", 64}, protocol::auth::Role::Client);
            context_.users.add({"app", "app-pw", 64}, protocol::auth::Role::Client,
                               std::vector<std::string>{"travel"});
        }
        context_.pool = pool_.get();
        server_ = std::make_unique<Server>(context_);
        thread_ = std::thread([this] {
            try {
                server_->run(output_);
            } catch (const std::exception& error) {
                watched_.fail(error.what());
            }
        });
        if (!watched_.waitFor("kvexec-server: ready on ")) {
            stop();
            throw std::runtime_error("the server did not start: " + watched_.written());
        }
    }
    ~RunningServer() { stop(); }

    std::uint16_t mgmtPort() const { return context_.boundMgmtPort.load(); }
    std::uint16_t kvPort() const { return context_.boundPort.load(); }
    engine::Bucket& bucket() { return *buckets_.front(); }
    engine::Bucket& travel() { return *buckets_.back(); }
    std::string output() const { return watched_.written(); }

  private:
    static void waitForWarmup(const engine::Bucket& bucket) {
        const auto until = Clock::now() + kDeadline;
        while (bucket.warmupProgress().state == engine::WarmupState::Running &&
               Clock::now() < until) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        if (bucket.warmupProgress().state != engine::WarmupState::Complete) {
            throw std::runtime_error("warmup did not complete");
        }
    }
    void stop() {
        if (thread_.joinable()) {
            server_->requestStop();
            thread_.join();
        }
    }

    TempDir dir_;
    std::unique_ptr<ExecutorPool> pool_;
    std::vector<std::unique_ptr<engine::Bucket>> buckets_;
    ServerContext context_;
    WatchedOutput watched_;
    std::ostream output_;
    std::unique_ptr<Server> server_;
    std::thread thread_;
};

using Reply = test::HttpReply;

std::string basic(const std::string& user, const std::string& password) {
    return "Basic " + protocol::auth::base64Encode(user + ":" + password);
}

Reply request(std::uint16_t port, evhttp_cmd_type method, const std::string& uri,
              const std::string& form = "", const std::string& authorization = "") {
    return test::httpRequest(port, method, uri, form, authorization, kDeadline);
}

std::uint64_t hexUid(const Reply& reply) {
    const json body = reply.parsed();
    EXPECT_TRUE(body.at("uid").is_string()) << reply.body;
    return std::stoull(body.at("uid").get<std::string>(), nullptr, 16);
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

class ManagementServerTest : public ::testing::Test {
  protected:
    ManagementServerTest() : server_(false) {}

    Reply get(const std::string& uri) { return request(server_.mgmtPort(), EVHTTP_REQ_GET, uri); }
    Reply post(const std::string& uri, const std::string& form = "") {
        return request(server_.mgmtPort(), EVHTTP_REQ_POST, uri, form);
    }
    Reply remove(const std::string& uri) {
        return request(server_.mgmtPort(), EVHTTP_REQ_DELETE, uri);
    }
    Reply patch(const std::string& uri, const std::string& form) {
        return request(server_.mgmtPort(), EVHTTP_REQ_PATCH, uri, form);
    }
    engine::Manifest manifest() { return server_.bucket().manifest(); }
    // The collection's maxTTL in the bucket's manifest; nullopt if it has
    // no such collection.
    std::optional<std::uint32_t> maxTtlOf(std::string_view scope, std::string_view collection) {
        const engine::Manifest now = manifest();
        const auto* entry = now.findCollection(scope, collection);
        return entry != nullptr ? std::optional(entry->maxTtl) : std::nullopt;
    }

    RunningServer server_;
};

// ---- Scopes and collections ------------------------------------------------

TEST_F(ManagementServerTest, ListScopesAnswersTheManifestWithHexUids) {
    const Reply reply = get(kScopes);
    ASSERT_EQ(reply.status, 200) << reply.body;
    EXPECT_TRUE(contains(reply.contentType, "application/json")) << reply.contentType;
    const json body = reply.parsed();
    ASSERT_TRUE(body.at("uid").is_string());
    ASSERT_TRUE(body.at("scopes").is_array());
    ASSERT_EQ(body["scopes"].size(), 1u);
    const json& scope = body["scopes"][0];
    EXPECT_EQ(scope.at("name"), "_default");
    EXPECT_EQ(scope.at("uid"), "0");
    ASSERT_EQ(scope.at("collections").size(), 1u);
    EXPECT_EQ(scope["collections"][0].at("name"), "_default");
    EXPECT_EQ(scope["collections"][0].at("uid"), "0");
}

TEST_F(ManagementServerTest, CreateScopeAnswersTheNewManifestUidInHex) {
    const Reply first = post(kScopes, "name=inventory");
    ASSERT_EQ(first.status, 200) << first.body;
    EXPECT_TRUE(contains(first.contentType, "application/json"));
    const std::uint64_t firstUid = hexUid(first);
    EXPECT_EQ(firstUid, manifest().uid);
    ASSERT_NE(manifest().findScope("inventory"), nullptr);

    const Reply second = post(kScopes, "name=tenant-2");
    ASSERT_EQ(second.status, 200) << second.body;
    EXPECT_GT(hexUid(second), firstUid);

    // Past 9, hex and decimal part.
    for (int i = 3; i <= 12; ++i) {
        const Reply next = post(kScopes, "name=tenant-" + std::to_string(i));
        ASSERT_EQ(next.status, 200) << next.body;
        EXPECT_EQ(hexUid(next), manifest().uid);
    }
    EXPECT_GE(manifest().uid, 12u);

    const json listed = get(kScopes).parsed();
    EXPECT_EQ(std::stoull(listed.at("uid").get<std::string>(), nullptr, 16), manifest().uid);
    EXPECT_EQ(listed.at("scopes").size(), 13u);
}

TEST_F(ManagementServerTest, CreateCollectionKeepsItsMaxTtl) {
    ASSERT_EQ(post(kScopes, "name=s").status, 200);
    const Reply created = post(kScopes + "/s/collections", "name=c&maxTTL=3600&history=false");
    ASSERT_EQ(created.status, 200) << created.body;
    EXPECT_EQ(hexUid(created), manifest().uid);
    EXPECT_EQ(maxTtlOf("s", "c"), 3600u);

    // -1 is the SDKs' "no expiry".
    ASSERT_EQ(post(kScopes + "/s/collections", "name=forever&maxTTL=-1").status, 200);
    EXPECT_EQ(maxTtlOf("s", "forever"), 0u);

    const json listed = get(kScopes).parsed();
    for (const auto& scope : listed.at("scopes")) {
        for (const auto& entry : scope.at("collections")) {
            if (entry.at("name") == "c") {
                EXPECT_TRUE(entry.at("maxTTL").is_number_integer());
                EXPECT_EQ(entry["maxTTL"], 3600);
            }
        }
    }
}

TEST_F(ManagementServerTest, DuplicatesAreRefusedWithCouchbasesText) {
    ASSERT_EQ(post(kScopes, "name=s").status, 200);
    ASSERT_EQ(post(kScopes + "/s/collections", "name=c").status, 200);
    const auto uid = manifest().uid;

    const Reply scope = post(kScopes, "name=s");
    EXPECT_EQ(scope.status, 400);
    EXPECT_TRUE(contains(scope.body, "Scope with name \"s\" already exists")) << scope.body;

    const Reply collection = post(kScopes + "/s/collections", "name=c");
    EXPECT_EQ(collection.status, 400);
    EXPECT_TRUE(
        contains(collection.body, "Collection with name \"c\" in scope \"s\" already exists"))
        << collection.body;
    EXPECT_EQ(manifest().uid, uid);
}

TEST_F(ManagementServerTest, UnknownScopesAndCollectionsAre404WithCouchbasesText) {
    ASSERT_EQ(post(kScopes, "name=s").status, 200);

    const Reply scope = remove(kScopes + "/nope");
    EXPECT_EQ(scope.status, 404);
    EXPECT_TRUE(contains(scope.body, "Scope with name \"nope\" is not found")) << scope.body;

    const Reply collection = remove(kScopes + "/s/collections/nope");
    EXPECT_EQ(collection.status, 404);
    EXPECT_TRUE(
        contains(collection.body, "Collection with name \"nope\" in scope \"s\" is not found"))
        << collection.body;

    // The SDK looks for the collection's text first: an unknown scope must
    // not mention a collection.
    const Reply inUnknownScope = remove(kScopes + "/nope/collections/c");
    EXPECT_EQ(inUnknownScope.status, 404);
    EXPECT_TRUE(contains(inUnknownScope.body, "Scope with name \"nope\" is not found"));
    EXPECT_FALSE(contains(inUnknownScope.body, "Collection with name"));

    const Reply create = post(kScopes + "/nope/collections", "name=c");
    EXPECT_EQ(create.status, 404);
    EXPECT_TRUE(contains(create.body, "Scope with name \"nope\" is not found")) << create.body;
}

TEST_F(ManagementServerTest, DropAnswersTheNewUidAndChangesTheBucket) {
    ASSERT_EQ(post(kScopes, "name=s").status, 200);
    ASSERT_EQ(post(kScopes + "/s/collections", "name=c").status, 200);
    const auto before = manifest().uid;

    const Reply collection = remove(kScopes + "/s/collections/c");
    ASSERT_EQ(collection.status, 200) << collection.body;
    EXPECT_GT(hexUid(collection), before);
    EXPECT_EQ(manifest().findCollection("s", "c"), nullptr);

    const Reply scope = remove(kScopes + "/s");
    ASSERT_EQ(scope.status, 200) << scope.body;
    EXPECT_EQ(hexUid(scope), manifest().uid);
    EXPECT_EQ(manifest().findScope("s"), nullptr);
}

TEST_F(ManagementServerTest, TheDefaultScopeAndCollectionCannotBeDropped) {
    const Reply collection = remove(kScopes + "/_default/collections/_default");
    EXPECT_EQ(collection.status, 400) << collection.body;
    const Reply scope = remove(kScopes + "/_default");
    EXPECT_EQ(scope.status, 400) << scope.body;
    EXPECT_EQ(manifest(), engine::Manifest::initial());
}

TEST_F(ManagementServerTest, BadNamesAndValuesAre400) {
    ASSERT_EQ(post(kScopes, "name=s").status, 200);
    const auto uid = manifest().uid;
    for (const std::string form : {"name=_system", "name=", "name=has+space", "other=x"}) {
        const Reply scope = post(kScopes, form);
        EXPECT_EQ(scope.status, 400) << form << ": " << scope.body;
        EXPECT_FALSE(scope.body.empty());
        const Reply collection = post(kScopes + "/s/collections", form);
        EXPECT_EQ(collection.status, 400) << form << ": " << collection.body;
    }
    for (const std::string form :
         {"name=c&maxTTL=soon", "name=c&maxTTL=-2", "name=c&maxTTL=2147483648",
          "name=c&history=true", "name=c&history=maybe"}) {
        const Reply collection = post(kScopes + "/s/collections", form);
        EXPECT_EQ(collection.status, 400) << form << ": " << collection.body;
    }
    EXPECT_EQ(manifest().uid, uid);
}

TEST_F(ManagementServerTest, PercentEscapedPathSegmentsAreDecoded) {
    ASSERT_EQ(post(kScopes, "name=a%25b").status, 200);
    ASSERT_NE(manifest().findScope("a%b"), nullptr);
    ASSERT_EQ(post(kScopes + "/a%25b/collections", "name=c%25d").status, 200);
    ASSERT_NE(manifest().findCollection("a%b", "c%d"), nullptr);
    EXPECT_EQ(remove(kScopes + "/a%25b/collections/c%25d").status, 200);
    EXPECT_EQ(remove(kScopes + "/a%25b").status, 200);
    EXPECT_EQ(manifest().findScope("a%b"), nullptr);
}

TEST_F(ManagementServerTest, UpdateCollectionIsRefusedUnlessItIsUnknown) {
    ASSERT_EQ(post(kScopes, "name=s").status, 200);
    ASSERT_EQ(post(kScopes + "/s/collections", "name=c").status, 200);
    const Reply existing = patch(kScopes + "/s/collections/c", "maxTTL=60");
    EXPECT_EQ(existing.status, 400);
    EXPECT_TRUE(contains(existing.body, "not")) << existing.body;
    EXPECT_EQ(maxTtlOf("s", "c"), 0u);

    const Reply collection = patch(kScopes + "/s/collections/nope", "maxTTL=60");
    EXPECT_EQ(collection.status, 404);
    EXPECT_TRUE(
        contains(collection.body, "Collection with name \"nope\" in scope \"s\" is not found"));
    const Reply scope = patch(kScopes + "/nope/collections/c", "maxTTL=60");
    EXPECT_EQ(scope.status, 404);
    EXPECT_TRUE(contains(scope.body, "Scope with name \"nope\" is not found"));
}

TEST_F(ManagementServerTest, AnotherBucketIs404) {
    const std::string other = kBuckets + "/other";
    for (const Reply& reply :
         {get(other), remove(other), get(other + "/scopes"), post(other + "/scopes", "name=s"),
          remove(other + "/scopes/s"), post(other + "/scopes/s/collections", "name=c"),
          post(other + "/controller/doFlush")}) {
        EXPECT_EQ(reply.status, 404) << reply.body;
        EXPECT_TRUE(contains(reply.body, "Requested resource not found.")) << reply.body;
    }
}

// ---- Buckets ------------------------------------------------------------------

// Every field couchbase-cxx-client reads with .at() (a missing one, or one
// of another JSON type, throws inside the SDK).
void expectSdkBucketFields(const json& bucket, const std::string& name, std::uint16_t kvPort,
                           std::uint16_t mgmtPort) {
    EXPECT_EQ(bucket.at("name"), name);
    EXPECT_EQ(bucket.at("uuid"), "kvexec-" + name);
    EXPECT_TRUE(bucket.at("quota").at("ram").is_number_unsigned());
    EXPECT_TRUE(bucket.at("quota").at("rawRAM").is_number_unsigned());
    EXPECT_EQ(bucket["quota"]["rawRAM"], std::size_t{64} << 20);
    EXPECT_TRUE(bucket.at("replicaNumber").is_number_unsigned());
    EXPECT_EQ(bucket.at("bucketType"), "membase");
    EXPECT_EQ(bucket.at("evictionPolicy"), "valueOnly");
    EXPECT_EQ(bucket.at("conflictResolutionType"), "seqno");
    EXPECT_EQ(bucket.at("controllers").at("flush"), kBuckets + "/" + name + "/controller/doFlush");
    EXPECT_TRUE(bucket.at("maxTTL").is_number_unsigned());
    EXPECT_EQ(bucket.at("numVBuckets"), 16);
    EXPECT_EQ(bucket.at("compressionMode"), "off");
    EXPECT_EQ(bucket.at("storageBackend"), "couchstore");
    EXPECT_EQ(bucket.at("durabilityMinLevel"), "none");
    for (const auto& capability : bucket.at("bucketCapabilities")) {
        EXPECT_TRUE(capability.is_string());
    }
    ASSERT_EQ(bucket.at("nodes").size(), 1u);
    const json& node = bucket["nodes"][0];
    EXPECT_EQ(node.at("status"), "healthy");
    EXPECT_EQ(node.at("hostname"), "127.0.0.1:" + std::to_string(mgmtPort));
    EXPECT_TRUE(node.at("version").is_string());
    ASSERT_TRUE(node.at("services").is_array());
    EXPECT_EQ(node["services"], json::array({"kv"}));
    ASSERT_TRUE(node.at("ports").is_object());
    for (const auto& [name, port] : node["ports"].items()) {
        EXPECT_TRUE(port.is_number_unsigned() && port.get<std::uint64_t>() <= 65535) << name;
    }
    EXPECT_EQ(node["ports"].at("direct"), kvPort);
}

TEST_F(ManagementServerTest, BucketListHasEveryFieldTheSdkReads) {
    const Reply reply = get(kBuckets);
    ASSERT_EQ(reply.status, 200) << reply.body;
    EXPECT_TRUE(contains(reply.contentType, "application/json"));
    const json body = reply.parsed();
    ASSERT_TRUE(body.is_array());
    ASSERT_EQ(body.size(), 2u);  // in the order the server was given them
    expectSdkBucketFields(body[0], "default", server_.kvPort(), server_.mgmtPort());
    expectSdkBucketFields(body[1], "travel", server_.kvPort(), server_.mgmtPort());
}

TEST_F(ManagementServerTest, GetBucketAnswersTheNamedBucket) {
    for (const std::string name : {"default", "travel"}) {
        const Reply reply = get(kBuckets + "/" + name);
        ASSERT_EQ(reply.status, 200) << reply.body;
        expectSdkBucketFields(reply.parsed(), name, server_.kvPort(), server_.mgmtPort());
    }
}

TEST_F(ManagementServerTest, EachBucketHasItsOwnScopes) {
    ASSERT_EQ(post(kBuckets + "/travel/scopes", "name=inventory").status, 200);
    const auto hasScope = [&](const std::string& bucket) {
        const json manifest = get(kBuckets + "/" + bucket + "/scopes").parsed();
        for (const auto& scope : manifest.at("scopes")) {
            if (scope.at("name") == "inventory") {
                return true;
            }
        }
        return false;
    };
    EXPECT_TRUE(hasScope("travel"));
    EXPECT_FALSE(hasScope("default"));
    EXPECT_TRUE(server_.travel().manifest().findScope("inventory") != nullptr);
    EXPECT_TRUE(server_.bucket().manifest().findScope("inventory") == nullptr);
}

TEST_F(ManagementServerTest, CreateBucketIsRefusedWithJsonErrors) {
    const Reply existing = post(kBuckets, "name=default&bucketType=couchbase&ramQuotaMB=100");
    EXPECT_EQ(existing.status, 400);
    EXPECT_TRUE(contains(existing.contentType, "application/json"));
    const json exists = existing.parsed();
    EXPECT_TRUE(contains(exists.at("errors").at("name").get<std::string>(),
                         "Bucket with given name already exists"));

    const Reply another = post(kBuckets, "name=beer-sample&bucketType=couchbase&ramQuotaMB=100");
    EXPECT_EQ(another.status, 400);
    const json errors = another.parsed().at("errors");
    ASSERT_TRUE(errors.is_object());
    ASSERT_FALSE(errors.empty());
    for (const auto& [key, message] : errors.items()) {
        EXPECT_TRUE(message.is_string()) << key;
        EXPECT_FALSE(contains(message.get<std::string>(), "already exists"));
    }
}

TEST_F(ManagementServerTest, DroppingTheServedBucketIsRefused) {
    const Reply reply = remove(kBuckets + "/default");
    EXPECT_EQ(reply.status, 400);
    EXPECT_TRUE(contains(reply.body, "cannot drop")) << reply.body;
}

TEST_F(ManagementServerTest, DoFlushDeletesEveryDocumentOfThatBucketOnly) {
    const auto storeKeys = [](engine::Bucket& bucket) {
        for (engine::Vbid vb = 0; vb < 4; ++vb) {
            engine::StoreRequest store;
            store.vbid = vb;
            store.key = "key-" + std::to_string(vb);
            store.value = "value";
            std::optional<engine::Status> stored;
            bucket.store(store, [&](const engine::MutationResult& r) { stored = r.status; });
            ASSERT_EQ(stored, engine::Status::Success);
        }
    };
    const auto keysFound = [](engine::Bucket& bucket) {
        std::size_t found = 0;
        for (engine::Vbid vb = 0; vb < 4; ++vb) {
            bucket.get(vb, "key-" + std::to_string(vb), [&](const engine::GetResult& r) {
                found += r.status == engine::Status::Success ? 1 : 0;
            });
        }
        return found;
    };
    storeKeys(server_.bucket());
    storeKeys(server_.travel());
    const Reply reply = post(kBuckets + "/default/controller/doFlush");
    ASSERT_EQ(reply.status, 200) << reply.body;
    EXPECT_EQ(keysFound(server_.bucket()), 0u);
    EXPECT_EQ(keysFound(server_.travel()), 4u);
}

// ---- Routing --------------------------------------------------------------------

TEST_F(ManagementServerTest, UnknownPathsAre404AndOtherMethods405) {
    for (const std::string& uri : std::vector<std::string>{
             "/", "/pools", "/pools/default", "/pools/default/nodes", kBuckets + "/default/unknown",
             kScopes + "/s/collections/c/more"}) {
        const Reply reply = get(uri);
        EXPECT_EQ(reply.status, 404) << uri;
        EXPECT_EQ(reply.body, "Not found.") << uri;
    }
    EXPECT_EQ(request(server_.mgmtPort(), EVHTTP_REQ_PUT, kScopes, "name=s").status, 405);
    EXPECT_EQ(get(kBuckets + "/default/controller/doFlush").status, 405);
    EXPECT_EQ(remove(kScopes).status, 405);
    EXPECT_EQ(get(kScopes + "/_default").status, 405);
    EXPECT_EQ(manifest(), engine::Manifest::initial());
}

TEST_F(ManagementServerTest, ReadyOutputNamesTheManagementPortFirst) {
    const std::string output = server_.output();
    const std::string line =
        "kvexec-server: mgmt on 127.0.0.1:" + std::to_string(server_.mgmtPort());
    const auto mgmt = output.find(line + "\n");
    ASSERT_NE(mgmt, std::string::npos) << output;
    EXPECT_LT(mgmt, output.find("kvexec-server: ready on ")) << output;
    EXPECT_NE(server_.mgmtPort(), 0);
    EXPECT_NE(server_.mgmtPort(), server_.kvPort());
}

// Clients at once, each creating its own collection and listing the
// scopes: every request is answered, every change is made once.
// Appended, not concatenated: GCC 12 warns falsely (-Wrestrict, its bug
// 105329) on a chain of std::string + here.
std::string collectionName(int client, int i) {
    std::string name = "c";
    name += std::to_string(client);
    name += '_';
    name += std::to_string(i);
    return name;
}

TEST_F(ManagementServerTest, ClientsAtOnceAreEachAnswered) {
    ASSERT_EQ(post(kScopes, "name=app").status, 200);
    constexpr int kClients = 8;
    constexpr int kEach = 5;
    std::vector<std::thread> clients;
    std::atomic<int> answered{0};
    for (int c = 0; c < kClients; ++c) {
        clients.emplace_back([&, c] {
            for (int i = 0; i < kEach; ++i) {
                const std::string name = collectionName(c, i);
                const bool created =
                    post(kScopes + "/app/collections", "name=" + name).status == 200;
                const bool listed = get(kScopes).status == 200;
                answered += created && listed ? 1 : 0;
            }
        });
    }
    for (auto& client : clients) {
        client.join();
    }
    EXPECT_EQ(answered, kClients * kEach);
    const engine::Manifest now = manifest();
    for (int c = 0; c < kClients; ++c) {
        for (int i = 0; i < kEach; ++i) {
            const std::string name = collectionName(c, i);
            EXPECT_NE(now.findCollection("app", name), nullptr) << name;
        }
    }
}

// ---- Authentication ---------------------------------------------------------------

class ManagementServerAuthTest : public ::testing::Test {
  protected:
    ManagementServerAuthTest() : server_(true) {}

    Reply getScopes(const std::string& authorization) {
        return request(server_.mgmtPort(), EVHTTP_REQ_GET, kScopes, "", authorization);
    }

    RunningServer server_;
};

TEST_F(ManagementServerAuthTest, RequestsWithoutTheRightCredentialsAre401) {
    const std::vector<std::string> refused = {
        "",  // none
        basic("admin", "wrong"),
        basic("root", "s3cret"),
        basic("admin", "s3cret!"),
        "Basic !!!",
        "Bearer token",
        "Basic " + protocol::auth::base64Encode("admins3cret"),
    };
    for (const std::string& authorization : refused) {
        const Reply reply = getScopes(authorization);
        EXPECT_EQ(reply.status, 401) << authorization;
        EXPECT_TRUE(contains(reply.authenticate, "Basic")) << reply.authenticate;
    }
    const Reply change =
        request(server_.mgmtPort(), EVHTTP_REQ_POST, kScopes, "name=s", basic("admin", "wrong"));
    EXPECT_EQ(change.status, 401);
    EXPECT_EQ(server_.bucket().manifest().findScope("s"), nullptr);
}

TEST_F(ManagementServerAuthTest, RequestsWithTheRightCredentialsAreServed) {
    EXPECT_EQ(getScopes(basic("admin", "s3cret")).status, 200);
    EXPECT_EQ(getScopes("basic " + protocol::auth::base64Encode("admin:s3cret")).status, 200);
    const Reply change =
        request(server_.mgmtPort(), EVHTTP_REQ_POST, kScopes, "name=s", basic("admin", "s3cret"));
    EXPECT_EQ(change.status, 200) << change.body;
    EXPECT_NE(server_.bucket().manifest().findScope("s"), nullptr);
}

// A user confined to some buckets (--users) sees and changes only those:
// the list leaves the others out, and their routes are 403, as Couchbase
// answers a user without privileges on a bucket.
TEST_F(ManagementServerAuthTest, AUserSeesAndChangesOnlyItsBuckets) {
    const std::string app = basic("app", "app-pw");
    const Reply list = request(server_.mgmtPort(), EVHTTP_REQ_GET, kBuckets, "", app);
    ASSERT_EQ(list.status, 200) << list.body;
    ASSERT_EQ(list.parsed().size(), 1u) << list.body;
    EXPECT_EQ(list.parsed()[0].value("name", ""), "travel");
    EXPECT_EQ(
        request(server_.mgmtPort(), EVHTTP_REQ_GET, kBuckets + "/travel/scopes", "", app).status,
        200);

    EXPECT_EQ(getScopes(app).status, 403);
    EXPECT_EQ(request(server_.mgmtPort(), EVHTTP_REQ_GET, kBuckets + "/default", "", app).status,
              403);
    const Reply change = request(server_.mgmtPort(), EVHTTP_REQ_POST, kScopes, "name=s", app);
    EXPECT_EQ(change.status, 403) << change.body;
    EXPECT_EQ(server_.bucket().manifest().findScope("s"), nullptr);
    const Reply flush = request(server_.mgmtPort(), EVHTTP_REQ_POST,
                                kBuckets + "/default/controller/doFlush", "", app);
    EXPECT_EQ(flush.status, 403);

    // A user of every bucket lists both.
    const Reply all =
        request(server_.mgmtPort(), EVHTTP_REQ_GET, kBuckets, "", basic("admin", "s3cret"));
    EXPECT_EQ(all.parsed().size(), 2u) << all.body;
}

// ---- The command line ---------------------------------------------------------------

TEST(ManagementServerConfigTest, MgmtPortIsParsedAndOptional) {
    bool help = false;
    EXPECT_FALSE(parseCommandLine({}, help).mgmtPort.has_value());
    EXPECT_EQ(parseCommandLine({"--mgmt-port", "0"}, help).mgmtPort, 0);
    EXPECT_EQ(parseCommandLine({"--mgmt-port", "8091"}, help).mgmtPort, 8091);
    EXPECT_THROW(parseCommandLine({"--mgmt-port", "65536"}, help), std::invalid_argument);
    EXPECT_THROW(parseCommandLine({"--mgmt-port", "http"}, help), std::invalid_argument);
    EXPECT_THROW(parseCommandLine({"--mgmt-port"}, help), std::invalid_argument);
    EXPECT_TRUE(contains(usage(), "--mgmt-port"));
}

}  // namespace
}  // namespace kvexec::server
