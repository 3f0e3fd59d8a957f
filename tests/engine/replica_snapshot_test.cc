// A replica inside a snapshot its active read from disk: such a snapshot
// holds only each key's latest version, so the replica's copy is a state of
// the active's history only at the snapshot's ends. It persists,
// acknowledges and resumes as of the snapshot's start until the end
// arrives (Bucket::replicaResumePoint), so that a restart never resumes
// from a copy that misses an older version, and an active whose history
// left this one inside the snapshot rolls it back to the start.
#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <vector>

#include "replication_fixture.h"

namespace kvexec::engine {
namespace {

using test::pending;
using test::setRequest;

class ReplicaSnapshotTest : public ReplicationTest {
  protected:
    // The active's replication stream from 0, kept instead of applied.
    std::vector<StreamEvent> backfill() {
        std::vector<StreamEvent> seen;
        auto held = bucket->openReplicationStream(
            {kVb, 0}, [&seen](const StreamEvent& e) { seen.push_back(e); });
        EXPECT_NE(held, nullptr);
        settle();
        held->close();
        return seen;
    }
    void apply(const std::vector<StreamEvent>& events, std::size_t count) {
        for (std::size_t i = 0; i < count; ++i) {
            ASSERT_EQ(replica->applyReplicated(kVb, events[i]), Status::Success) << i;
        }
    }
    void store(const std::string& key, const std::string& value) {
        ASSERT_EQ(test::storeNow(*bucket, setRequest(kVb, key, value))->status, Status::Success);
    }
};

TEST_F(ReplicaSnapshotTest, APartOfADiskSnapshotIsNeitherPersistedNorResumedFrom) {
    store("k", "old");  // 1: left out of the backfill, which has k's newer version
    store("x", "v");    // 2
    store("y", "v");    // 3
    store("k", "new");  // 4
    settle();
    const auto events = backfill();
    ASSERT_EQ(events.size(), 4u);
    ASSERT_TRUE(events[0].kind == StreamEventKind::Snapshot && events[0].fromDisk);
    ASSERT_EQ(events[0].snapEnd, 4u);

    apply(events, 3);  // the marker, x and y
    pool.runReady(TaskType::Writer);
    EXPECT_EQ(replica->observeSeqno(kVb).currentSeqno, 3u);
    EXPECT_EQ(replica->observeSeqno(kVb).persistedSeqno, 0u) << "a copy without k was persisted";
    const auto inside = replica->replicaResumePoint(kVb);
    ASSERT_TRUE(inside);
    EXPECT_EQ(inside->start, 3u);
    EXPECT_EQ(inside->snapStart, 0u);
    EXPECT_EQ(inside->snapEnd, 4u);

    // A crash now: the replica starts again from a whole copy (empty).
    test::TempDir copy;
    const auto crashed = openCrashCopy(copy, replicaConfig);
    EXPECT_EQ(crashed->observeSeqno(kVb).currentSeqno, 0u);

    apply({events[3]}, 1);
    pool.runReady(TaskType::Writer);
    EXPECT_EQ(replica->observeSeqno(kVb).persistedSeqno, 4u);
    const auto whole = replica->replicaResumePoint(kVb);
    ASSERT_TRUE(whole);
    EXPECT_EQ(whole->snapStart, 4u);
    EXPECT_EQ(whole->snapEnd, 4u);
    EXPECT_EQ(bucket->replicaResumePoint(kVb), std::nullopt) << "an active resumes nothing";
}

// The data loss the snapshot range prevents: the replica holds x (2) of a
// disk snapshot [1, 4] that left out k's first version (1). The active
// fails and the copy promoted in its place had only seqnos 1-2: k is "old"
// there. Asked from 2 as if that were whole, it would stream only what
// follows 2, and the replica would never get k at all.
TEST_F(ReplicaSnapshotTest, AHistoryThatLeftInsideADiskSnapshotRollsTheReplicaBackToItsStart) {
    store("k", "old");
    store("x", "v");
    store("k", "new");
    settle();
    const auto activeLog = *bucket->failoverLog(kVb);
    ASSERT_EQ(replica->adoptFailoverLog(kVb, activeLog), Status::Success);
    const auto events = backfill();
    ASSERT_EQ(events.size(), 3u);
    apply(events, 2);  // the marker and x

    const FailoverLog promoted({{activeLog.uuid() + 1, 2}, {activeLog.uuid(), 0}});
    const auto point = replica->replicaResumePoint(kVb);
    ASSERT_TRUE(point);
    EXPECT_EQ(point->uuid, activeLog.uuid());
    EXPECT_EQ(decideRollback(promoted, 2, 0, *point), (RollbackDecision{true, 0}));
    EXPECT_EQ(decideRollback(promoted, 2, 0, {activeLog.uuid(), 2, 2, 2}), RollbackDecision{})
        << "the request without its snapshot would have resumed";
}

// Inside a disk snapshot a prepare is not held yet: the copy around it
// may miss older versions. Its acknowledgement waits for the snapshot's end.
TEST_F(ReplicaSnapshotTest, APrepareInsideADiskSnapshotIsAcknowledgedAtItsEnd) {
    auto write = pending<MutationResult>();
    bucket->store(setRequest(kVb, "k", "v", DurabilityLevel::Majority), write->callback());  // 1
    store("x", "v");                                                                         // 2
    settle();
    ASSERT_FALSE(write->done());
    const auto events = backfill();
    ASSERT_EQ(events.size(), 3u);
    ASSERT_EQ(events[1].kind, StreamEventKind::Prepare);
    apply(events, 2);
    EXPECT_EQ(replica->replicaHighPrepared(kVb), 0u);
    EXPECT_TRUE(acks.empty());
    apply({events[2]}, 1);
    EXPECT_EQ(replica->replicaHighPrepared(kVb), 1u);
    EXPECT_EQ(acks, std::vector<Seqno>{1});
    settle();
    ASSERT_TRUE(write->done());
    EXPECT_EQ(write->result().status, Status::Success);
}

// A disk snapshot may lack tombstones its active purged: the replica takes
// the marker's purge seqno, and its flusher writes it (vbuckets.json)
// before the snapshot's items, so a crash never keeps the items without it.
TEST_F(ReplicaSnapshotTest, ADiskSnapshotsPurgeSeqnoIsSavedBeforeItsItems) {
    StreamEvent marker;
    marker.kind = StreamEventKind::Snapshot;
    marker.fromDisk = true;
    marker.snapStart = 0;
    marker.snapEnd = 5;
    marker.purgeSeqno = 4;
    StreamEvent kept;
    kept.item = Item{kVb, "kept", "v", ItemMeta{100, 5, 0, 0, 0, false}};
    apply({marker, kept}, 2);
    EXPECT_EQ(replica->observeSeqno(kVb).purgeSeqno, 4u);
    // While vbuckets.json cannot be written, no item is saved either.
    const auto blocker = replicaDir.path() / "vbuckets.json.tmp";
    std::filesystem::create_directory(blocker);
    ASSERT_EQ(pool.runReady(TaskType::Writer), 1u) << "the flusher alone";
    EXPECT_EQ(replica->observeSeqno(kVb).persistedSeqno, 0u) << "items before the purge seqno";
    std::filesystem::remove(blocker);
    ASSERT_NE(pool.runNext(TaskType::Writer), 0u);  // the flusher's retry
    test::TempDir copy;
    const auto crashed = openCrashCopy(copy, replicaConfig);
    ASSERT_EQ(crashed->observeSeqno(kVb).persistedSeqno, 5u);
    EXPECT_EQ(crashed->observeSeqno(kVb).purgeSeqno, 4u);
    // A memory snapshot carries none, and a smaller one changes nothing.
    marker.fromDisk = false;
    marker.purgeSeqno = 0;
    marker.snapStart = marker.snapEnd = 6;
    apply({marker}, 1);
    EXPECT_EQ(replica->observeSeqno(kVb).purgeSeqno, 4u);
}

// The backfill takes the file as its scan found it, past the seqno the
// stream registered at: here the prepare on disk then (1) was committed (2)
// and replaced by a new prepare of its key (3) before the scan ran. Cut at
// the registration, the snapshot had nothing of k and the memory part then
// brought a commit of a prepare the replica never got (refused: Invalid).
TEST_F(ReplicaSnapshotTest, ABackfillTakesTheFileAsItsScanFoundIt) {
    auto first = pending<MutationResult>();
    bucket->store(setRequest(kVb, "k", "v1", DurabilityLevel::Majority), first->callback());
    pool.runReady(TaskType::Writer);  // the prepare (1) on disk
    connect();                        // registers at 1; its backfill waits
    ASSERT_EQ(bucket->seqnoAcknowledged(kVb, kReplica, 1), Status::Success);
    pool.runReady(TaskType::NonIO);  // the commit (2)
    ASSERT_EQ(first->result().status, Status::Success);
    auto second = pending<MutationResult>();
    bucket->store(setRequest(kVb, "k", "v2", DurabilityLevel::Majority), second->callback());
    pool.runReady(TaskType::Writer);  // 2 and the new prepare (3) on disk
    settle();                         // the backfill, then the stream
    ASSERT_TRUE(second->done());
    EXPECT_EQ(second->result().status, Status::Success);
    EXPECT_EQ(replicaRead("k").item.value, "v2");
    EXPECT_EQ(replica->observeSeqno(kVb).currentSeqno, 4u);
}

// The replica asked again from inside a disk snapshot [1, 4] it had up to
// 2, maybe of another active: what follows, a memory snapshot or a smaller
// disk one, does not make it whole before 4, since the version the first
// snapshot left out may come only then.
TEST_F(ReplicaSnapshotTest, ASnapshotAfterAnUnfinishedDiskSnapshotWaitsForItsEnd) {
    const auto marker = [](bool fromDisk, Seqno start, Seqno end) {
        StreamEvent e;
        e.kind = StreamEventKind::Snapshot;
        e.fromDisk = fromDisk;
        e.snapStart = start;
        e.snapEnd = end;
        return e;
    };
    const auto change = [](const std::string& key, Seqno seqno) {
        StreamEvent e;
        e.item = Item{kVb, key, "v", ItemMeta{100 + seqno, seqno, 0, 0, 0, false}};
        return e;
    };
    apply({marker(true, 1, 4), change("a", 2)}, 2);
    apply({marker(false, 3, 3), change("b", 3)}, 2);
    EXPECT_EQ(replica->replicaResumePoint(kVb)->snapStart, 0u);
    apply({marker(true, 3, 3)}, 1);
    EXPECT_EQ(replica->replicaResumePoint(kVb)->snapStart, 0u);
    EXPECT_EQ(replica->replicaResumePoint(kVb)->snapEnd, 4u);
    apply({marker(false, 4, 5), change("c", 4)}, 2);
    EXPECT_EQ(replica->replicaResumePoint(kVb)->snapStart, 4u) << "whole at the first one's end";
    pool.runReady(TaskType::Writer);
    EXPECT_EQ(replica->observeSeqno(kVb).persistedSeqno, 4u);
}

// Promoted inside a disk snapshot, the copy's history branches where it was
// whole (a replica that holds more of the old history rolls back there),
// and the flusher saves what the snapshot held back.
TEST_F(ReplicaSnapshotTest, APromotionInsideADiskSnapshotBranchesAtItsBaseAndSavesTheRest) {
    store("x", "v");
    store("y", "v");
    store("z", "v");
    settle();
    const auto events = backfill();
    ASSERT_EQ(events.size(), 4u);
    apply(events, 3);  // the marker, x and y
    pool.runReady(TaskType::Writer);
    ASSERT_EQ(replica->observeSeqno(kVb).persistedSeqno, 0u);
    ASSERT_EQ(replica->setVBucketState(kVb, VBucketState::Active, {{kReplica}}), Status::Success);
    EXPECT_EQ(replica->failoverLog(kVb)->entries().front().seqno, 0u);
    pool.runReady(TaskType::Writer);
    EXPECT_EQ(replica->observeSeqno(kVb).persistedSeqno, 2u);
}

// A compaction that purged tombstones above a stream's start after the
// stream was asked for, before its backfill read the file: the backfill
// may lack a deletion the consumer needs, so the stream ends
// (BackfillFailed) and DCP's next request is rolled back to 0.
TEST_F(ReplicaSnapshotTest, ACompactionThatPurgedAboveAStreamsStartEndsItsBackfill) {
    store("gone", "v");                                                               // 1
    store("kept", "v");                                                               // 2
    bucket->remove(RemoveRequest{kVb, "gone", 0, {}}, [](const MutationResult&) {});  // 3
    store("other", "v");                                                              // 4
    settle();
    std::optional<Status> compacted;
    bucket->compact(kVb, [&](Status s) { compacted = s; });  // first in the AuxIO line
    std::vector<StreamEvent> seen;
    auto held = bucket->openReplicationStream({kVb, 2},
                                              [&seen](const StreamEvent& e) { seen.push_back(e); });
    ASSERT_NE(held, nullptr);
    settle();
    ASSERT_EQ(compacted, Status::Success);
    ASSERT_EQ(bucket->observeSeqno(kVb).purgeSeqno, 4u);
    ASSERT_FALSE(seen.empty());
    EXPECT_EQ(seen.back().kind, StreamEventKind::BackfillFailed);
}

// A backfill leaves out a prepare its commit ended within it, and keeps
// everything around it as it was.
TEST_F(ReplicaSnapshotTest, ABackfillLeavesOutACompletedPrepareAndKeepsTheRest) {
    store("before", "v");  // 1
    auto write = pending<MutationResult>();
    bucket->store(setRequest(kVb, "k", "durable", DurabilityLevel::Majority),
                  write->callback());  // 2
    settle();
    ASSERT_EQ(bucket->seqnoAcknowledged(kVb, kReplica, 2), Status::Success);
    settle();  // the commit (3)
    ASSERT_EQ(write->result().status, Status::Success);
    store("after", "v");  // 4
    settle();
    const auto events = backfill();
    std::vector<StreamEventKind> kinds;
    for (const auto& e : events) {
        kinds.push_back(e.kind);
    }
    EXPECT_EQ(kinds,
              (std::vector<StreamEventKind>{StreamEventKind::Snapshot, StreamEventKind::Mutation,
                                            StreamEventKind::Mutation, StreamEventKind::Mutation}));
    apply(events, events.size());
    EXPECT_EQ(replicaRead("before").item.value, "v");
    EXPECT_EQ(replicaRead("k").item.value, "durable");
    EXPECT_EQ(replicaRead("after").item.value, "v");
}

// A memory snapshot holds every change in order: any prefix is whole.
TEST_F(ReplicaSnapshotTest, AMemorySnapshotIsWholeAfterEveryChange) {
    connect();
    store("k", "old");
    settle();
    ASSERT_EQ(events.front(), StreamEventKind::Snapshot);
    const auto point = replica->replicaResumePoint(kVb);
    ASSERT_TRUE(point);
    EXPECT_EQ(point->start, 1u);
    EXPECT_EQ(point->snapStart, 1u);
    EXPECT_EQ(replica->observeSeqno(kVb).persistedSeqno, 1u);
}

}  // namespace
}  // namespace kvexec::engine
