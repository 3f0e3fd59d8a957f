// NodeAgent (cluster/node_agent.h) against a private etcd: one node takes
// every vBucket; three agree on one balanced map; a node that stops leaves
// and the leader maps without it; a leader that stops hands over; a lease
// lost is reported and the node joins again. Every wait polls a condition
// against a deadline.
#include <gtest/gtest.h>

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <set>
#include <thread>

#include "cluster/node_agent.h"
#include "cluster/rebalance_plan.h"
#include "etcd_fixture.h"
#include "support/wait.h"

namespace kvexec::cluster::test {
namespace {

constexpr std::uint16_t kVBuckets = 64;

// What one agent delivered, for the test thread to wait on.
class StateRecorder {
  public:
    NodeAgent::OnClusterState onState() {
        return [this](const ClusterState& state) {
            std::lock_guard lock(mutex_);
            states_.push_back(state);
            changed_.notify_all();
            return true;
        };
    }
    NodeAgent::OnLeaseLost onLeaseLost() {
        return [this](const std::string&) {
            std::lock_guard lock(mutex_);
            if (leasesLost_++ == 0) {
                firstLeaseLostAt_ = std::chrono::steady_clock::now();
            }
            changed_.notify_all();
        };
    }

    // Waits until the latest state delivered, after the first `after`,
    // satisfies `match`.
    bool waitFor(const std::function<bool(const ClusterState&)>& match, std::size_t after = 0) {
        std::unique_lock lock(mutex_);
        return changed_.wait_for(lock, kEtcdDeadline,
                                 [&] { return states_.size() > after && match(states_.back()); });
    }
    bool waitForLeaseLost() {
        std::unique_lock lock(mutex_);
        return changed_.wait_for(lock, kEtcdDeadline, [&] { return leasesLost_ > 0; });
    }
    std::chrono::steady_clock::time_point firstLeaseLostAt() {
        std::lock_guard lock(mutex_);
        return firstLeaseLostAt_;
    }
    ClusterState latest() {
        std::lock_guard lock(mutex_);
        return states_.empty() ? ClusterState{} : states_.back();
    }
    std::size_t delivered() {
        std::lock_guard lock(mutex_);
        return states_.size();
    }

  private:
    std::mutex mutex_;
    std::condition_variable changed_;
    std::vector<ClusterState> states_;
    int leasesLost_ = 0;
    std::chrono::steady_clock::time_point firstLeaseLostAt_;
};

// A map over exactly `nodes`.
std::function<bool(const ClusterState&)> mapOver(std::vector<std::string> nodes) {
    return [nodes = std::move(nodes)](const ClusterState& state) {
        return state.map && state.map->nodes == nodes && state.registered == nodes;
    };
}

class NodeAgentTest : public EtcdTest {
  protected:
    void TearDown() override {
        agents_.clear();  // before the recorders their callbacks write to
    }

    NodeAgentConfig configFor(const std::string& name, std::uint32_t replicas) {
        NodeAgentConfig config;
        config.etcd = etcd().endpoint();
        config.root = keys_.root();
        config.name = name;
        config.address = NodeAddress{"127.0.0.1", static_cast<std::uint16_t>(11210 + ports_++), 0};
        config.numVBuckets = kVBuckets;
        config.numReplicas = replicas;
        config.leaseTtl = std::chrono::seconds(2);
        config.retryInterval = std::chrono::milliseconds(100);
        config.takeoverTimeout = takeoverTimeout_;
        return config;
    }

    StateRecorder& start(const std::string& name, std::uint32_t replicas = 0,
                         NodeAgent::StatusSource statusSource = {},
                         std::chrono::seconds leaseTtl = std::chrono::seconds(2)) {
        auto& recorder = recorders_[name];
        NodeAgentConfig config = configFor(name, replicas);
        config.leaseTtl = leaseTtl;
        agents_[name] = std::make_unique<NodeAgent>(
            config, recorder.onState(), recorder.onLeaseLost(), std::move(statusSource));
        return recorder;
    }

    void stop(const std::string& name) { agents_.erase(name); }

    EtcdClient& client() {
        if (!client_) {
            client_ = std::make_unique<EtcdClient>(etcd().endpoint());
        }
        return *client_;
    }

    // Waits until etcd says `node` has acted on map `revision`.
    bool statusReaches(const std::string& node, std::uint64_t revision) {
        const auto acted = [&] {
            const ClusterView view = readClusterView(keys_, client().getPrefix(keys_.all()));
            const auto found = view.statuses.find(node);
            return found != view.statuses.end() && found->second.mapRevision == revision;
        };
        // The status key changes once the node has acted: wait for it
        // rather than poll etcd in a tight loop.
        return kvexec::test::pollUntil(acted, kEtcdDeadline,
                                       [&] { watchOnce(keys_.status(node)); });
    }

    // Waits until the leader has deleted the rebalance request.
    bool rebalanceRequestEnds() {
        return kvexec::test::waitUntil([&] { return !client().get(keys_.rebalance()); },
                                       kEtcdDeadline, std::chrono::milliseconds(20));
    }

    const ClusterKeys keys_{"/kvexec/agent-test"};
    std::chrono::milliseconds takeoverTimeout_ = NodeAgentConfig{}.takeoverTimeout;
    std::map<std::string, StateRecorder> recorders_;
    std::map<std::string, std::unique_ptr<NodeAgent>> agents_;

  private:
    // Returns after the next change of `key` or a short while, whichever
    // comes first (the change may have come before the watch opened).
    void watchOnce(const std::string& key) {
        std::mutex mutex;
        std::condition_variable changed;
        bool seen = false;
        auto watch = client().watchPrefix(key, 0, [&](const WatchEvent&) {
            std::lock_guard lock(mutex);
            seen = true;
            changed.notify_all();
        });
        std::unique_lock lock(mutex);
        changed.wait_for(lock, std::chrono::milliseconds(200), [&] { return seen; });
        lock.unlock();
        watch->stop();
    }

    std::unique_ptr<EtcdClient> client_;
    int ports_ = 0;
};

TEST_F(NodeAgentTest, OneNodeGetsEveryVBucketActive) {
    StateRecorder& recorder = start("n0");
    ASSERT_TRUE(recorder.waitFor(mapOver({"n0"})));
    const ClusterState state = recorder.latest();
    EXPECT_EQ(state.leader, "n0");
    EXPECT_EQ(state.addresses.at("n0"), agents_["n0"]->config().address);
    const auto changes = vbucketChanges(*state.map, "n0");
    ASSERT_EQ(changes.size(), kVBuckets);
    for (const auto& change : changes) {
        EXPECT_EQ(change.role, VBucketRole::Active) << change.vbid;
        EXPECT_EQ(change.chain, std::vector<std::string>{"n0"});
    }
    EXPECT_TRUE(statusReaches("n0", state.map->revision));
}

TEST_F(NodeAgentTest, ThreeNodesWithOneReplicaSeeTheSameBalancedMap) {
    for (const char* name : {"n0", "n1", "n2"}) {
        start(name, 1);
    }
    const std::vector<std::string> all = {"n0", "n1", "n2"};
    for (auto& [name, recorder] : recorders_) {
        ASSERT_TRUE(recorder.waitFor(mapOver(all))) << name;
    }
    const VBucketMap map = *recorders_["n0"].latest().map;
    for (auto& [name, recorder] : recorders_) {
        EXPECT_EQ(*recorder.latest().map, map) << name;  // the same revision too
        EXPECT_EQ(recorder.latest().addresses.size(), 3u) << name;
        EXPECT_TRUE(statusReaches(name, map.revision)) << name;
    }
    EXPECT_EQ(map.numReplicas, 1u);
    for (const auto& chain : map.chains) {
        ASSERT_EQ(chain.size(), 2u);
        EXPECT_NE(chain[0], kNoNode);
        EXPECT_NE(chain[1], kNoNode);
        EXPECT_NE(chain[0], chain[1]);
    }
    for (const std::string& node : all) {
        const NodeVBuckets held = vbucketsOf(map, node);
        EXPECT_GE(held.active.size(), kVBuckets / 3) << node;
        EXPECT_LE(held.active.size(), kVBuckets / 3 + 1) << node;
        EXPECT_GE(held.replica.size(), kVBuckets / 3) << node;
        EXPECT_LE(held.replica.size(), kVBuckets / 3 + 1) << node;
    }
}

TEST_F(NodeAgentTest, ANodeThatStopsLeavesAndTheLeaderMapsWithoutIt) {
    start("n0", 1);
    ASSERT_TRUE(recorders_["n0"].waitFor(mapOver({"n0"})));  // n0 leads
    start("n1", 1);
    start("n2", 1);
    for (auto& [name, recorder] : recorders_) {
        ASSERT_TRUE(recorder.waitFor(mapOver({"n0", "n1", "n2"}))) << name;
    }
    const std::uint64_t before = recorders_["n0"].latest().map->revision;
    stop("n2");
    for (const char* name : {"n0", "n1"}) {
        ASSERT_TRUE(recorders_[name].waitFor(mapOver({"n0", "n1"}))) << name;
        EXPECT_GT(recorders_[name].latest().map->revision, before);
        EXPECT_EQ(recorders_[name].latest().leader, "n0");
    }
    for (const auto& change : vbucketChanges(*recorders_["n0"].latest().map, "n0")) {
        EXPECT_NE(change.role, VBucketRole::Dead);  // two nodes, one replica: n0 holds all
    }
}

TEST_F(NodeAgentTest, TheLeaderStoppingHandsOverToAnotherThatPublishes) {
    start("n0", 1);
    ASSERT_TRUE(recorders_["n0"].waitFor(mapOver({"n0"})));
    start("n1", 1);
    start("n2", 1);
    for (auto& [name, recorder] : recorders_) {
        ASSERT_TRUE(recorder.waitFor(mapOver({"n0", "n1", "n2"}))) << name;
    }
    ASSERT_EQ(recorders_["n1"].latest().leader, "n0");
    const std::uint64_t before = recorders_["n1"].latest().map->revision;
    stop("n0");
    for (const char* name : {"n1", "n2"}) {
        // Until applied everywhere, the two may see that at different times.
        ASSERT_TRUE(recorders_[name].waitFor([](const ClusterState& state) {
            return mapOver({"n1", "n2"})(state) && state.leader && *state.leader != "n0" &&
                   state.appliedEverywhere == state.map->revision;
        })) << name;
        EXPECT_GT(recorders_[name].latest().map->revision, before);
    }
    EXPECT_EQ(recorders_["n1"].latest(), recorders_["n2"].latest());
}

TEST_F(NodeAgentTest, ALostLeaseIsReportedAndTheNodeJoinsAgain) {
    StateRecorder& recorder = start("n0");
    // Settled: the map applied everywhere (its last delivery until the
    // lease goes), so that what comes after `before` is the rejoin's.
    ASSERT_TRUE(recorder.waitFor([](const ClusterState& state) {
        return mapOver({"n0"})(state) && state.appliedEverywhere == state.map->revision;
    }));
    const std::size_t before = recorder.delivered();
    // Someone else ends the lease (as etcd does when renewals stop).
    const auto nodeKey = client().get(keys_.node("n0"));
    ASSERT_TRUE(nodeKey);
    ASSERT_TRUE(client().revoke(nodeKey->lease));
    ASSERT_TRUE(recorder.waitForLeaseLost());
    // Joined again under a new lease, and the state delivered again.
    ASSERT_TRUE(recorder.waitFor(
        [&](const ClusterState& state) { return mapOver({"n0"})(state) && state.leader; }, before));
    const auto again = client().get(keys_.node("n0"));
    ASSERT_TRUE(again);
    EXPECT_NE(again->lease, nodeKey->lease);
}

// etcd stops answering (SIGSTOP: every call hangs until its timeout, the
// agent thread's status writes included): the node must have stopped
// acting before etcd could expire its lease, i.e. within the TTL of the
// last renewal it sent, which was before etcd stopped.
TEST_F(NodeAgentTest, AnEtcdThatStopsAnsweringFencesTheNodeBeforeItsLeaseCanExpire) {
    constexpr std::chrono::seconds kTtl{3};
    std::atomic<std::uint64_t> statusCalls{0};
    StateRecorder& recorder = start(
        "n0", 0,
        [&] {
            ReplicationStatus status;  // a new value each time: every refresh writes to etcd
            status.streamsOpen = statusCalls.fetch_add(1) + 1;
            return NodeAgent::NodeReport{status, 0};
        },
        kTtl);
    ASSERT_TRUE(recorder.waitFor(mapOver({"n0"})));
    ASSERT_EQ(::kill(etcd().pid(), SIGSTOP), 0);
    const auto stoppedAt = std::chrono::steady_clock::now();
    const bool lost = recorder.waitForLeaseLost();
    ::kill(etcd().pid(), SIGCONT);
    ASSERT_TRUE(lost);
    EXPECT_LT(recorder.firstLeaseLostAt() - stoppedAt, kTtl)
        << "fenced after etcd may have expired the lease";
}

// What a node of a rebalance publishes: its actives at `activeSeqno`, or
// at `pausedSeqno` once a map pauses one of them for a takeover, and its
// replica and incoming copies at `copySeqno`.
NodeAgent::StatusSource seqnosOf(StateRecorder& recorder, const std::string& node,
                                 std::uint64_t activeSeqno, std::uint64_t pausedSeqno,
                                 std::uint64_t copySeqno) {
    return [&recorder, node, activeSeqno, pausedSeqno, copySeqno] {
        ReplicationStatus status;
        const ClusterState state = recorder.latest();
        if (state.map) {
            const NodeVBuckets held = vbucketsOf(*state.map, node);
            for (const auto vb : held.active) {
                const bool paused =
                    vb < state.map->takeoverSince.size() && state.map->takeoverSince[vb] != 0;
                status.active.push_back({vb, paused ? pausedSeqno : activeSeqno});
            }
            for (const auto vb : held.replica) {
                status.replica.push_back({vb, copySeqno});
            }
        }
        return NodeAgent::NodeReport{status, 0};
    };
}

// A map with a takeover in flight.
bool takingOver(const ClusterState& state) {
    return state.map &&
           std::any_of(state.map->takeoverSince.begin(), state.map->takeoverSince.end(),
                       [](std::uint64_t since) { return since != 0; });
}

// A takeover the target never lets finish (the new copy stays short of
// what the active listed once it paused) would keep the active's clients
// in TMPFAIL for good; after the takeover timeout the leader cancels the
// rebalance, and the map it leaves holds no move.
TEST_F(NodeAgentTest, ATakeoverThatCannotFinishIsUndoneAfterItsTimeout) {
    takeoverTimeout_ = std::chrono::milliseconds(1000);
    StateRecorder& n0 = recorders_["n0"];
    StateRecorder& n1 = recorders_["n1"];
    start("n0", 0, seqnosOf(n0, "n0", 10, 20, 0));
    ASSERT_TRUE(n0.waitFor(mapOver({"n0"})));
    start("n1", 0, seqnosOf(n1, "n1", 10, 20, 10));
    ASSERT_TRUE(n1.waitFor(mapOver({"n0", "n1"})));
    const VBucketMap before = *n1.latest().map;
    ASSERT_TRUE(vbucketsOf(before, "n1").active.empty());

    client().put(keys_.rebalance(), encodeVBucketMap(rebalanceTarget(before, before.nodes)));
    ASSERT_TRUE(n1.waitFor(takingOver)) << "no takeover began";
    const auto pausedAt = std::chrono::steady_clock::now();
    ASSERT_TRUE(n1.waitFor([](const ClusterState& state) {
        return state.map && !hasMoves(*state.map);
    })) << "the takeover was never undone";
    EXPECT_GE(std::chrono::steady_clock::now() - pausedAt, std::chrono::milliseconds(500))
        << "cancelled before the timeout";
    EXPECT_TRUE(vbucketsOf(*n1.latest().map, "n1").active.empty()) << "a takeover finished";
    EXPECT_TRUE(rebalanceRequestEnds()) << "the rebalance request stayed";
}

// The elected node leaves while a takeover is in flight: the next one
// publishes a map over the nodes left that carries no move (the old active
// serves again), and ends the request, which had a node it no longer has.
TEST_F(NodeAgentTest, ALeaderThatLeavesMidRebalanceLeavesNoMoveInFlight) {
    takeoverTimeout_ = std::chrono::milliseconds(60'000);  // the move stays in flight
    for (const std::string node : {"n0", "n1", "n2"}) {
        StateRecorder& recorder = recorders_[node];
        start(node, 1, seqnosOf(recorder, node, 10, 20, 10));
        ASSERT_TRUE(recorder.waitFor([&](const ClusterState& state) {
            return state.map && std::count(state.map->nodes.begin(), state.map->nodes.end(), node);
        }));
    }
    StateRecorder& n2 = recorders_["n2"];
    ASSERT_TRUE(n2.waitFor(mapOver({"n0", "n1", "n2"})));
    ASSERT_EQ(n2.latest().leader, "n0");
    const VBucketMap before = *n2.latest().map;
    ASSERT_TRUE(vbucketsOf(before, "n2").active.empty()) << "n2 joined last";

    client().put(keys_.rebalance(), encodeVBucketMap(rebalanceTarget(before, before.nodes)));
    ASSERT_TRUE(n2.waitFor(takingOver)) << "no takeover began";
    stop("n0");
    ASSERT_TRUE(n2.waitFor([](const ClusterState& state) {
        return mapOver({"n1", "n2"})(state) && !hasMoves(*state.map) && state.leader;
    })) << "a move stayed in flight";
    EXPECT_TRUE(rebalanceRequestEnds()) << "the rebalance request stayed";
}

TEST_F(NodeAgentTest, StoppingRevokesTheLeaseAndItsKeys) {
    StateRecorder& recorder = start("n0");
    ASSERT_TRUE(recorder.waitFor(mapOver({"n0"})));
    stop("n0");
    const ClusterView view = readClusterView(keys_, client().getPrefix(keys_.all()));
    EXPECT_TRUE(view.membership.nodes.empty());
    EXPECT_FALSE(view.membership.leader);
    EXPECT_TRUE(view.statuses.empty());
    EXPECT_TRUE(view.map);  // the map is the cluster's, not the node's
}

TEST(NodeAgentConfigTest, AnUnreachableEtcdFailsTheConstructor) {
    NodeAgentConfig config;
    config.etcd = parseEtcdUrl("http://127.0.0.1:1");
    config.name = "n0";
    config.etcdTimeout = std::chrono::milliseconds(500);
    EXPECT_THROW(NodeAgent(config, [](const ClusterState&) { return true; }), EtcdError);
    config.name.clear();
    EXPECT_THROW(NodeAgent(config, [](const ClusterState&) { return true; }),
                 std::invalid_argument);
}

}  // namespace
}  // namespace kvexec::cluster::test
