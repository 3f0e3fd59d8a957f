// The durability state machine alone: no bucket, no pool, no clock; every
// input is given and every decision read back.
#include "engine/durability_monitor.h"

#include <gtest/gtest.h>

namespace kvexec::engine {
namespace {

using Outcome = DurabilityDecision::Outcome;
using namespace std::chrono_literals;

const Clock::time_point kStart{};
const Clock::time_point kDeadline = kStart + 10s;

DurabilityDecision commit(Seqno s) {
    return {s, Outcome::Commit};
}
DurabilityDecision abort(Seqno s) {
    return {s, Outcome::Abort};
}
std::vector<DurabilityDecision> none() {
    return {};
}

DurabilityMonitor chain(std::vector<std::string> nodes) {
    DurabilityMonitor monitor("a");
    EXPECT_EQ(monitor.setTopology({std::move(nodes)}), Status::Success);
    return monitor;
}

TEST(DurabilityMonitor, SingleNodeCommitsMajorityWhenQueuedAndPersistLevelsWhenPersisted) {
    DurabilityMonitor monitor;  // the chain [local]
    monitor.addPrepare(1, DurabilityLevel::Majority, kDeadline);
    monitor.addPrepare(2, DurabilityLevel::PersistToMajority, kDeadline);
    monitor.addPrepare(3, DurabilityLevel::Majority, kDeadline);
    monitor.localProgress(3, 0);
    // 3 waits behind 2: a node's position stops at its first unpersisted
    // persist-level prepare.
    EXPECT_EQ(monitor.takeDecisions(), std::vector{commit(1)});
    EXPECT_EQ(monitor.localHighPrepared(), 1u);
    monitor.localProgress(3, 2);
    EXPECT_EQ(monitor.takeDecisions(), (std::vector{commit(2), commit(3)}));
    EXPECT_EQ(monitor.pending(), 0u);
    EXPECT_EQ(monitor.highCompletedSeqno(), 3u);
}

TEST(DurabilityMonitor, OneReplicaNeedsBothNodes) {
    auto monitor = chain({"a", "b"});
    monitor.addPrepare(5, DurabilityLevel::Majority, kDeadline);
    monitor.localProgress(5, 0);
    EXPECT_EQ(monitor.takeDecisions(), none());
    EXPECT_TRUE(monitor.acknowledge("b", 5));
    EXPECT_EQ(monitor.takeDecisions(), std::vector{commit(5)});
}

TEST(DurabilityMonitor, TwoReplicasNeedTwoOfThreeAndTheActiveAlwaysCounts) {
    auto monitor = chain({"a", "b", "c"});
    monitor.addPrepare(1, DurabilityLevel::Majority, kDeadline);
    EXPECT_TRUE(monitor.acknowledge("b", 1));
    EXPECT_TRUE(monitor.acknowledge("c", 1));
    // Two replicas hold it but the active has not queued it yet.
    EXPECT_EQ(monitor.takeDecisions(), none());
    monitor.localProgress(1, 0);
    EXPECT_EQ(monitor.takeDecisions(), std::vector{commit(1)});
}

TEST(DurabilityMonitor, MajorityAndPersistToActiveWaitsForTheActivesDiskOnly) {
    auto monitor = chain({"a", "b"});
    monitor.addPrepare(1, DurabilityLevel::MajorityAndPersistToActive, kDeadline);
    monitor.localProgress(1, 0);
    monitor.acknowledge("b", 1);  // the replica holds it in memory
    EXPECT_EQ(monitor.takeDecisions(), none());
    monitor.localProgress(1, 1);
    EXPECT_EQ(monitor.takeDecisions(), std::vector{commit(1)});
}

TEST(DurabilityMonitor, PersistToMajorityCountsTheReplicasPersistedPosition) {
    // The replica computes its own position: it does not pass an
    // unpersisted PersistToMajority prepare.
    struct P {
        DurabilityLevel level;
    };
    const std::map<Seqno, P> replica{{1, {DurabilityLevel::PersistToMajority}},
                                     {2, {DurabilityLevel::Majority}}};
    EXPECT_EQ(highPrepared(replica, 2, 0, replicaPersists), 0u);
    EXPECT_EQ(highPrepared(replica, 2, 1, replicaPersists), 2u);
    // MajorityAndPersistToActive does not make the replica persist.
    const std::map<Seqno, P> toActive{{1, {DurabilityLevel::MajorityAndPersistToActive}}};
    EXPECT_EQ(highPrepared(toActive, 1, 0, replicaPersists), 1u);

    auto monitor = chain({"a", "b"});
    monitor.addPrepare(1, DurabilityLevel::PersistToMajority, kDeadline);
    monitor.localProgress(1, 1);
    monitor.acknowledge("b", highPrepared(replica, 2, 0, replicaPersists));
    EXPECT_EQ(monitor.takeDecisions(), none());
    monitor.acknowledge("b", highPrepared(replica, 2, 1, replicaPersists));
    EXPECT_EQ(monitor.takeDecisions(), std::vector{commit(1)});
}

TEST(DurabilityMonitor, ExpiredPreparesAbortAndUnblockTheOnesBehind) {
    auto monitor = chain({"a", "b"});
    monitor.addPrepare(1, DurabilityLevel::PersistToMajority, kStart + 1s);
    monitor.addPrepare(2, DurabilityLevel::Majority, kStart + 5s);
    monitor.localProgress(2, 0);
    monitor.acknowledge("b", 2);                 // b persisted 1 and holds 2
    EXPECT_EQ(monitor.takeDecisions(), none());  // the active has not persisted 1
    EXPECT_EQ(monitor.nextDeadline(), kStart + 1s);
    monitor.expire(kStart + 999ms);
    EXPECT_EQ(monitor.takeDecisions(), none());
    monitor.expire(kStart + 1s);
    EXPECT_EQ(monitor.takeDecisions(), (std::vector{abort(1), commit(2)}));
    EXPECT_FALSE(monitor.nextDeadline().has_value());
}

TEST(DurabilityMonitor, AStoppedReplicaMakesEveryWriteTimeOut) {
    auto monitor = chain({"a", "b"});
    for (Seqno s = 1; s <= 3; ++s) {
        monitor.addPrepare(s, DurabilityLevel::Majority, kStart + std::chrono::seconds(s));
    }
    monitor.localProgress(3, 3);
    monitor.expire(kStart + 10s);
    EXPECT_EQ(monitor.takeDecisions(), (std::vector{abort(1), abort(2), abort(3)}));
}

TEST(DurabilityMonitor, AcknowledgementsOnlyMoveForwardAndOnlyFromReplicasInTheChain) {
    auto monitor = chain({"a", "b", "c"});
    EXPECT_FALSE(monitor.acknowledge("z", 9));
    EXPECT_FALSE(monitor.acknowledge("a", 9));  // the active's position is its own
    EXPECT_TRUE(monitor.acknowledge("b", 7));
    EXPECT_TRUE(monitor.acknowledge("b", 3));
    EXPECT_EQ(monitor.acknowledged("b"), 7u);
}

TEST(DurabilityMonitor, ATopologyChangeDecidesWithTheNewChain) {
    auto monitor = chain({"a", "b", "c"});
    monitor.addPrepare(1, DurabilityLevel::Majority, kDeadline);
    monitor.localProgress(1, 0);
    monitor.acknowledge("c", 1);
    EXPECT_EQ(monitor.takeDecisions(), std::vector{commit(1)});
    monitor.addPrepare(2, DurabilityLevel::Majority, kDeadline);
    monitor.localProgress(2, 0);
    // c leaves; d, which acknowledged nothing yet, replaces it.
    ASSERT_EQ(monitor.setTopology({{"a", "b", "d"}}), Status::Success);
    EXPECT_EQ(monitor.acknowledged("c"), 0u);
    EXPECT_FALSE(monitor.acknowledge("c", 2));
    EXPECT_EQ(monitor.takeDecisions(), none());
    EXPECT_TRUE(monitor.acknowledge("d", 2));
    EXPECT_EQ(monitor.takeDecisions(), std::vector{commit(2)});
}

TEST(DurabilityMonitor, TooFewNodesForAMajorityIsImpossible) {
    auto single = chain({"a"});
    EXPECT_EQ(single.checkPossible(), Status::Success);
    auto missingReplica = chain({"a", ""});
    EXPECT_EQ(missingReplica.checkPossible(), Status::DurabilityImpossible);
    auto oneOfThreeMissing = chain({"a", "b", ""});
    EXPECT_EQ(oneOfThreeMissing.checkPossible(), Status::Success);
}

TEST(DurabilityMonitor, RefusesAChainThisNodeDoesNotLeadOrThatNamesANodeTwice) {
    DurabilityMonitor monitor("a");
    EXPECT_EQ(monitor.setTopology({{}}), Status::Invalid);
    EXPECT_EQ(monitor.setTopology({{"b", "a"}}), Status::Invalid);
    EXPECT_EQ(monitor.setTopology({{"a", "b", "b"}}), Status::Invalid);
    EXPECT_EQ(monitor.setTopology({{"a", "", ""}}), Status::Success);
}

TEST(DurabilityMonitor, AForgottenPrepareIsNeitherCommittedNorAborted) {
    DurabilityMonitor monitor;
    monitor.addPrepare(1, DurabilityLevel::PersistToMajority, kStart + 1s);
    monitor.addPrepare(2, DurabilityLevel::Majority, kDeadline);
    monitor.localProgress(2, 0);
    monitor.forget(1);
    monitor.localProgress(2, 0);
    monitor.expire(kStart + 2s);
    EXPECT_EQ(monitor.takeDecisions(), std::vector{commit(2)});
}

}  // namespace
}  // namespace kvexec::engine
