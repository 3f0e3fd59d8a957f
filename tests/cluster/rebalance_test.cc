// rebalanceStep (cluster/rebalance.h) driven the way the leader drives it,
// with the nodes' statuses simulated: a vBucket moves only once its new
// copies caught up, every chain change waits for the active to stop and
// the whole new chain to hold all it had, a copy whose seqno is unknown is
// waited for, at most kMovesInFlight move at once, and the map ends as the
// target. A changed node set cancels.
#include <gtest/gtest.h>

#include "cluster/rebalance.h"
#include "cluster/rebalance_plan.h"

namespace kvexec::cluster {
namespace {

// Every node of `map` says it applied it and holds `seqno` of every
// vBucket it is active, replica or incoming for.
std::map<std::string, NodeStatus> everyoneAt(const VBucketMap& map, std::uint64_t seqno) {
    std::map<std::string, NodeStatus> statuses;
    for (const std::string& node : map.nodes) {
        const NodeVBuckets held = vbucketsOf(map, node);
        ReplicationStatus replication;
        for (const auto vb : held.active) {
            replication.active.push_back({vb, seqno});
        }
        for (const auto vb : held.replica) {
            replication.replica.push_back({vb, seqno});
        }
        statuses[node] = NodeStatus(map.revision, replication);
    }
    return statuses;
}

void setSeqno(std::map<std::string, NodeStatus>& statuses, const std::string& node,
              std::uint16_t vb, std::uint64_t seqno) {
    auto& replication = *statuses.at(node).replication;
    for (auto* list : {&replication.active, &replication.replica}) {
        for (auto& entry : *list) {
            if (entry.vbid == vb) {
                entry.seqno = seqno;
            }
        }
    }
}

struct Joined {
    VBucketMap current;  // three nodes named, the third holding nothing yet
    VBucketMap target;
};

Joined aThirdNodeJoins(std::uint16_t vbuckets) {
    const VBucketMap two = computeMap({"n0", "n1"}, vbuckets, 1);
    Joined joined;
    joined.current = computeMap({"n0", "n1", "n2"}, vbuckets, 1, &two);
    joined.target = rebalanceTarget(joined.current, joined.current.nodes);
    return joined;
}

std::size_t movesIn(const VBucketMap& map) {
    std::size_t moving = 0;
    for (std::size_t vb = 0; vb < map.chains.size(); ++vb) {
        moving += isMoving(map, vb) ? 1 : 0;
    }
    return moving;
}

TEST(RebalanceStepTest, EndsAsTheTargetAFewMovesAtATime) {
    Joined joined = aThirdNodeJoins(32);
    VBucketMap map = joined.current;
    ASSERT_GT(joined.target.chains.size() - chainsInPlace(map, joined.target), kMovesInFlight);
    for (int round = 0; round < 200; ++round) {
        const RebalanceStep step = rebalanceStep(map, joined.target, everyoneAt(map, 10));
        ASSERT_TRUE(step.cancelled.empty()) << step.cancelled;
        if (step.next) {
            EXPECT_EQ(step.next->revision, map.revision + 1);
            EXPECT_LE(movesIn(*step.next), kMovesInFlight);
            map = *step.next;
        }
        if (step.finished) {
            EXPECT_EQ(map.chains, joined.target.chains);
            EXPECT_FALSE(hasMoves(map));
            return;
        }
        ASSERT_TRUE(step.next) << "stuck at round " << round;
    }
    FAIL() << "did not finish";
}

// Follow one vBucket whose active moves to n2.
TEST(RebalanceStepTest, ATakeoverWaitsForTheCopyAndForTheOldActiveToStop) {
    Joined joined = aThirdNodeJoins(8);
    const int n2 = 2;
    std::size_t vb = 0;
    while (joined.target.chains[vb][0] != n2) {
        ++vb;
    }
    const auto vbid = static_cast<std::uint16_t>(vb);
    const std::string oldActive = joined.current.nodes[joined.current.chains[vb][0]];
    // 1: n2 builds a copy.
    auto step = rebalanceStep(joined.current, joined.target, everyoneAt(joined.current, 10), 8);
    ASSERT_TRUE(step.next);
    VBucketMap map = *step.next;
    ASSERT_EQ(map.incoming[vb], std::vector<int>{n2});
    // Behind the active: nothing changes for it.
    auto statuses = everyoneAt(map, 10);
    setSeqno(statuses, "n2", vbid, 9);
    step = rebalanceStep(map, joined.target, statuses, 8);
    if (step.next) {
        EXPECT_EQ(step.next->incoming[vb], std::vector<int>{n2});
        EXPECT_EQ(step.next->takeoverSince[vb], 0u);
    }
    // 2: caught up: the active hands over from the next revision.
    step = rebalanceStep(map, joined.target, everyoneAt(map, 10), 8);
    ASSERT_TRUE(step.next);
    map = *step.next;
    ASSERT_EQ(map.takeoverSince[vb], map.revision);
    EXPECT_EQ(map.chains[vb], joined.current.chains[vb]) << "the active moved before handing over";
    // The old active has not applied it yet (its status is older): wait.
    statuses = everyoneAt(map, 10);
    statuses.at(oldActive).mapRevision = map.revision - 1;
    step = rebalanceStep(map, joined.target, statuses, 8);
    if (step.next) {
        EXPECT_EQ(step.next->chains[vb], map.chains[vb]);
    }
    // It applied it, having taken one more write before it stopped.
    statuses = everyoneAt(map, 10);
    setSeqno(statuses, oldActive, vbid, 11);
    step = rebalanceStep(map, joined.target, statuses, 8);
    if (step.next) {
        EXPECT_EQ(step.next->chains[vb], map.chains[vb]) << "n2 lacks seqno 11";
    }
    // 3: the target chain holds it too: n2 leads.
    for (const int node : joined.target.chains[vb]) {
        setSeqno(statuses, joined.target.nodes[node], vbid, 11);
    }
    step = rebalanceStep(map, joined.target, statuses, 8);
    ASSERT_TRUE(step.next);
    EXPECT_EQ(step.next->chains[vb], joined.target.chains[vb]);
    EXPECT_EQ(step.next->takeoverSince.empty() ? 0u : step.next->takeoverSince[vb], 0u);
}

// A chain change where the active stays (a replica moves) pauses too, and
// ends only once the new replica holds the active's last seqno; a copy
// that lists no seqno (its stream not open yet) is waited for.
TEST(RebalanceStepTest, AReplicaMoveWaitsForTheNewCopyToHoldTheLastWrite) {
    Joined joined = aThirdNodeJoins(8);
    std::size_t vb = 0;
    while (joined.target.chains[vb][0] != joined.current.chains[vb][0] ||
           joined.target.chains[vb] == joined.current.chains[vb]) {
        ++vb;
        ASSERT_LT(vb, 8u) << "no replica-only move in this plan";
    }
    const auto vbid = static_cast<std::uint16_t>(vb);
    const std::string active = joined.current.nodes[joined.current.chains[vb][0]];
    const std::string copy = joined.target.nodes[joined.target.chains[vb][1]];
    auto step = rebalanceStep(joined.current, joined.target, everyoneAt(joined.current, 10), 8);
    ASSERT_TRUE(step.next);
    VBucketMap map = *step.next;
    // Its stream is not open yet: no seqno listed, nothing moves.
    auto statuses = everyoneAt(map, 10);
    auto& replica = statuses.at(copy).replication->replica;
    std::erase_if(replica, [&](const VBucketSeqno& entry) { return entry.vbid == vbid; });
    step = rebalanceStep(map, joined.target, statuses, 8);
    if (step.next) {
        EXPECT_EQ(step.next->takeoverSince[vb], 0u);
    }
    step = rebalanceStep(map, joined.target, everyoneAt(map, 10), 8);
    ASSERT_TRUE(step.next);
    map = *step.next;
    ASSERT_NE(map.takeoverSince[vb], 0u) << "a replica move pauses the writes too";
    statuses = everyoneAt(map, 10);
    setSeqno(statuses, active, vbid, 12);  // two more before it stopped
    step = rebalanceStep(map, joined.target, statuses, 8);
    if (step.next) {
        EXPECT_EQ(step.next->chains[vb], map.chains[vb]) << "the new copy lacks seqnos 11-12";
    }
    setSeqno(statuses, copy, vbid, 12);
    step = rebalanceStep(map, joined.target, statuses, 8);
    ASSERT_TRUE(step.next);
    EXPECT_EQ(step.next->chains[vb], joined.target.chains[vb]);
}

TEST(RebalanceStepTest, ANodeSetThatChangedCancels) {
    Joined joined = aThirdNodeJoins(8);
    const VBucketMap withoutN2 = computeMap({"n0", "n1"}, 8, 1, &joined.current);
    const RebalanceStep step = rebalanceStep(withoutN2, joined.target, everyoneAt(withoutN2, 1));
    EXPECT_FALSE(step.cancelled.empty());
    EXPECT_FALSE(step.next);
}

// A takeover pauses its vBucket's clients: one that a node of the target
// chain never lets finish is overdue after the timeout, counted from when
// the watch first saw it, and a new takeover of the same vBucket starts
// its own count.
TEST(TakeoverWatchTest, ATakeoverThatDoesNotFinishInTimeIsOverdue) {
    using namespace std::chrono_literals;
    TakeoverWatch watch(10s);
    VBucketMap map = computeMap({"a", "b"}, 4, 1);
    const TakeoverWatch::Clock::time_point t0{};
    EXPECT_EQ(watch.overdue(map, t0), "");
    EXPECT_FALSE(watch.nextDeadline());

    map.revision = 5;
    map.incoming.resize(4);
    map.takeoverSince = {0, 5, 0, 0};
    EXPECT_EQ(watch.overdue(map, t0 + 1s), "");
    EXPECT_EQ(watch.nextDeadline(), t0 + 11s);
    EXPECT_EQ(watch.overdue(map, t0 + 10s), "");
    const std::string why = watch.overdue(map, t0 + 11s);
    EXPECT_NE(why.find("vb:1"), std::string::npos) << why;

    map.takeoverSince = {0, 9, 0, 0};  // finished, and taken over again
    EXPECT_EQ(watch.overdue(map, t0 + 12s), "");
    EXPECT_EQ(watch.nextDeadline(), t0 + 22s);
    map.takeoverSince.clear();
    map.incoming.clear();
    EXPECT_EQ(watch.overdue(map, t0 + 30s), "");
    EXPECT_FALSE(watch.nextDeadline());
}

}  // namespace
}  // namespace kvexec::cluster
