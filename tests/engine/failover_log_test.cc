// The failover log and the producer's rollback decision, case by case
// (kv_engine's rollback.md lists the cases).
#include "kvexec/engine/failover_log.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace kvexec::engine {
namespace {

const RollbackDecision kResume{};
RollbackDecision rollbackTo(Seqno s) {
    return {true, s};
}
StreamStart at(std::uint64_t uuid, Seqno start, Seqno snapStart, Seqno snapEnd) {
    return {uuid, start, snapStart, snapEnd};
}

// Branch 0xA from 0, 0xB from 100, 0xC (current) from 250; high seqno 300.
FailoverLog threeBranches() {
    return FailoverLog({{0xC, 250}, {0xB, 100}, {0xA, 0}});
}

TEST(FailoverLog, BranchAddsTheNewestEntryAndDropsHistoryAboveIt) {
    FailoverLog log(0xA);
    log.branch(0xB, 100);
    log.branch(0xC, 250);
    EXPECT_EQ(log.uuid(), 0xCu);
    // A copy rolled back to 150 and became active: 0xC's branch is gone.
    log.branch(0xD, 150);
    EXPECT_EQ(log.entries(), (std::vector<FailoverEntry>{{0xD, 150}, {0xB, 100}, {0xA, 0}}));
}

TEST(FailoverLog, KeepsAtMostItsBoundOfEntries) {
    FailoverLog log(1);
    for (std::uint64_t i = 2; i <= 40; ++i) {
        log.branch(i, i * 10);
    }
    ASSERT_EQ(log.entries().size(), FailoverLog::kMaxEntries);
    EXPECT_EQ(log.uuid(), 40u);
}

TEST(FailoverLog, RefusesMalformedEntries) {
    EXPECT_THROW(FailoverLog(std::vector<FailoverEntry>{}), std::invalid_argument);
    EXPECT_THROW(FailoverLog({{0, 5}}), std::invalid_argument);
    EXPECT_THROW(FailoverLog({{1, 5}, {2, 9}}), std::invalid_argument);
}

TEST(Rollback, AConsumerWithNoHistoryStartsAnywhere) {
    EXPECT_EQ(decideRollback(threeBranches(), 300, 0, at(0, 0, 0, 0)), kResume);
}

TEST(Rollback, AnUnknownBranchRollsBackToZero) {
    EXPECT_EQ(decideRollback(threeBranches(), 300, 0, at(0xF, 50, 40, 60)), rollbackTo(0));
    // Even from seqno 0: its history at 0 may differ.
    EXPECT_EQ(decideRollback(threeBranches(), 300, 0, at(0xF, 0, 0, 0)), rollbackTo(0));
}

TEST(Rollback, ASnapshotBelowThePurgeSeqnoRollsBackToZero) {
    EXPECT_EQ(decideRollback(threeBranches(), 300, 120, at(0xC, 280, 110, 290)), rollbackTo(0));
}

// A consumer inside its first disk snapshot (from 0) held nothing before
// it: only what it got counts, and what it got is past the purge seqno.
TEST(Rollback, InsideAFirstDiskSnapshotOnlyWhatItGotCountsAgainstThePurgeSeqno) {
    EXPECT_EQ(decideRollback(threeBranches(), 300, 120, at(0xC, 150, 0, 290)), kResume);
    EXPECT_EQ(decideRollback(threeBranches(), 300, 120, at(0xC, 100, 0, 290)), rollbackTo(0));
    // A copy from before the snapshot may miss deletions below the purge.
    EXPECT_EQ(decideRollback(threeBranches(), 300, 120, at(0xC, 150, 10, 290)), rollbackTo(0));
}

TEST(Rollback, ALaggingConsumerOnTheCurrentBranchResumes) {
    EXPECT_EQ(decideRollback(threeBranches(), 300, 0, at(0xC, 280, 270, 290)), kResume);
    EXPECT_EQ(decideRollback(threeBranches(), 300, 0, at(0xC, 300, 290, 300)), kResume);
}

TEST(Rollback, AnOldBranchResumesUpToWhereItEnded) {
    // 0xB's history is shared up to 250, where 0xC began.
    EXPECT_EQ(decideRollback(threeBranches(), 300, 0, at(0xB, 200, 190, 210)), kResume);
}

TEST(Rollback, AConsumerAheadOfTheSharedHistoryRollsBackToItsEnd) {
    // 0xB continued past 250 on the consumer: not on this producer.
    EXPECT_EQ(decideRollback(threeBranches(), 300, 0, at(0xB, 270, 260, 280)), rollbackTo(250));
    // Ahead of the producer's own high seqno on its current branch.
    EXPECT_EQ(decideRollback(threeBranches(), 300, 0, at(0xC, 320, 310, 330)), rollbackTo(300));
}

TEST(Rollback, ASnapshotStraddlingTheEndRollsBackToItsStart) {
    EXPECT_EQ(decideRollback(threeBranches(), 300, 0, at(0xB, 245, 240, 260)), rollbackTo(240));
}

TEST(Rollback, AConsumerAtASnapshotsEndHasAllOfIt) {
    // start == snapEnd: the snapshot [240, 250] is complete on the consumer.
    EXPECT_EQ(decideRollback(threeBranches(), 300, 0, at(0xB, 250, 240, 250)), kResume);
    // start == snapStart: it has none of [250, 260] yet, only up to 250.
    EXPECT_EQ(decideRollback(threeBranches(), 300, 0, at(0xB, 250, 250, 260)), kResume);
}

TEST(Rollback, AStartOutsideItsSnapshotIsMalformed) {
    EXPECT_TRUE(validStreamStart(at(1, 5, 5, 5)));
    EXPECT_FALSE(validStreamStart(at(1, 5, 6, 9)));
    EXPECT_FALSE(validStreamStart(at(1, 10, 6, 9)));
}

}  // namespace
}  // namespace kvexec::engine
