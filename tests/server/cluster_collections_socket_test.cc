// Scopes and collections on a cluster: the manifest in etcd (written here
// as a node's REST endpoint writes it, cluster_admin.h) is every node's.
// Each node answers GET_COLLECTION_ID with the same id and takes writes in
// the collection on the vBuckets it leads; a node that was down when the
// manifest changed, and one that joins later, take the manifest etcd holds
// (a collection dropped meanwhile takes no more writes); each says in its
// status which manifest it holds.
#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <thread>

#include "cluster/cluster_state.h"
#include "cluster/etcd_client.h"
#include "kvexec/engine/manifest_state.h"
#include "protocol/binary_response.h"
#include "protocol/keys.h"
#include "server/cluster_processes.h"

namespace kvexec::server::test {
namespace {

using engine::ManifestEdit;
using engine::ManifestState;
using protocol::Opcode;
using protocol::Status;
using Clock = std::chrono::steady_clock;

constexpr std::uint16_t kVBuckets = 16;
constexpr auto kSuccess = static_cast<std::uint16_t>(Status::Success);
constexpr auto kUnknownCollection = static_cast<std::uint16_t>(Status::UnknownCollection);
const cluster::ClusterKeys kKeys("/kvexec/default");

std::uint64_t be64(std::string_view bytes) {
    std::uint64_t value = 0;
    for (const char c : bytes) {
        value = (value << 8) | static_cast<std::uint8_t>(c);
    }
    return value;
}

// A client of node `port` that negotiated HELLO Collections.
std::unique_ptr<Client> collectionsClient(std::uint16_t port) {
    auto client = std::make_unique<Client>(port);
    std::string features;
    protocol::appendBe16(features, 0x12);  // Collections
    protocol::appendBe16(features, 0x07);  // XERROR
    const auto hello = client->call(request(Opcode::Hello, "cluster-collections", "", features));
    EXPECT_TRUE(hello && hello->status == kSuccess);
    return client;
}

// What node `port` answers GET_COLLECTION_ID for `path` with: the
// collection's id, or the status (as 0x1'0000 + status) when refused.
std::uint64_t collectionIdAt(std::uint16_t port, const std::string& path) {
    const auto answer =
        collectionsClient(port)->call(request(Opcode::GetCollectionId, "", "", path));
    if (!answer) {
        return 0xffff'ffff'ffff;
    }
    if (answer->status != kSuccess) {
        return 0x1'0000 + answer->status;
    }
    return answer->extras.size() == 12 ? be64(answer->extras.substr(8)) : 0xffff'ffff'fffe;
}

// Polls until node `port` answers `path` with `expected`.
bool waitForCollectionId(std::uint16_t port, const std::string& path, std::uint64_t expected) {
    const auto deadline = Clock::now() + kSocketDeadline;
    while (Clock::now() < deadline) {
        if (collectionIdAt(port, path) == expected) {
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ADD_FAILURE() << "port " << port << " answers " << path << " with "
                  << collectionIdAt(port, path) << ", not " << expected;
    return false;
}

// The cluster's manifest, changed by `edit` and written to etcd.
void writeManifest(cluster::EtcdClient& etcd, ManifestState& state, const ManifestEdit& edit) {
    ASSERT_EQ(engine::applyManifestEdit(state, edit).outcome, engine::ManifestOutcome::Success);
    etcd.put(kKeys.manifest(), engine::encodeManifestState(state));
}

// A SET of `key` in collection `id` (one LEB128 byte) to its active.
std::uint16_t setIn(ClusterProcesses& cluster, std::uint8_t id, const std::string& key) {
    auto set = request(Opcode::Set, std::string(1, static_cast<char>(id)) + key,
                       std::string(8, '\0'), "v");
    set.vbucket = protocol::vbucketOfKey(key, kVBuckets);
    const auto answer = collectionsClient(cluster.portOf(key, 0))->call(set);
    return answer ? answer->status : 0xffff;
}

TEST(ClusterCollectionsSocketTest, EveryNodeHoldsTheManifestInEtcdAlsoOneDownOrJoiningLater) {
    ClusterProcesses cluster(3, 1, kVBuckets, {"--failover-timeout", "2"});
    ASSERT_TRUE(cluster.waitForMap());
    cluster::EtcdClient etcd(cluster::parseEtcdUrl(cluster.etcdUrl()));
    ManifestState state;
    writeManifest(etcd, state, ManifestEdit::createScope("app"));
    writeManifest(etcd, state, ManifestEdit::createCollection("app", "orders", 0));
    for (std::size_t i = 0; i < cluster.size(); ++i) {
        ASSERT_TRUE(waitForCollectionId(cluster.node(i).port(), "app.orders", 8)) << "n" << i;
    }
    for (int i = 0; i < 32; ++i) {  // every vBucket's active takes writes in it
        const std::string key = "order-" + std::to_string(i);
        EXPECT_EQ(setIn(cluster, 8, key), kSuccess) << key;
    }

    cluster.kill(2);
    ASSERT_TRUE(cluster.waitForMap());
    writeManifest(etcd, state, ManifestEdit::dropCollection("app", "orders"));
    writeManifest(etcd, state, ManifestEdit::createCollection("app", "carts", 0));
    cluster.restart(2);
    const std::size_t joined = cluster.addNode();
    ASSERT_TRUE(cluster.waitForMap());
    for (const std::size_t i : {std::size_t{2}, joined}) {
        const std::uint16_t port = cluster.node(i).port();
        EXPECT_TRUE(waitForCollectionId(port, "app.carts", 9)) << "n" << i;
        EXPECT_EQ(collectionIdAt(port, "app.orders"), 0x1'0000 + kUnknownCollection) << "n" << i;
    }
    EXPECT_EQ(setIn(cluster, 8, "order-0"), kUnknownCollection);
    EXPECT_EQ(setIn(cluster, 9, "cart-0"), kSuccess);

    // Every node's status says it holds the manifest's uid.
    const auto deadline = Clock::now() + kSocketDeadline;
    std::uint64_t everywhere = 0;
    while (Clock::now() < deadline && everywhere != state.manifest.uid) {
        const auto view = cluster::readClusterView(kKeys, etcd.getPrefix(kKeys.all()));
        everywhere = cluster::clusterStateOf(view, kVBuckets, {}).manifestEverywhere;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_EQ(everywhere, state.manifest.uid);
    EXPECT_TRUE(cluster.stopAll());
}

}  // namespace
}  // namespace kvexec::server::test
