// A node's replication client (replication/replication_client.h) against a
// real active: an in-process Server (loopback, any port) over bucket "a",
// and a ReplicationClient of node "b" over a replica bucket of its own, in
// the same process, so that the test reads both sides' counters. What a
// rebalance does to them many times over: the map moves vBuckets between
// the actives a replica streams from, reaching the bucket first (its
// vBucket states) and the replication client after (setPeers).
#include <arpa/inet.h>
#include <event2/thread.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <future>
#include <memory>
#include <ostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "engine/engine_test_support.h"
#include "executor/test_support.h"
#include "server/replication/replication_client.h"
#include "server/server.h"
#include "server/tls_context.h"
#include "test_certificate.h"

namespace kvexec::server {
namespace {

using engine::Status;
using engine::Vbid;
using engine::VBucketState;

// The server's loop and the client's are reached from the test thread.
[[maybe_unused]] const int kLibeventThreads = evthread_use_pthreads();

const std::string kActive = "a";
const std::string kReplica = "b";
constexpr std::size_t kVBuckets = 8;

std::unique_ptr<engine::Bucket> openBucket(ExecutorPool& pool, const engine::test::TempDir& dir,
                                           const std::string& node) {
    engine::BucketConfig config = engine::test::testConfig(dir);
    config.name = "default";
    config.nodeName = node;
    config.numVBuckets = kVBuckets;
    return engine::test::openWarmedUp(pool, config);
}

class ReplicationClientTest : public ::testing::Test {
  protected:
    void SetUp() override {
        pool_ = ExecutorPool::create(Backend::Wheel);
        active_ = openBucket(*pool_, activeDir_, kActive);
        replica_ = openBucket(*pool_, replicaDir_, kReplica);
        activeContext_.config.host = "127.0.0.1";
        activeContext_.config.port = 0;
        activeContext_.config.dataDir = activeDir_.path();
        activeContext_.config.vbuckets = kVBuckets;
        activeContext_.config.frontendThreads = 1;
        activeContext_.pool = pool_.get();
        // No users: any connection may open DCP.
        activeContext_.buckets.push_back({"default", active_.get()});
        server_ = std::make_unique<Server>(activeContext_);
        serverThread_ = std::thread([this] {
            try {
                server_->run(serverOutput_);
            } catch (const std::exception& error) {
                ADD_FAILURE() << "the active's server stopped: " << error.what();
            }
        });
        ASSERT_TRUE(kvexec::test::waitFor([&] { return activeContext_.boundPort.load() != 0; }));

        replicaContext_.config.vbuckets = kVBuckets;
        replicaContext_.pool = pool_.get();
        replicaContext_.buckets.push_back({"default", replica_.get()});
        ReplicationSettings settings;
        settings.nodeName = kReplica;
        settings.reconnectDelay = std::chrono::milliseconds(50);
        client_ = std::make_unique<ReplicationClient>(replicaContext_, *replica_, settings);
    }
    void TearDown() override {
        if (client_) {
            client_->stop();
            client_.reset();
        }
        if (serverThread_.joinable()) {
            server_->requestStop();
            serverThread_.join();
        }
        server_.reset();
        replica_.reset();
        active_.reset();
    }

    // What a map does: the vBuckets' states on both nodes.
    void activeHolds(const std::vector<Vbid>& vbuckets) {
        for (const Vbid vb : vbuckets) {
            ASSERT_EQ(active_->setVBucketState(vb, VBucketState::Active, {{kActive, kReplica}}),
                      Status::Success);
        }
    }
    void replicaHolds(const std::vector<Vbid>& vbuckets, VBucketState state) {
        for (const Vbid vb : vbuckets) {
            ASSERT_EQ(replica_->setVBucketState(vb, state), Status::Success);
        }
    }
    ReplicationPeer peerWith(std::vector<Vbid> vbuckets) const {
        return {kActive, "127.0.0.1", activeContext_.boundPort.load(), std::move(vbuckets)};
    }
    bool streamsOpenAre(std::vector<Vbid> expected) const {
        auto open = client_->openStreamVBuckets();
        std::ranges::sort(open);
        std::ranges::sort(expected);
        return open == expected;
    }
    void write(Vbid vb, const std::string& key, const std::string& value) {
        auto done = std::make_shared<std::promise<Status>>();
        auto result = done->get_future();
        engine::StoreRequest set = engine::test::setRequest(vb, key, value);
        active_->store(std::move(set),
                       [done](const engine::MutationResult& r) { done->set_value(r.status); });
        ASSERT_EQ(result.wait_for(kvexec::test::kDeadline), std::future_status::ready);
        ASSERT_EQ(result.get(), Status::Success);
    }
    bool replicaHas(Vbid vb, const std::string& key, const std::string& value) {
        auto done = std::make_shared<std::promise<engine::GetResult>>();
        auto result = done->get_future();
        replica_->getReplica(vb, engine::DocKey{key},
                             [done](const engine::GetResult& r) { done->set_value(r); });
        if (result.wait_for(kvexec::test::kDeadline) != std::future_status::ready) {
            return false;
        }
        const auto got = result.get();
        return got.status == Status::Success && got.item.value == value;
    }
    bool waitUntilReplicaHas(Vbid vb, const std::string& key, const std::string& value) {
        return kvexec::test::waitFor([&] { return replicaHas(vb, key, value); });
    }
    std::uint64_t connectionsToTheActive() const {
        return activeContext_.counters.totalConnections.load();
    }

    engine::test::TempDir activeDir_, replicaDir_;
    std::unique_ptr<ExecutorPool> pool_;
    std::unique_ptr<engine::Bucket> active_, replica_;
    ServerContext activeContext_, replicaContext_;
    std::ostringstream serverOutput_;  // run()'s ready line, unread
    std::unique_ptr<Server> server_;
    std::thread serverThread_;
    std::unique_ptr<ReplicationClient> client_;
};

// A map step moves one vBucket off the link to the active and another onto
// it: the connection stays, the streams of the vBuckets it keeps are not
// asked for again, the removed one's stream ends on the producer, and the
// added one streams.
TEST_F(ReplicationClientTest, AChangeOfAPeersVBucketsKeepsItsConnectionAndItsOtherStreams) {
    activeHolds({0, 1, 2, 3});
    replicaHolds({0, 1, 2}, VBucketState::Replica);
    client_->setPeers({peerWith({0, 1, 2})});
    ASSERT_TRUE(kvexec::test::waitFor([&] { return streamsOpenAre({0, 1, 2}); }));
    write(0, "before", "v");
    ASSERT_TRUE(waitUntilReplicaHas(0, "before", "v"));
    const ReplicationCounters before = client_->counters();
    const auto connections = connectionsToTheActive();
    ASSERT_EQ(before.connections, 1u);
    ASSERT_EQ(connections, 1u);

    replicaHolds({2}, VBucketState::Dead);  // the bucket hears of the map first
    replicaHolds({3}, VBucketState::Replica);
    client_->setPeers({peerWith({0, 1, 3})});
    ASSERT_TRUE(kvexec::test::waitFor([&] { return streamsOpenAre({0, 1, 3}); }));
    write(3, "added", "v");
    write(0, "after", "v");
    EXPECT_TRUE(waitUntilReplicaHas(3, "added", "v")) << "the added vBucket does not stream";
    EXPECT_TRUE(waitUntilReplicaHas(0, "after", "v"));
    EXPECT_TRUE(kvexec::test::waitFor([&] { return active_->stats().streamsOpen == 3; }))
        << "the removed vBucket's stream was left open on the active";

    const ReplicationCounters after = client_->counters();
    EXPECT_EQ(after.connections, before.connections) << "the link was replaced";
    EXPECT_EQ(connectionsToTheActive(), connections) << "the active saw a new connection";
    EXPECT_EQ(after.streamRequests, before.streamRequests + 1) << "kept streams were restarted";
    EXPECT_EQ(after.streamsClosed, before.streamsClosed + 1);
    EXPECT_EQ(after.breaks, 0u);
}

// The map takes a vBucket from the replica while its active keeps writing
// to it, and the client hears of the map after the bucket: the messages of
// that vBucket that arrive meanwhile end its stream alone. The connection,
// and the other vBuckets' streams, go on.
TEST_F(ReplicationClientTest, AVBucketTakenFromTheReplicaBreaksNoOtherStream) {
    activeHolds({0, 1, 2});
    replicaHolds({0, 1, 2}, VBucketState::Replica);
    client_->setPeers({peerWith({0, 1, 2})});
    ASSERT_TRUE(kvexec::test::waitFor([&] { return streamsOpenAre({0, 1, 2}); }));
    const ReplicationCounters before = client_->counters();

    replicaHolds({2}, VBucketState::Dead);
    for (int i = 0; i < 20; ++i) {
        write(2, "moving-" + std::to_string(i), "v");
    }
    write(0, "k", "v");
    EXPECT_TRUE(waitUntilReplicaHas(0, "k", "v"));
    // The replica's consumer closed vBucket 2's stream on the active.
    ASSERT_TRUE(kvexec::test::waitFor([&] { return active_->stats().streamsOpen == 2; }));
    EXPECT_TRUE(streamsOpenAre({0, 1}));

    client_->setPeers({peerWith({0, 1})});  // the map reaches the client
    write(1, "k", "v");
    EXPECT_TRUE(waitUntilReplicaHas(1, "k", "v"));
    EXPECT_TRUE(streamsOpenAre({0, 1}));
    EXPECT_EQ(active_->stats().streamsOpen, 2u);

    const ReplicationCounters after = client_->counters();
    EXPECT_EQ(after.breaks, 0u) << "the connection broke off";
    EXPECT_EQ(after.connections, before.connections);
    EXPECT_EQ(after.streamRequests, before.streamRequests) << "streams were restarted";
    EXPECT_EQ(connectionsToTheActive(), 1u);
}

// A peer at a new address is another connection: the old one closes.
TEST_F(ReplicationClientTest, APeerThatMovedGetsANewConnection) {
    activeHolds({0});
    replicaHolds({0}, VBucketState::Replica);
    auto peer = peerWith({0});
    peer.port = 1;  // nothing listens there: the link keeps retrying
    client_->setPeers({peer});
    ASSERT_TRUE(kvexec::test::waitFor([&] { return client_->counters().breaks >= 1; }));
    // Why, in words (the socket's error, which libevent reports later for
    // a refusal on loopback: not asserted word for word).
    EXPECT_EQ(client_->report().lastBreak.rfind("connection to a lost: ", 0), 0u)
        << client_->report().lastBreak;
    client_->setPeers({peerWith({0})});
    ASSERT_TRUE(kvexec::test::waitFor([&] { return streamsOpenAre({0}); }));
    write(0, "k", "v");
    EXPECT_TRUE(waitUntilReplicaHas(0, "k", "v"));
    EXPECT_EQ(connectionsToTheActive(), 1u);
}

// With --cluster-tls-ca a node streams only from a peer's TLS port: a
// peer that advertises none (a node not yet set up for it) is retried,
// and the report says why; the plain port is never used instead.
TEST_F(ReplicationClientTest, APeerWithoutATlsPortIsNotStreamedFromInThePlain) {
    engine::test::TempDir certificates;
    ASSERT_TRUE(kvexec::test::makeCertificate(certificates.path().string(), "ca", "IP:127.0.0.1"));
    const TlsClientContext tls((certificates.path() / "ca.pem").string());
    ReplicationSettings settings;
    settings.nodeName = kReplica;
    settings.reconnectDelay = std::chrono::milliseconds(50);
    settings.tls = &tls;
    client_ = std::make_unique<ReplicationClient>(replicaContext_, *replica_, settings);
    activeHolds({0});
    replicaHolds({0}, VBucketState::Replica);
    client_->setPeers({peerWith({0})});  // no TLS port
    ASSERT_TRUE(kvexec::test::waitFor([&] { return client_->counters().breaks >= 2; }));
    const ReplicationReport report = client_->report();
    EXPECT_TRUE(report.tls);
    EXPECT_EQ(report.peers, 1u);
    EXPECT_EQ(report.streamsOpen, 0u);
    EXPECT_EQ(report.lastBreak, "a advertises no TLS port (kvSSL)");
    EXPECT_EQ(connectionsToTheActive(), 0u);
    client_->stop();
    client_.reset();  // before `tls`
}

// A peer that accepts the connection and then answers nothing (a stopped
// process behind a live kernel, a path that drops packets after the
// handshake) is given up on after the handshake timeout and tried again.
TEST_F(ReplicationClientTest, APeerThatAcceptsAndNeverAnswersIsDroppedAtTheHandshakeTimeout) {
    const int silent = ::socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(silent, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    ASSERT_EQ(::bind(silent, reinterpret_cast<sockaddr*>(&address), length), 0);
    ASSERT_EQ(::listen(silent, 8), 0);  // the kernel accepts; nothing ever reads
    ASSERT_EQ(::getsockname(silent, reinterpret_cast<sockaddr*>(&address), &length), 0);
    ReplicationSettings settings;
    settings.nodeName = kReplica;
    settings.reconnectDelay = std::chrono::milliseconds(50);
    settings.handshakeTimeout = std::chrono::milliseconds(200);
    client_ = std::make_unique<ReplicationClient>(replicaContext_, *replica_, settings);
    replicaHolds({0}, VBucketState::Replica);
    client_->setPeers({{kActive, "127.0.0.1", ntohs(address.sin_port), {0}}});
    EXPECT_TRUE(kvexec::test::waitFor([&] { return client_->counters().breaks >= 2; }));
    EXPECT_EQ(client_->report().lastBreak,
              "connection to a lost: no answer before the handshake timeout");
    EXPECT_EQ(client_->openStreams(), 0u);
    client_->stop();
    ::close(silent);
}

// A CA file that holds no certificate stops the start, naming the file.
TEST(TlsClientContextTest, ACaFileWithoutACertificateIsRefusedByName) {
    engine::test::TempDir dir;
    const std::string empty = (dir.path() / "empty.pem").string();
    std::ofstream(empty) << "not a certificate\n";
    try {
        TlsClientContext tls(empty);
        FAIL() << "an empty CA file was accepted";
    } catch (const std::runtime_error& error) {
        EXPECT_EQ(std::string(error.what()).rfind("--cluster-tls-ca " + empty + ": ", 0), 0u)
            << error.what();
    }
}

}  // namespace
}  // namespace kvexec::server
