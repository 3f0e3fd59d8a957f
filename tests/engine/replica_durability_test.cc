// A bucket whose vBuckets have replicas in their topology: the states a
// cluster map sets, and SyncWrites decided by the replicas'
// acknowledgements, deterministically on the Manual backend in virtual
// time (BucketConfig::steadyTime).
#include <gtest/gtest.h>

#include "manual_bucket_fixture.h"

namespace kvexec::engine {
namespace {

using namespace std::chrono_literals;
using test::pending;
using test::setRequest;

// This node's name (a std::string: GCC 12 gives a false -Wrestrict for a
// literal assigned to one here).
const std::string kThisNode{"a"};

class ReplicaDurabilityTest : public ManualBucketTest {
  protected:
    void SetUp() override {
        config.nodeName = kThisNode;
        config.steadyTime = [this] { return steady.load(); };
        ManualBucketTest::SetUp();
    }
    void advance(Clock::duration d) { steady.store(steady.load() + d); }
    std::shared_ptr<test::Pending<MutationResult>> durableSet(Vbid vbid, std::string key,
                                                              DurabilityLevel level) {
        auto write = pending<MutationResult>();
        bucket->store(setRequest(vbid, std::move(key), "v", level), write->callback());
        return write;
    }
    Seqno highSeqno(Vbid vbid) { return bucket->observeSeqno(vbid).currentSeqno; }

    std::atomic<Clock::time_point> steady{Clock::time_point{} + 1h};
};

TEST_F(ReplicaDurabilityTest, EveryVBucketStartsActiveWithThisNodeAlone) {
    const auto assignment = bucket->vbucketAssignment(3);
    ASSERT_TRUE(assignment.has_value());
    EXPECT_EQ(assignment->state, VBucketState::Active);
    EXPECT_EQ(assignment->topology.chain, std::vector<std::string>{"a"});
    EXPECT_FALSE(bucket->vbucketAssignment(8).has_value());
}

TEST_F(ReplicaDurabilityTest, OnlyAnActiveVBucketServesClients) {
    ASSERT_EQ(test::storeNow(*bucket, setRequest(1, "k", "v"))->status, Status::Success);
    ASSERT_EQ(bucket->setVBucketState(1, VBucketState::Replica), Status::Success);
    EXPECT_EQ(test::storeNow(*bucket, setRequest(1, "k", "w"))->status, Status::NotMyVbucket);
    EXPECT_EQ(test::getNow(*bucket, 1, "k").status, Status::NotMyVbucket);
    ASSERT_EQ(bucket->setVBucketState(1, VBucketState::Pending), Status::Success);
    EXPECT_EQ(test::getNow(*bucket, 1, "k").status, Status::TempFail);
    ASSERT_EQ(bucket->setVBucketState(1, VBucketState::Dead), Status::Success);
    EXPECT_EQ(test::getNow(*bucket, 1, "k").status, Status::NotMyVbucket);
    // The other vBuckets are untouched, and an active one serves its data.
    EXPECT_EQ(test::storeNow(*bucket, setRequest(2, "k", "v"))->status, Status::Success);
    ASSERT_EQ(bucket->setVBucketState(1, VBucketState::Active), Status::Success);
    EXPECT_EQ(test::getNow(*bucket, 1, "k").item.value, "v");
    EXPECT_EQ(bucket->setVBucketState(8, VBucketState::Active), Status::NotMyVbucket);
}

TEST_F(ReplicaDurabilityTest, MajorityWithOneReplicaCommitsOnItsAcknowledgement) {
    ASSERT_EQ(bucket->setVBucketState(0, VBucketState::Active, {{"a", "b"}}), Status::Success);
    auto write = durableSet(0, "k", DurabilityLevel::Majority);
    settle();
    EXPECT_FALSE(write->done()) << "committed without the replica";
    EXPECT_EQ(test::getNow(*bucket, 0, "k").status, Status::KeyNotFound);
    ASSERT_EQ(bucket->seqnoAcknowledged(0, "b", highSeqno(0)), Status::Success);
    settle();
    ASSERT_EQ(write->calls(), 1);
    EXPECT_EQ(write->result().status, Status::Success);
    EXPECT_EQ(test::getNow(*bucket, 0, "k").item.value, "v");
}

TEST_F(ReplicaDurabilityTest, PersistToMajorityNeedsTheActivesDiskAndTheReplicasAck) {
    ASSERT_EQ(bucket->setVBucketState(0, VBucketState::Active, {{"a", "b"}}), Status::Success);
    auto write = durableSet(0, "k", DurabilityLevel::PersistToMajority);
    ASSERT_EQ(bucket->seqnoAcknowledged(0, "b", highSeqno(0)), Status::Success);
    pool.runReady(TaskType::NonIO);
    EXPECT_FALSE(write->done()) << "committed before the active persisted it";
    settle();
    ASSERT_EQ(write->calls(), 1);
    EXPECT_EQ(write->result().status, Status::Success);
}

TEST_F(ReplicaDurabilityTest, TwoReplicasNeedOneAcknowledgement) {
    ASSERT_EQ(bucket->setVBucketState(0, VBucketState::Active, {{"a", "b", "c"}}), Status::Success);
    auto write = durableSet(0, "k", DurabilityLevel::Majority);
    ASSERT_EQ(bucket->seqnoAcknowledged(0, "c", highSeqno(0)), Status::Success);
    settle();
    ASSERT_EQ(write->calls(), 1);
    EXPECT_EQ(write->result().status, Status::Success);
}

TEST_F(ReplicaDurabilityTest, ASilentReplicaMakesTheWriteAmbiguousAtItsDeadline) {
    ASSERT_EQ(bucket->setVBucketState(0, VBucketState::Active, {{"a", "b"}}), Status::Success);
    test::storeNow(*bucket, setRequest(0, "k", "before"));
    auto req = setRequest(0, "k", "v", DurabilityLevel::Majority);
    req.durability.timeout = 5s;
    auto write = pending<MutationResult>();
    bucket->store(req, write->callback());
    settle();
    advance(4999ms);
    pool.runNext(TaskType::NonIO);
    EXPECT_FALSE(write->done()) << "aborted before its deadline";
    advance(1ms);
    pool.runNext(TaskType::NonIO);
    ASSERT_EQ(write->calls(), 1);
    EXPECT_EQ(write->result().status, Status::SyncWriteAmbiguous);
    EXPECT_EQ(test::getNow(*bucket, 0, "k").item.value, "before");
    // A late acknowledgement changes nothing.
    EXPECT_EQ(bucket->seqnoAcknowledged(0, "b", highSeqno(0)), Status::Success);
    settle();
    EXPECT_EQ(write->calls(), 1);
    EXPECT_EQ(test::getNow(*bucket, 0, "k").item.value, "before");
}

TEST_F(ReplicaDurabilityTest, AChainWithoutItsReplicaRefusesSyncWritesButNotPlainOnes) {
    ASSERT_EQ(bucket->setVBucketState(0, VBucketState::Active, {{"a", ""}}), Status::Success);
    auto write = durableSet(0, "k", DurabilityLevel::Majority);
    ASSERT_EQ(write->calls(), 1);
    EXPECT_EQ(write->result().status, Status::DurabilityImpossible);
    EXPECT_EQ(test::storeNow(*bucket, setRequest(0, "k", "v"))->status, Status::Success);
}

TEST_F(ReplicaDurabilityTest, AcknowledgementsAreCheckedAgainstTheChain) {
    ASSERT_EQ(bucket->setVBucketState(0, VBucketState::Active, {{"a", "b"}}), Status::Success);
    EXPECT_EQ(bucket->seqnoAcknowledged(0, "z", 1), Status::Invalid);
    EXPECT_EQ(bucket->seqnoAcknowledged(0, "a", 1), Status::Invalid);
    EXPECT_EQ(bucket->seqnoAcknowledged(8, "b", 1), Status::NotMyVbucket);
    ASSERT_EQ(bucket->setVBucketState(0, VBucketState::Replica), Status::Success);
    EXPECT_EQ(bucket->seqnoAcknowledged(0, "b", 1), Status::NotMyVbucket);
    EXPECT_EQ(bucket->setVBucketState(0, VBucketState::Active, {{"b", "a"}}), Status::Invalid);
}

TEST_F(ReplicaDurabilityTest, LeavingActiveEndsPendingSyncWritesAsAmbiguous) {
    ASSERT_EQ(bucket->setVBucketState(0, VBucketState::Active, {{"a", "b"}}), Status::Success);
    test::storeNow(*bucket, setRequest(0, "k", "before"));
    auto write = durableSet(0, "k", DurabilityLevel::Majority);
    ASSERT_EQ(bucket->setVBucketState(0, VBucketState::Replica), Status::Success);
    ASSERT_EQ(write->calls(), 1);
    EXPECT_EQ(write->result().status, Status::SyncWriteAmbiguous);
    settle();
    ASSERT_EQ(bucket->setVBucketState(0, VBucketState::Active), Status::Success);
    EXPECT_EQ(test::getNow(*bucket, 0, "k").item.value, "before");
    EXPECT_EQ(bucket->stats().syncWritesPending, 0u);
}

TEST_F(ReplicaDurabilityTest, ShrinkingTheChainCommitsWhatTheNewMajorityHolds) {
    ASSERT_EQ(bucket->setVBucketState(0, VBucketState::Active, {{"a", "b"}}), Status::Success);
    auto write = durableSet(0, "k", DurabilityLevel::Majority);
    settle();
    EXPECT_FALSE(write->done());
    ASSERT_EQ(bucket->setVBucketState(0, VBucketState::Active, {{"a"}}), Status::Success);
    settle();
    ASSERT_EQ(write->calls(), 1);
    EXPECT_EQ(write->result().status, Status::Success);
}

}  // namespace
}  // namespace kvexec::engine

namespace kvexec::engine {
namespace {

TEST_F(ReplicaDurabilityTest, AMapOfChangesAppliesWholeOrNotAtAll) {
    const std::vector<VBucketStateChange> bad{{0, VBucketState::Replica, {}},
                                              {1, VBucketState::Active, {{"b", "a"}}}};
    EXPECT_EQ(bucket->setVBucketStates(bad), Status::Invalid);
    EXPECT_EQ(bucket->vbucketAssignment(0)->state, VBucketState::Active);
    const std::vector<VBucketStateChange> outOfRange{{0, VBucketState::Replica, {}},
                                                     {8, VBucketState::Replica, {}}};
    EXPECT_EQ(bucket->setVBucketStates(outOfRange), Status::NotMyVbucket);
    EXPECT_EQ(bucket->vbucketAssignment(0)->state, VBucketState::Active);
    const std::vector<VBucketStateChange> map{{0, VBucketState::Replica, {}},
                                              {1, VBucketState::Active, {{"a", "b"}}},
                                              {2, VBucketState::Dead, {}}};
    ASSERT_EQ(bucket->setVBucketStates(map), Status::Success);
    EXPECT_EQ(bucket->vbucketAssignment(0)->state, VBucketState::Replica);
    EXPECT_EQ(bucket->vbucketAssignment(1)->topology.chain, (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(bucket->vbucketAssignment(2)->state, VBucketState::Dead);
}

}  // namespace
}  // namespace kvexec::engine

namespace kvexec::engine {
namespace {

// Acknowledgements from before a rollback do not count after it: the
// replica's old position names seqnos the new history reuses.
TEST_F(ReplicaDurabilityTest, BecomingActiveAgainForgetsTheOldTermsAcknowledgements) {
    ASSERT_EQ(bucket->setVBucketState(0, VBucketState::Active, {{"a", "b"}}), Status::Success);
    for (int i = 0; i < 3; ++i) {
        auto write = durableSet(0, storage::test::keyOf(i, "k"), DurabilityLevel::Majority);
        ASSERT_EQ(bucket->seqnoAcknowledged(0, "b", highSeqno(0)), Status::Success);
        settle();
        ASSERT_EQ(write->result().status, Status::Success);
    }
    ASSERT_EQ(bucket->setVBucketState(0, VBucketState::Replica), Status::Success);
    ASSERT_EQ(bucket->rollbackReplica(0, 0, {}), Status::Success);
    settle();
    ASSERT_EQ(bucket->setVBucketState(0, VBucketState::Active, {{"a", "b"}}), Status::Success);
    auto write = durableSet(0, "new", DurabilityLevel::Majority);
    settle();
    EXPECT_FALSE(write->done()) << "committed on an acknowledgement of the old history";
    ASSERT_EQ(bucket->seqnoAcknowledged(0, "b", highSeqno(0)), Status::Success);
    settle();
    EXPECT_EQ(write->result().status, Status::Success);
}

// A flush deletes on actives only: a replica takes its active's deletions
// by DCP, and an active handing over takes no write (the new active would
// miss it), so the flush answers TempFail and finishes when retried.
TEST_F(ReplicaDurabilityTest, FlushDeletesOnActivesAloneAndWaitsForAHandOver) {
    for (const Vbid vb : {0, 1, 2}) {
        ASSERT_EQ(test::storeNow(*bucket, setRequest(vb, "k", "v"))->status, Status::Success);
    }
    ASSERT_EQ(bucket->setVBucketState(1, VBucketState::Replica), Status::Success);
    ASSERT_EQ(bucket->setVBucketStates({{2, VBucketState::Active, {}, /*handingOver=*/true}}),
              Status::Success);
    const Seqno replicaSeqno = highSeqno(1);
    const Seqno handingOverSeqno = highSeqno(2);

    Status flushed = Status::Success;
    bucket->flush([&](Status s) { flushed = s; });
    EXPECT_EQ(flushed, Status::TempFail);
    EXPECT_EQ(test::getNow(*bucket, 0, "k").status, Status::KeyNotFound);
    EXPECT_EQ(highSeqno(1), replicaSeqno) << "the replica deleted at a seqno of its own";
    EXPECT_EQ(highSeqno(2), handingOverSeqno) << "the vBucket handing over took a write";

    ASSERT_EQ(bucket->setVBucketStates({{2, VBucketState::Active, {}, false}}), Status::Success);
    bucket->flush([&](Status s) { flushed = s; });
    EXPECT_EQ(flushed, Status::Success);
    EXPECT_EQ(test::getNow(*bucket, 2, "k").status, Status::KeyNotFound);
}

// A dropped collection's documents are deleted by actives alone; on a
// replica and on an active handing over they read as absent at once, and
// no seqno moves.
TEST_F(ReplicaDurabilityTest, ADroppedCollectionIsDeletedOnActivesAloneAndReadsAsGoneEverywhere) {
    ASSERT_EQ(bucket->createScope("s").outcome, ManifestOutcome::Success);
    ASSERT_EQ(bucket->createCollection("s", "c", 0).outcome, ManifestOutcome::Success);
    const CollectionId c = bucket->manifest().findCollection("s", "c")->id;
    for (const Vbid vb : {0, 1, 2}) {
        auto request = setRequest(vb, "k", "v");
        request.collection = c;
        ASSERT_EQ(test::storeNow(*bucket, request)->status, Status::Success);
    }
    ASSERT_EQ(bucket->setVBucketState(1, VBucketState::Replica), Status::Success);
    ASSERT_EQ(bucket->setVBucketStates({{2, VBucketState::Active, {}, /*handingOver=*/true}}),
              Status::Success);
    const Seqno activeSeqno = highSeqno(0);
    const Seqno replicaSeqno = highSeqno(1);
    const Seqno handingOverSeqno = highSeqno(2);

    ASSERT_EQ(bucket->dropCollection("s", "c").outcome, ManifestOutcome::Success);
    EXPECT_GT(highSeqno(0), activeSeqno) << "the active wrote no deletion";
    EXPECT_EQ(highSeqno(1), replicaSeqno) << "the replica deleted at a seqno of its own";
    EXPECT_EQ(highSeqno(2), handingOverSeqno) << "the vBucket handing over took a write";
    EXPECT_EQ(test::getNow(*bucket, 0, DocKey{"k", c}).status, Status::UnknownCollection);
    GetResult replica;
    bucket->getReplica(1, DocKey{"k", c}, [&](GetResult r) { replica = std::move(r); });
    EXPECT_EQ(replica.status, Status::UnknownCollection);

    // Once each is a plain active, it deletes what is left of them.
    ASSERT_EQ(bucket->setVBucketState(1, VBucketState::Active), Status::Success);
    ASSERT_EQ(bucket->setVBucketState(2, VBucketState::Active), Status::Success);
    EXPECT_GT(highSeqno(1), replicaSeqno) << "the promoted replica kept the documents";
    EXPECT_GT(highSeqno(2), handingOverSeqno) << "the takeover undone kept the documents";
    const Seqno afterDeletes = highSeqno(1);
    ASSERT_EQ(bucket->setVBucketState(1, VBucketState::Replica), Status::Success);
    ASSERT_EQ(bucket->setVBucketState(1, VBucketState::Active), Status::Success);
    EXPECT_EQ(highSeqno(1), afterDeletes) << "deleted twice";
}

}  // namespace
}  // namespace kvexec::engine
