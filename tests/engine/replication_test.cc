// A replica applying its active's replication stream (replication_fixture.h):
// seqnos and CAS, durability, expiry, restarts, promotion and rollback.
#include <gtest/gtest.h>

#include <algorithm>

#include "replication_fixture.h"

namespace kvexec::engine {
namespace {

using namespace std::chrono_literals;
using test::pending;
using test::setRequest;

TEST_F(ReplicationTest, ChangesArriveWithTheActivesSeqnosAndCas) {
    connect();
    const auto set = test::storeNow(*bucket, setRequest(kVb, "k", "v"));
    test::storeNow(*bucket, setRequest(kVb, "gone", "v"));
    bucket->remove(RemoveRequest{kVb, "gone", 0, {}}, [](const MutationResult&) {});
    settle();
    const auto copy = replicaRead("k");
    ASSERT_EQ(copy.status, Status::Success);
    EXPECT_EQ(copy.item.value, "v");
    EXPECT_EQ(copy.item.meta.cas, set->cas);
    EXPECT_EQ(copy.item.meta.seqno, set->token.seqno);
    EXPECT_EQ(replicaRead("gone").status, Status::KeyNotFound);
    EXPECT_EQ(replica->observeSeqno(kVb).currentSeqno, bucket->observeSeqno(kVb).currentSeqno);
    EXPECT_EQ(events.front(), StreamEventKind::Snapshot);
    // Clients are not served by the replica, and the active does not
    // answer replica reads.
    EXPECT_EQ(test::getNow(*replica, kVb, "k").status, Status::NotMyVbucket);
    GetResult fromActive;
    bucket->getReplica(kVb, DocKey{"k"}, [&](const GetResult& r) { fromActive = r; });
    EXPECT_EQ(fromActive.status, Status::NotMyVbucket);
}

TEST_F(ReplicationTest, AMajorityWriteCommitsOnceTheReplicaHoldsItsPrepare) {
    connect();
    auto write = pending<MutationResult>();
    bucket->store(setRequest(kVb, "k", "v", DurabilityLevel::Majority), write->callback());
    EXPECT_FALSE(write->done());
    settle();
    ASSERT_EQ(write->calls(), 1);
    EXPECT_EQ(write->result().status, Status::Success);
    EXPECT_EQ((std::vector<StreamEventKind>(events.begin() + 1, events.end())),
              (std::vector<StreamEventKind>{StreamEventKind::Prepare, StreamEventKind::Snapshot,
                                            StreamEventKind::Commit}));
    const auto copy = replicaRead("k");
    EXPECT_EQ(copy.item.value, "v");
    EXPECT_EQ(copy.item.meta.cas, write->result().cas);
    EXPECT_EQ(copy.item.meta.seqno, write->result().token.seqno);
}

TEST_F(ReplicationTest, PersistToMajorityWaitsForTheReplicasDisk) {
    connect();
    auto write = pending<MutationResult>();
    bucket->store(setRequest(kVb, "k", "v", DurabilityLevel::PersistToMajority), write->callback());
    pool.runReady(TaskType::NonIO);  // the prepare reaches the replica's memory
    EXPECT_TRUE(acks.empty()) << "acknowledged before persisting";
    EXPECT_EQ(replica->replicaHighPrepared(kVb), 0u);
    settle();  // both flushers
    ASSERT_EQ(write->calls(), 1);
    EXPECT_EQ(write->result().status, Status::Success);
    EXPECT_EQ(acks, std::vector<Seqno>{1});
}

// Both ways an expiry deletes, a read that finds the document expired and
// the expiry pager, stream an Expiration: from memory, and from disk once
// persisted. The replica applies it as the deletion it is.
TEST_F(ReplicationTest, AnExpiryStreamsAsAnExpirationFromMemoryAndFromDisk) {
    connect();
    storeExpiring("read");
    storeExpiring("paged");
    settle();
    ASSERT_EQ(replicaRead("paged").status, Status::Success);
    now += 11;
    EXPECT_EQ(test::getNow(*bucket, kVb, "read").status, Status::KeyNotFound);
    settle();
    runExpiryPagers();
    ASSERT_EQ(bucket->stats().expired, 2u);
    ASSERT_GE(events.size(), 4u);
    EXPECT_EQ(
        (std::vector<StreamEventKind>(events.end() - 4, events.end())),
        (std::vector<StreamEventKind>{StreamEventKind::Snapshot, StreamEventKind::Expiration,
                                      StreamEventKind::Snapshot, StreamEventKind::Expiration}));
    EXPECT_EQ(replicaRead("read").status, Status::KeyNotFound);
    EXPECT_EQ(replicaRead("paged").status, Status::KeyNotFound);
    EXPECT_EQ(replica->observeSeqno(kVb).currentSeqno, bucket->observeSeqno(kVb).currentSeqno);

    std::vector<StreamEvent> fromDisk;
    auto late = bucket->openReplicationStream({kVb, 0},
                                              [&](const StreamEvent& e) { fromDisk.push_back(e); });
    settle();
    ASSERT_EQ(fromDisk.size(), 3u);
    EXPECT_TRUE(fromDisk[0].fromDisk);
    for (const auto& [event, key] : {std::pair{fromDisk[1], "read"}, {fromDisk[2], "paged"}}) {
        EXPECT_EQ(event.kind, StreamEventKind::Expiration) << key;
        EXPECT_EQ(event.item.key, key);
        EXPECT_TRUE(event.item.meta.deleted) << key;
    }
}

// The replica's copies of expired documents wait for their active's
// expirations (same seqnos); its own pager deleting them would fork its
// history from the active's.
TEST_F(ReplicationTest, AReplicasExpiryPagerLeavesItsCopiesToItsActive) {
    connect();
    storeExpiring("k");
    settle();
    stream->close();
    ASSERT_EQ(replicaRead("k").status, Status::Success);
    now += 11;
    const auto before = replica->observeSeqno(kVb).currentSeqno;
    runExpiryPagers();
    EXPECT_EQ(replica->stats().expired, 0u);
    EXPECT_EQ(replica->observeSeqno(kVb).currentSeqno, before);
    EXPECT_EQ(replicaRead("k").status, Status::KeyNotFound) << "an expired copy reads as absent";
    ASSERT_EQ(bucket->stats().expired, 1u);
    connect(before);  // the active's expiration applies (connect() checks)
    settle();
    ASSERT_FALSE(events.empty());
    EXPECT_EQ(events.back(), StreamEventKind::Expiration);
    EXPECT_EQ(replica->observeSeqno(kVb).currentSeqno, bucket->observeSeqno(kVb).currentSeqno);
}

TEST_F(ReplicationTest, AnAbortReachesTheReplicaAndLeavesItsCopyAlone) {
    connect();
    test::storeNow(*bucket, setRequest(kVb, "k", "old"));
    settle();
    stream->close();  // the replica stops acknowledging
    auto req = setRequest(kVb, "k", "new", DurabilityLevel::Majority);
    req.durability.timeout = 1ms;
    auto write = pending<MutationResult>();
    bucket->store(req, write->callback());
    ASSERT_TRUE(kvexec::test::waitFor([&] {
        pool.runNext(TaskType::NonIO);
        return write->done();
    }));
    EXPECT_EQ(write->result().status, Status::SyncWriteAmbiguous);
    connect(replica->observeSeqno(kVb).currentSeqno);
    settle();
    EXPECT_EQ(replicaRead("k").item.value, "old");
    EXPECT_EQ(replica->observeSeqno(kVb).currentSeqno, bucket->observeSeqno(kVb).currentSeqno);
}

// A demoted active ends the SyncWrites it leads with aborts of its own,
// after its streams ended: its replica, promoted, still holds the
// prepare, which a majority may have acknowledged, and commits it once
// its new chain holds it.
TEST_F(ReplicationTest, ADemotedActivesStreamsEndBeforeItsAborts) {
    connect();
    // A chain of three: the write needs a second ack that never comes.
    ASSERT_EQ(bucket->setVBucketState(kVb, VBucketState::Active, {{kActive, kReplica, "c"}}),
              Status::Success);
    test::storeNow(*bucket, setRequest(kVb, "before", "v"));
    auto write = pending<MutationResult>();
    bucket->store(setRequest(kVb, "k", "v", DurabilityLevel::Majority), write->callback());
    const Seqno prepared = bucket->observeSeqno(kVb).currentSeqno;
    // Demoted before the stream task ran: what it had queued still goes.
    ASSERT_EQ(bucket->setVBucketState(kVb, VBucketState::Replica), Status::Success);
    EXPECT_EQ(write->result().status, Status::SyncWriteAmbiguous);
    ASSERT_GT(bucket->observeSeqno(kVb).currentSeqno, prepared);  // the abort's seqno
    settle();
    EXPECT_EQ(events.back(), StreamEventKind::StateChanged);
    EXPECT_EQ(std::count(events.begin(), events.end(), StreamEventKind::Abort), 0);
    EXPECT_EQ(std::count(events.begin(), events.end(), StreamEventKind::Prepare), 1);
    EXPECT_EQ(replica->observeSeqno(kVb).currentSeqno, prepared);
    EXPECT_EQ(bucket->stats().streamsOpen, 0u);
    // Once closed, it delivers nothing more.
    const auto delivered = events.size();
    settle();
    EXPECT_EQ(events.size(), delivered);

    ASSERT_EQ(replica->setVBucketState(kVb, VBucketState::Active, {{kReplica, "c"}}),
              Status::Success);
    EXPECT_EQ(test::getNow(*replica, kVb, "k").status, Status::SyncWriteReCommitInProgress);
    ASSERT_EQ(replica->seqnoAcknowledged(kVb, "c", prepared), Status::Success);
    pool.runReady(TaskType::NonIO);
    EXPECT_EQ(test::getNow(*replica, kVb, "k").item.value, "v");
    EXPECT_EQ(test::getNow(*replica, kVb, "before").item.value, "v");
}

// Ended but not yet run when the bucket goes: the bucket closes it, and
// its owner's close() afterwards finds nothing to do.
TEST_F(ReplicationTest, AStreamEndedByADemotionStillClosesWithTheBucket) {
    connect();
    test::storeNow(*bucket, setRequest(kVb, "k", "v"));
    ASSERT_EQ(bucket->setVBucketState(kVb, VBucketState::Replica), Status::Success);
    bucket.reset();
    stream->close();
    EXPECT_TRUE(events.empty());
}

// A stream still waiting for its backfill when the vBucket changed may
// find the demoted copy's own aborts in the file: it sends nothing from
// it and ends, and its consumer asks again.
TEST_F(ReplicationTest, ADemotedActivesBackfillThatReadsItsAbortsIsNotSent) {
    ASSERT_EQ(bucket->setVBucketState(kVb, VBucketState::Active, {{kActive, kReplica, "c"}}),
              Status::Success);
    test::storeNow(*bucket, setRequest(kVb, "before", "v"));
    auto write = pending<MutationResult>();
    bucket->store(setRequest(kVb, "k", "v", DurabilityLevel::Majority), write->callback());
    settle();  // persisted: a stream from 0 backfills
    connect();
    ASSERT_EQ(bucket->setVBucketState(kVb, VBucketState::Replica), Status::Success);
    pool.runReady(TaskType::Writer);  // the abort reaches the file before the scan
    settle();
    EXPECT_EQ(events, std::vector<StreamEventKind>{StreamEventKind::StateChanged});
    EXPECT_EQ(replica->observeSeqno(kVb).currentSeqno, 0u);
    EXPECT_EQ(bucket->stats().streamsOpen, 0u);
}

TEST_F(ReplicationTest, AReplicaRestartedResumesFromItsPersistedSeqno) {
    connect();
    for (int i = 0; i < 5; ++i) {
        test::storeNow(*bucket, setRequest(kVb, storage::test::keyOf(i, "k"), "v"));
    }
    settle();
    stream->close();
    replica.reset();
    replica = Bucket::open(pool, replicaConfig);
    pool.runReady(TaskType::Reader);
    ASSERT_EQ(replica->vbucketAssignment(kVb)->state, VBucketState::Replica);
    const Seqno resumeAt = replica->observeSeqno(kVb).persistedSeqno;
    EXPECT_EQ(resumeAt, 5u);
    test::storeNow(*bucket, setRequest(kVb, "after", "v"));
    events.clear();
    connect(resumeAt);
    settle();
    // Only what it missed: one snapshot, one mutation.
    EXPECT_EQ(events,
              (std::vector<StreamEventKind>{StreamEventKind::Snapshot, StreamEventKind::Mutation}));
    EXPECT_EQ(replicaRead("after").item.value, "v");
    EXPECT_EQ(replicaRead(storage::test::keyOf(4, "k")).item.value, "v");
}

TEST_F(ReplicationTest, APromotedReplicaCommitsThePreparesItInherited) {
    connect();
    auto write = pending<MutationResult>();
    // A chain of three: the write needs a second ack that never comes.
    ASSERT_EQ(bucket->setVBucketState(kVb, VBucketState::Active, {{kActive, kReplica, "c"}}),
              Status::Success);
    ASSERT_EQ(bucket->setVBucketState(kVb, VBucketState::Active, {{kActive, "c", kReplica}}),
              Status::Success);
    bucket->store(setRequest(kVb, "k", "v", DurabilityLevel::Majority), write->callback());
    pool.runReady(TaskType::NonIO);
    // "a" is lost before committing; "b" takes over alone.
    stream->close();
    ASSERT_EQ(replica->setVBucketState(kVb, VBucketState::Active, {{kReplica}}), Status::Success);
    EXPECT_EQ(test::getNow(*replica, kVb, "k").item.value, "v");
    EXPECT_EQ(replica->failoverLog(kVb)->entries().size(), 2u);
}

// Until the new chain holds an inherited prepare, the key's committed
// value may be older than a write its old active acknowledged: a read
// answers SyncWriteReCommitInProgress (retry) rather than that value.
TEST_F(ReplicationTest, APromotedReplicaAnswersReCommitInProgressUntilAnInheritedPrepareCommits) {
    connect();
    ASSERT_EQ(test::storeNow(*bucket, setRequest(kVb, "k", "old"))->status, Status::Success);
    // A chain of four: the write needs two more acks than the replica's.
    ASSERT_EQ(bucket->setVBucketState(kVb, VBucketState::Active, {{kActive, "c", "d", kReplica}}),
              Status::Success);
    auto write = pending<MutationResult>();
    bucket->store(setRequest(kVb, "k", "new", DurabilityLevel::Majority), write->callback());
    const Seqno prepared = bucket->observeSeqno(kVb).currentSeqno;
    pool.runReady(TaskType::NonIO);
    ASSERT_FALSE(write->done());
    stream->close();
    // "a" is lost; "b" leads a chain whose other member "c" lags.
    ASSERT_EQ(replica->setVBucketState(kVb, VBucketState::Active, {{kReplica, "c"}}),
              Status::Success);
    EXPECT_EQ(test::getNow(*replica, kVb, "k").status, Status::SyncWriteReCommitInProgress);
    EXPECT_EQ(test::getNow(*replica, kVb, "other").status, Status::KeyNotFound);
    auto blocked = pending<MutationResult>();
    replica->store(setRequest(kVb, "k", "w"), blocked->callback());
    EXPECT_EQ(blocked->result().status, Status::SyncWriteReCommitInProgress);

    // A rebalance's takeover pauses the vBucket and ends the writes clients
    // wait for, never the inherited one; undone, it leaves it pending.
    auto client = pending<MutationResult>();
    replica->store(setRequest(kVb, "x", "v", DurabilityLevel::Majority), client->callback());
    const Topology chain{{kReplica, "c"}};
    ASSERT_EQ(replica->setVBucketStates({{kVb, VBucketState::Active, chain, true}}),
              Status::Success);
    EXPECT_EQ(client->result().status, Status::SyncWriteAmbiguous);
    ASSERT_EQ(replica->setVBucketStates({{kVb, VBucketState::Active, chain, false}}),
              Status::Success);
    EXPECT_EQ(test::getNow(*replica, kVb, "k").status, Status::SyncWriteReCommitInProgress);

    ASSERT_EQ(replica->seqnoAcknowledged(kVb, "c", prepared), Status::Success);
    pool.runReady(TaskType::NonIO);
    EXPECT_EQ(test::getNow(*replica, kVb, "k").item.value, "new");
}

TEST_F(ReplicationTest, EventsOutOfOrderOrToANonReplicaAreRefused) {
    StreamEvent mutation;
    mutation.kind = StreamEventKind::Mutation;
    mutation.item = Item{kVb, "k", "v", ItemMeta{1, 5, 0, 0, 0, false}};
    ASSERT_EQ(replica->applyReplicated(kVb, mutation), Status::Success);
    EXPECT_EQ(replica->applyReplicated(kVb, mutation), Status::Invalid) << "seqno not above 5";
    mutation.item.meta.seqno = 6;
    EXPECT_EQ(bucket->applyReplicated(kVb, mutation), Status::NotMyVbucket) << "active";
    StreamEvent prepare = mutation;
    prepare.kind = StreamEventKind::Prepare;
    prepare.level = DurabilityLevel::None;
    EXPECT_EQ(replica->applyReplicated(kVb, prepare), Status::Invalid) << "a prepare has a level";
    EXPECT_EQ(replica->openReplicationStream({kVb, 0}, [](const StreamEvent&) {}), nullptr);
}

}  // namespace
}  // namespace kvexec::engine

namespace kvexec::engine {
namespace {

TEST_F(ReplicationTest, AnAbortReadFromDiskStillNamesItsPrepare) {
    auto req = setRequest(kVb, "k", "v", DurabilityLevel::Majority);
    req.durability.timeout = 1ms;
    auto write = pending<MutationResult>();
    bucket->store(req, write->callback());
    const Seqno prepared = bucket->observeSeqno(kVb).currentSeqno;
    ASSERT_TRUE(kvexec::test::waitFor([&] {
        pool.runNext(TaskType::NonIO);
        return write->done();
    }));
    settle();  // the abort is on disk; memory holds nothing to stream
    std::vector<StreamEvent> seen;
    auto fromDisk =
        bucket->openReplicationStream({kVb, 0}, [&](const StreamEvent& e) { seen.push_back(e); });
    settle();
    ASSERT_EQ(seen.size(), 2u);
    EXPECT_TRUE(seen[0].fromDisk);
    EXPECT_EQ(seen[1].kind, StreamEventKind::Abort);
    EXPECT_EQ(seen[1].preparedSeqno, prepared);
    EXPECT_EQ(seen[1].item.key, "k");
}

TEST_F(ReplicationTest, AnAdoptedHistoryReachesDiskWithoutAShutdownInOneWrite) {
    const auto activeLog = *bucket->failoverLog(kVb);
    ASSERT_EQ(replica->setVBucketState(1, VBucketState::Replica), Status::Success);
    ASSERT_EQ(replica->adoptFailoverLog(kVb, activeLog), Status::Success);
    ASSERT_EQ(replica->adoptFailoverLog(1, activeLog), Status::Success);
    EXPECT_EQ(pool.runReady(TaskType::Writer), 1u) << "both changes share one write";
    test::TempDir copy;
    const auto crashed = openCrashCopy(copy, replicaConfig);
    EXPECT_EQ(*crashed->failoverLog(kVb), activeLog);
    EXPECT_EQ(*crashed->failoverLog(1), activeLog);
}

TEST_F(ReplicationTest, AReplicaAdoptsItsActivesHistory) {
    const auto activeLog = *bucket->failoverLog(kVb);
    ASSERT_EQ(replica->adoptFailoverLog(kVb, activeLog), Status::Success);
    EXPECT_EQ(bucket->adoptFailoverLog(kVb, activeLog), Status::NotMyVbucket);
    replica.reset();
    replica = Bucket::open(pool, replicaConfig);
    pool.runReady(TaskType::Reader);
    EXPECT_EQ(*replica->failoverLog(kVb), activeLog) << "kept across a clean restart";
    // So it resumes on the active's branch without a rollback.
    EXPECT_EQ(decideRollback(*bucket->failoverLog(kVb), bucket->observeSeqno(kVb).currentSeqno, 0,
                             {replica->failoverLog(kVb)->uuid(), 0, 0, 0}),
              RollbackDecision{});
}

}  // namespace
}  // namespace kvexec::engine

namespace kvexec::engine {
namespace {

TEST_F(ReplicationTest, AReplicaKeepsItsPreparesAcrossARestartAndCommitsThemLater) {
    // Four nodes: a majority is three, so "b" alone is not enough.
    ASSERT_EQ(bucket->setVBucketState(kVb, VBucketState::Active, {{kActive, kReplica, "c", "d"}}),
              Status::Success);
    connect();
    auto write = pending<MutationResult>();
    bucket->store(setRequest(kVb, "k", "v", DurabilityLevel::Majority), write->callback());
    settle();  // the replica holds the prepare; "c" has not acknowledged
    ASSERT_FALSE(write->done());
    const Seqno resumeAt = replica->observeSeqno(kVb).persistedSeqno;
    stream->close();
    replica.reset();
    openReplica();
    EXPECT_EQ(replica->replicaHighPrepared(kVb), resumeAt);
    // "c" acknowledges: the commit reaches the replica, which still holds
    // the prepare it needs.
    connect(resumeAt);
    ASSERT_EQ(bucket->seqnoAcknowledged(kVb, "c", resumeAt), Status::Success);
    settle();
    EXPECT_EQ(write->result().status, Status::Success);
    EXPECT_EQ(replicaRead("k").item.value, "v");
}

TEST_F(ReplicationTest, ACommitOfAnUnknownPrepareIsRefused) {
    StreamEvent commit;
    commit.kind = StreamEventKind::Commit;
    commit.item = Item{kVb, "k", "", ItemMeta{1, 7, 0, 0, 0, false}};
    commit.preparedSeqno = 3;
    EXPECT_EQ(replica->applyReplicated(kVb, commit), Status::Invalid);
}

}  // namespace
}  // namespace kvexec::engine

namespace kvexec::engine {
namespace {

// The active lost what the replica had seen (a crash before its flush):
// the replica goes back to its commit at the seqno the histories share,
// on disk and in memory, before its stream is asked for again; then it
// streams on from there.
TEST_F(ReplicationTest, AReplicaRolledBackKeepsTheSharedHistoryOnDiskAndInMemory) {
    connect();
    for (int i = 0; i < 5; ++i) {
        test::storeNow(*bucket, setRequest(kVb, storage::test::keyOf(i, "k"), "v"));
    }
    settle();
    stream->close();
    // The replica holds changes the active will never have, persisted.
    for (const auto& [key, seqno] : {std::pair{std::string("only-on-replica"), Seqno{6}},
                                     std::pair{storage::test::keyOf(0, "k"), Seqno{7}}}) {
        StreamEvent extra;
        extra.kind = StreamEventKind::Mutation;
        extra.item = Item{kVb, key, "x", ItemMeta{100 + seqno, seqno, 0, 0, 0, false}};
        ASSERT_EQ(replica->applyReplicated(kVb, extra), Status::Success);
    }
    pool.runReady(TaskType::Writer);
    std::optional<Status> rolledBack;
    ASSERT_EQ(replica->rollbackReplica(kVb, 5, [&](Status s) { rolledBack = s; }), Status::Success);
    EXPECT_FALSE(rolledBack) << "done before the flusher ran";
    pool.runReady(TaskType::Writer);
    ASSERT_EQ(rolledBack, Status::Success);
    EXPECT_EQ(replica->observeSeqno(kVb).currentSeqno, 5u);
    EXPECT_EQ(replica->observeSeqno(kVb).persistedSeqno, 5u);
    EXPECT_EQ(replicaRead("only-on-replica").status, Status::KeyNotFound);
    EXPECT_EQ(replicaRead(storage::test::keyOf(0, "k")).item.value, "v") << "the older version";
    events.clear();
    connect(5);
    test::storeNow(*bucket, setRequest(kVb, "later", "v"));
    settle();
    EXPECT_EQ(std::count(events.begin(), events.end(), StreamEventKind::Mutation), 1)
        << "the shared history was streamed again";
    EXPECT_EQ(replica->observeSeqno(kVb).currentSeqno, 6u);
    // On disk too: a restart finds the active's history only.
    stream->close();
    replica.reset();
    openReplica();
    EXPECT_EQ(replicaRead("only-on-replica").status, Status::KeyNotFound);
    EXPECT_EQ(replicaRead(storage::test::keyOf(0, "k")).item.value, "v");
    EXPECT_EQ(replica->observeSeqno(kVb).persistedSeqno, 6u);
    EXPECT_EQ(bucket->rollbackReplica(kVb, 0, {}), Status::NotMyVbucket);
}

// A replica promoted before its flusher got to the rollback keeps what it
// holds (it is the active's history now), and the stream is told.
TEST_F(ReplicationTest, ARollbackOvertakenByAPromotionIsDropped) {
    connect();
    test::storeNow(*bucket, setRequest(kVb, "k", "v"));
    settle();
    stream->close();
    std::optional<Status> rolledBack;
    ASSERT_EQ(replica->rollbackReplica(kVb, 0, [&](Status s) { rolledBack = s; }), Status::Success);
    ASSERT_EQ(replica->setVBucketState(kVb, VBucketState::Active, {{kReplica}}), Status::Success);
    pool.runReady(TaskType::Writer);
    EXPECT_EQ(rolledBack, Status::NotMyVbucket);
    EXPECT_EQ(replica->observeSeqno(kVb).currentSeqno, 1u);
}

}  // namespace
}  // namespace kvexec::engine
