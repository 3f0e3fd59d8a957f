// Three kvexec-server nodes with --cluster against a private etcd
// (--replicas 1, 16 vBuckets), over loopback sockets: every node's
// GET_CLUSTER_CONFIG lists the three and a map with one replica per
// vBucket; a request for a vBucket the node is not active for gets
// NOT_MY_VBUCKET with that config, and the same request to the active
// works. Each node is stopped by its PID (SIGTERM) and must exit 0.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <initializer_list>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cluster/cluster_state.h"
#include "cluster/etcd_client.h"
#include "etcd_fixture.h"
#include "protocol/binary_response.h"
#include "protocol/keys.h"
#include "server_process.h"
#include "support/wait.h"

namespace kvexec::server::test {
namespace {

using nlohmann::json;
using protocol::Opcode;
using protocol::Status;

constexpr auto kSuccess = static_cast<std::uint16_t>(Status::Success);
constexpr auto kNotMyVbucket = static_cast<std::uint16_t>(Status::NotMyVbucket);
constexpr std::uint16_t kVBuckets = 16;  // ServerProcess's --vbuckets
const std::vector<std::string> kNames = {"n0", "n1", "n2"};

RawRequest setRequest(const std::string& key, const std::string& value) {
    return request(Opcode::Set, key, std::string(8, '\0'), value);
}

std::uint16_t portOf(const std::string& hostPort) {
    return static_cast<std::uint16_t>(std::stoi(hostPort.substr(hostPort.rfind(':') + 1)));
}

class ClusterSocketTest : public cluster::test::EtcdTest {
  protected:
    void SetUp() override {
        EtcdTest::SetUp();
        if (HasFatalFailure()) {
            return;
        }
        for (const std::string& name : kNames) {
            dirs_.push_back(std::make_unique<TempDir>());
            nodes_.push_back(std::make_unique<ServerProcess>(
                dirs_.back()->path(),
                std::vector<std::string>{"--cluster", etcd().url(), "--node", name, "--replicas",
                                         "1", "--sync", "none"}));
        }
        ASSERT_TRUE(settled()) << "the nodes did not apply one map of all three in time";
    }

    void TearDown() override {
        for (auto& node : nodes_) {  // before etcd: each leaves the cluster
            EXPECT_EQ(node->stop(SIGTERM), 0);
        }
    }

    // Polls etcd until every node has applied one map of the three.
    bool settled() {
        cluster::EtcdClient client(etcd().endpoint());
        const cluster::ClusterKeys keys("/kvexec/default");
        const auto everyNodeApplied = [&] {
            const auto view = cluster::readClusterView(keys, client.getPrefix(keys.all()));
            if (view.map && view.map->nodes == kNames && applied(view, view.map->revision)) {
                revision_ = view.map->revision;
                return true;
            }
            return false;
        };
        return kvexec::test::waitUntil(everyNodeApplied, cluster::test::kEtcdDeadline,
                                       std::chrono::milliseconds(20));  // polling etcd
    }

    static bool applied(const cluster::ClusterView& view, std::uint64_t revision) {
        for (const std::string& name : kNames) {
            const auto found = view.statuses.find(name);
            if (found == view.statuses.end() || found->second.mapRevision != revision) {
                return false;
            }
        }
        return true;
    }

    json clusterConfig(std::uint16_t port) {
        Client client(port);
        const auto response = client.call(request(Opcode::GetClusterConfig));
        EXPECT_TRUE(response);
        EXPECT_EQ(response->status, kSuccess);
        return json::parse(response->value);
    }

    std::vector<std::unique_ptr<TempDir>> dirs_;
    std::vector<std::unique_ptr<ServerProcess>> nodes_;
    std::uint64_t revision_ = 0;
};

TEST_F(ClusterSocketTest, EveryNodesConfigListsTheThreeAndOneReplicaPerVBucket) {
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
        const json config = clusterConfig(nodes_[i]->port());
        EXPECT_EQ(config["rev"], revision_);
        const json& server = config["vBucketServerMap"];
        EXPECT_EQ(server["numReplicas"], 1);
        ASSERT_EQ(server["serverList"].size(), 3u);
        for (std::size_t n = 0; n < 3; ++n) {  // the map's node order: n0, n1, n2
            EXPECT_EQ(portOf(server["serverList"][n]), nodes_[n]->port());
            EXPECT_EQ(config["nodesExt"][n]["services"]["kv"], nodes_[n]->port());
            EXPECT_EQ(config["nodesExt"][n].contains("thisNode"), n == i);
        }
        ASSERT_EQ(server["vBucketMap"].size(), kVBuckets);
        for (const json& chain : server["vBucketMap"]) {
            ASSERT_EQ(chain.size(), 2u);
            EXPECT_GE(chain[0], 0);
            EXPECT_GE(chain[1], 0);
            EXPECT_NE(chain[0], chain[1]);
        }
    }
}

TEST_F(ClusterSocketTest, ANodeThatIsNotActiveAnswersNotMyVbucketWithTheConfig) {
    const json config = clusterConfig(nodes_[0]->port());
    const json& map = config["vBucketServerMap"]["vBucketMap"];
    for (int k = 0; k < 8; ++k) {
        const std::string key = "key-" + std::to_string(k);
        const json& chain = map[protocol::vbucketOfKey(key, kVBuckets)];
        const std::size_t active = chain[0].get<std::size_t>();
        for (std::size_t n = 0; n < nodes_.size(); ++n) {
            if (n == active) {
                continue;
            }
            Client client(nodes_[n]->port());
            for (const RawRequest& refused : {setRequest(key, "v"), request(Opcode::Get, key)}) {
                const auto response = client.call(refused);
                ASSERT_TRUE(response) << key;
                ASSERT_EQ(response->status, kNotMyVbucket) << key << " on n" << n;
                const json body = json::parse(response->value);
                EXPECT_EQ(body["rev"], revision_);
                EXPECT_EQ(body["vBucketServerMap"]["serverList"].size(), 3u);
                EXPECT_EQ(body["vBucketServerMap"]["vBucketMap"], map);
            }
        }
        Client client(nodes_[active]->port());
        const auto stored = client.call(setRequest(key, "v-" + key));
        ASSERT_TRUE(stored);
        EXPECT_EQ(stored->status, kSuccess) << key;
        const auto got = client.call(request(Opcode::Get, key));
        ASSERT_TRUE(got);
        EXPECT_EQ(got->status, kSuccess) << key;
        EXPECT_EQ(got->value, "v-" + key);
    }
}

// A Couchbase client (HELLO) names the vBucket itself: the right vBucket
// sent to a node that is not its active is still NOT_MY_VBUCKET.
TEST_F(ClusterSocketTest, ACouchbaseClientIsRoutedByTheMap) {
    const json config = clusterConfig(nodes_[1]->port());
    const std::string key = "routed";
    const std::uint16_t vbucket = protocol::vbucketOfKey(key, kVBuckets);
    const std::size_t active = config["vBucketServerMap"]["vBucketMap"][vbucket][0];
    const std::size_t replica = config["vBucketServerMap"]["vBucketMap"][vbucket][1];
    RawRequest set = setRequest(key, "value");
    set.vbucket = vbucket;
    for (const std::size_t n : {replica, active}) {
        Client client(nodes_[n]->port());
        ASSERT_TRUE(client.call(request(Opcode::Hello, "cluster-test")));
        const auto response = client.call(set);
        ASSERT_TRUE(response);
        EXPECT_EQ(response->status, n == active ? kSuccess : kNotMyVbucket) << "n" << n;
    }
}

// A HELLO value asking for these features (16-bit big-endian each).
std::string helloFeatures(std::initializer_list<protocol::Feature> features) {
    std::string value;
    for (const protocol::Feature feature : features) {
        protocol::appendBe16(value, static_cast<std::uint16_t>(feature));
    }
    return value;
}

// HELLO 0x1e: a NOT_MY_VBUCKET carries the map only while the connection
// has not been sent that revision (in an earlier answer or by
// GET_CLUSTER_CONFIG); a client that did not ask gets it every time.
TEST_F(ClusterSocketTest, AClientThatDedupesMapsIsSentEachRevisionOnce) {
    const json config = clusterConfig(nodes_[0]->port());
    const std::string key = "dedupe";
    const std::uint16_t vbucket = protocol::vbucketOfKey(key, kVBuckets);
    const std::size_t replica = config["vBucketServerMap"]["vBucketMap"][vbucket][1];
    RawRequest get = request(Opcode::Get, key);
    get.vbucket = vbucket;
    const auto notMine = [&](Client& client) {
        const auto response = client.call(get);
        EXPECT_TRUE(response);
        EXPECT_EQ(response ? response->status : 0, kNotMyVbucket);
        return response ? response->value : std::string("no answer");
    };
    const std::string dedupe =
        helloFeatures({protocol::Feature::Xerror, protocol::Feature::DedupeNotMyVbucketClustermap});
    Client deduping(nodes_[replica]->port());
    ASSERT_EQ(deduping.call(request(Opcode::Hello, "dedupe", {}, dedupe))->value, dedupe);
    EXPECT_EQ(json::parse(notMine(deduping))["rev"], revision_);
    EXPECT_EQ(notMine(deduping), "") << "the same revision again";

    Client fetched(nodes_[replica]->port());
    ASSERT_TRUE(fetched.call(request(Opcode::Hello, "fetched", {}, dedupe)));
    ASSERT_EQ(fetched.call(request(Opcode::GetClusterConfig))->status, kSuccess);
    EXPECT_EQ(notMine(fetched), "") << "GET_CLUSTER_CONFIG sent this revision";

    Client plain(nodes_[replica]->port());
    ASSERT_TRUE(plain.call(
        request(Opcode::Hello, "plain", {}, helloFeatures({protocol::Feature::Xerror}))));
    for (int i = 0; i < 2; ++i) {
        EXPECT_EQ(json::parse(notMine(plain))["rev"], revision_);
    }
}

// A client that asked for cluster-map pushes (HELLO 0x0d) and selected the
// bucket is sent each new map as it is applied, without asking: here the
// one that names a fourth node. A client that did not ask gets nothing
// between its responses, and a reply to a push is dropped.
TEST_F(ClusterSocketTest, ASubscribedClientIsSentEachNewMapAsItIsApplied) {
    const std::string pushFeatures =
        helloFeatures({protocol::Feature::Xerror, protocol::Feature::Duplex,
                       protocol::Feature::ClustermapChangeNotification});
    Client subscribed(nodes_[0]->port());
    const auto hello = subscribed.call(request(Opcode::Hello, "push-test", {}, pushFeatures));
    ASSERT_TRUE(hello);
    EXPECT_EQ(hello->value, pushFeatures);
    ASSERT_EQ(subscribed.call(request(Opcode::SelectBucket, "default"))->status, kSuccess);
    Client plain(nodes_[0]->port());
    ASSERT_TRUE(plain.call(
        request(Opcode::Hello, "plain", {}, helloFeatures({protocol::Feature::Xerror}))));
    ASSERT_EQ(plain.call(request(Opcode::SelectBucket, "default"))->status, kSuccess);

    TempDir n3Dir;
    ServerProcess n3(n3Dir.path(), {"--cluster", etcd().url(), "--node", "n3", "--replicas", "1",
                                    "--sync", "none"});
    const std::string n3Address = "127.0.0.1:" + std::to_string(n3.port());
    std::optional<json> pushed;
    std::uint64_t lastRevision = 0;
    // Each read has its own deadline. The map the cluster settled on may
    // come first (n0 pushes it once every node's status says it applied
    // it, which can be after this client subscribed), and others before
    // n3's; each comes once, in order.
    while (!pushed) {
        const auto packet = subscribed.readResponse();
        ASSERT_TRUE(packet) << "no map naming n3 was pushed";
        ASSERT_EQ(packet->magic, 0x82);
        ASSERT_EQ(packet->opcode, 0x01);  // ClustermapChangeNotification
        EXPECT_EQ(packet->opaque, 0u);
        EXPECT_EQ(packet->key, "default");
        ASSERT_EQ(packet->extras.size(), 16u);
        EXPECT_EQ(protocol::readBe64(packet->extras, 0), 1u);  // revEpoch
        const json config = json::parse(packet->value);
        const auto revision = config["rev"].get<std::uint64_t>();
        EXPECT_EQ(revision, protocol::readBe64(packet->extras, 8));
        EXPECT_GE(revision, revision_);
        EXPECT_GT(revision, lastRevision);
        lastRevision = revision;
        const auto& servers = config["vBucketServerMap"]["serverList"];
        if (std::find(servers.begin(), servers.end(), n3Address) != servers.end()) {
            pushed = config;
        }
    }
    // The pushed map is the one the node serves (or an older one).
    EXPECT_GE(clusterConfig(nodes_[0]->port())["rev"].get<std::uint64_t>(), lastRevision);
    // A reply to the push (magic 0x83, with a body, its header sent in two
    // pieces) is dropped; the next request is answered as usual, after any
    // map pushed meanwhile.
    RawRequest reply = request(Opcode::Noop, {}, {}, "ignored");
    reply.magic = 0x83;
    reply.opcode = 0x01;
    const std::string replyBytes = reply.encode();
    ASSERT_TRUE(subscribed.send(replyBytes.substr(0, 10)));
    // Apart, most likely, so that the server frames a partial header (the
    // checks below hold either way).
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ASSERT_TRUE(subscribed.send(replyBytes.substr(10)));
    ASSERT_TRUE(subscribed.send(request(Opcode::Noop).encode()));
    std::optional<BinaryResponse> noop;
    do {
        noop = subscribed.readResponse();
        ASSERT_TRUE(noop);
    } while (noop->magic == 0x82);
    EXPECT_EQ(noop->magic, 0x81);
    EXPECT_EQ(noop->opcode, static_cast<std::uint8_t>(Opcode::Noop));
    EXPECT_EQ(noop->status, kSuccess);
    // The client that did not ask was sent nothing.
    const auto plainNoop = plain.call(request(Opcode::Noop));
    ASSERT_TRUE(plainNoop);
    EXPECT_EQ(plainNoop->magic, 0x81);
    EXPECT_EQ(n3.stop(SIGTERM), 0);
}

}  // namespace
}  // namespace kvexec::server::test
