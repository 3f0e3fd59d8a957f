// SyncWrite prepares kept apart from committed documents: a commit and an
// abort are mutations of their own, streams see only committed changes,
// and a prepare a crash left without its commit is decided again at
// warmup.
#include <gtest/gtest.h>

#include <filesystem>

#include "manual_bucket_fixture.h"

namespace kvexec::engine {
namespace {

using namespace std::chrono_literals;
using test::pending;
using test::setRequest;

const std::string kThisNode{"a"};

class PreparePersistenceTest : public ManualBucketTest {
  protected:
    void SetUp() override {
        config.nodeName = kThisNode;
        config.steadyTime = [this] { return steady.load(); };
        ManualBucketTest::SetUp();
    }
    std::atomic<Clock::time_point> steady{Clock::time_point{} + 1h};
    test::TempDir copy;
};

TEST_F(PreparePersistenceTest, APreparePersistedWithoutItsCommitIsCommittedAtWarmup) {
    test::storeNow(*bucket, setRequest(0, "k", "old"));
    settle();
    auto write = pending<MutationResult>();
    bucket->store(setRequest(0, "k", "new", DurabilityLevel::PersistToMajority), write->callback());
    pool.runReady(TaskType::Writer);  // the prepare reaches the disk; the commit never runs
    auto crashed = openCrashCopy(copy);
    const auto got = test::getNow(*crashed, 0, "k");
    ASSERT_EQ(got.status, Status::Success);
    EXPECT_EQ(got.item.value, "new");
    EXPECT_EQ(crashed->stats().syncWritesPending, 0u);
    // The original completes as usual; its CAS is the one warmup committed.
    settle();
    EXPECT_EQ(write->result().status, Status::Success);
    EXPECT_EQ(got.item.meta.cas, write->result().cas);
}

TEST_F(PreparePersistenceTest, AnAbortedPrepareStaysAbortedAfterACrash) {
    test::storeNow(*bucket, setRequest(0, "k", "old"));
    ASSERT_EQ(bucket->setVBucketState(0, VBucketState::Active, {{"a", "b"}}), Status::Success);
    auto req = setRequest(0, "k", "new", DurabilityLevel::Majority);
    req.durability.timeout = 1s;
    auto write = pending<MutationResult>();
    bucket->store(req, write->callback());
    settle();  // the prepare is on disk; the replica never acknowledges
    steady.store(steady.load() + 1s);
    pool.runNext(TaskType::NonIO);
    ASSERT_EQ(write->result().status, Status::SyncWriteAmbiguous);
    settle();  // and so is the abort
    auto crashed = openCrashCopy(copy);
    EXPECT_EQ(test::getNow(*crashed, 0, "k").item.value, "old");
    EXPECT_EQ(crashed->stats().syncWritesPending, 0u);
}

TEST_F(PreparePersistenceTest, AWarmedUpPrepareWaitsForTheReplicaOfItsChain) {
    ASSERT_EQ(bucket->setVBucketState(0, VBucketState::Active, {{"a", "b"}}), Status::Success);
    auto write = pending<MutationResult>();
    bucket->store(setRequest(0, "k", "v", DurabilityLevel::Majority), write->callback());
    settle();
    const Seqno prepared = bucket->observeSeqno(0).currentSeqno;
    auto crashed = openCrashCopy(copy);
    EXPECT_EQ(crashed->stats().syncWritesPending, 1u);
    // It may have been acknowledged before the crash: neither "absent" nor
    // a new write until it commits.
    EXPECT_EQ(test::getNow(*crashed, 0, "k").status, Status::SyncWriteReCommitInProgress);
    auto other = pending<MutationResult>();
    crashed->store(setRequest(0, "k", "w"), other->callback());
    EXPECT_EQ(other->result().status, Status::SyncWriteReCommitInProgress);
    ASSERT_EQ(crashed->seqnoAcknowledged(0, "b", prepared), Status::Success);
    while (crashPool.runReady(TaskType::NonIO) + crashPool.runReady(TaskType::Writer) != 0) {
    }
    EXPECT_EQ(test::getNow(*crashed, 0, "k").item.value, "v");
}

TEST_F(PreparePersistenceTest, StreamsSeeCommitsAsMutationsAndNeverPrepares) {
    std::vector<Item> seen;
    auto stream = bucket->openStream({0, 0}, [&](const Item& item) { seen.push_back(item); });
    ASSERT_NE(stream, nullptr);
    ASSERT_EQ(bucket->setVBucketState(0, VBucketState::Active, {{"a", "b"}}), Status::Success);
    auto committed = pending<MutationResult>();
    bucket->store(setRequest(0, "c", "v", DurabilityLevel::Majority), committed->callback());
    auto aborted = pending<MutationResult>();
    auto req = setRequest(0, "x", "never", DurabilityLevel::Majority);
    req.durability.timeout = 1s;
    bucket->store(req, aborted->callback());
    settle();
    EXPECT_TRUE(seen.empty()) << "a stream saw an uncommitted prepare";
    ASSERT_EQ(bucket->seqnoAcknowledged(0, "b", 1), Status::Success);  // c's prepare only
    settle();
    steady.store(steady.load() + 1s);
    pool.runNext(TaskType::NonIO);
    settle();
    ASSERT_EQ(committed->result().status, Status::Success);
    ASSERT_EQ(aborted->result().status, Status::SyncWriteAmbiguous);
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen[0].key, "c");
    EXPECT_EQ(seen[0].meta.seqno, committed->result().token.seqno);
    // A stream that starts from the disk sees the same.
    std::vector<Item> backfilled;
    auto late = bucket->openStream({0, 0}, [&](const Item& item) { backfilled.push_back(item); });
    settle();
    ASSERT_EQ(backfilled.size(), 1u);
    EXPECT_EQ(backfilled[0].key, "c");
}

}  // namespace
}  // namespace kvexec::engine

namespace kvexec::engine {
namespace {

TEST_F(PreparePersistenceTest, ADurableDeletePendingAtACrashIsADeleteAfterWarmup) {
    test::storeNow(*bucket, setRequest(0, "k", "old"));
    settle();
    auto removed = pending<MutationResult>();
    RemoveRequest remove{0, "k", 0, {DurabilityLevel::PersistToMajority, {}}};
    bucket->remove(remove, removed->callback());
    pool.runReady(TaskType::Writer);  // the prepare reaches the disk; the commit never runs
    auto crashed = openCrashCopy(copy);
    EXPECT_EQ(test::getNow(*crashed, 0, "k").status, Status::KeyNotFound);
    settle();
    EXPECT_EQ(removed->result().status, Status::Success);
}

}  // namespace
}  // namespace kvexec::engine
