// vBucket states, topologies and failover logs across restarts: kept after
// a clean shutdown, a new history branch after a crash, refused when the
// file is damaged.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "manual_bucket_fixture.h"

namespace kvexec::engine {
namespace {

using test::setRequest;

const std::string kThisNode{"a"};

class VBucketStatePersistenceTest : public ManualBucketTest {
  protected:
    void SetUp() override {
        config.nodeName = kThisNode;
        ManualBucketTest::SetUp();
    }
    FailoverLog logOf(Vbid vbid) { return bucket->failoverLog(vbid).value(); }
};

TEST_F(VBucketStatePersistenceTest, StatesTopologiesAndHistoryOutliveACleanRestart) {
    ASSERT_EQ(bucket->setVBucketState(0, VBucketState::Active, {{"a", "b"}}), Status::Success);
    ASSERT_EQ(bucket->setVBucketState(1, VBucketState::Replica), Status::Success);
    ASSERT_EQ(bucket->setVBucketState(2, VBucketState::Dead), Status::Success);
    const auto log0 = logOf(0);
    const auto token = test::storeNow(*bucket, setRequest(0, "k", "v"))->token;
    EXPECT_EQ(token.vbucketUuid, log0.uuid());
    settle();
    reopen();
    EXPECT_EQ(bucket->vbucketAssignment(0)->topology.chain, (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(bucket->vbucketAssignment(1)->state, VBucketState::Replica);
    EXPECT_EQ(bucket->vbucketAssignment(2)->state, VBucketState::Dead);
    EXPECT_EQ(logOf(0), log0) << "a clean restart starts no new branch";
    EXPECT_EQ(bucket->observeSeqno(0).vbucketUuid, token.vbucketUuid);
    EXPECT_EQ(test::getNow(*bucket, 1, "k").status, Status::NotMyVbucket);
}

// A cluster's node serves nothing after a restart until a map assigns its
// vBuckets (another node may have taken them over meanwhile); the data and
// the history stay.
TEST_F(VBucketStatePersistenceTest, ANodeAwaitingItsAssignmentStartsWithEveryVBucketDead) {
    test::storeNow(*bucket, setRequest(0, "k", "v"));
    const auto log0 = logOf(0);
    settle();
    config.awaitAssignment = true;
    reopen();
    EXPECT_EQ(bucket->vbucketAssignment(0)->state, VBucketState::Dead);
    EXPECT_EQ(bucket->vbucketAssignment(3)->state, VBucketState::Dead);
    EXPECT_EQ(test::getNow(*bucket, 0, "k").status, Status::NotMyVbucket);
    EXPECT_EQ(test::storeNow(*bucket, setRequest(0, "k", "w"))->status, Status::NotMyVbucket);
    EXPECT_EQ(logOf(0).entries().back(), log0.entries().back()) << "its history is kept";
    ASSERT_EQ(bucket->setVBucketState(0, VBucketState::Active, {{kThisNode}}), Status::Success);
    EXPECT_EQ(test::getNow(*bucket, 0, "k").item.value, "v");
}

TEST_F(VBucketStatePersistenceTest, ACrashStartsANewBranchAtThePersistedSeqno) {
    test::storeNow(*bucket, setRequest(0, "k1", "v"));
    test::storeNow(*bucket, setRequest(0, "k2", "v"));
    settle();
    test::storeNow(*bucket, setRequest(0, "k3", "unsaved"));  // not flushed: lost in the crash
    const auto before = logOf(0);
    test::TempDir copy;
    auto crashed = openCrashCopy(copy);
    const auto after = crashed->failoverLog(0).value();
    ASSERT_EQ(after.entries().size(), before.entries().size() + 1);
    EXPECT_NE(after.uuid(), before.uuid());
    EXPECT_EQ(after.entries().front().seqno, 2u);
    EXPECT_EQ(after.entries()[1], before.entries().front());
    // A consumer that saw seqno 3 on the old branch must roll back to 2.
    EXPECT_EQ(decideRollback(after, 2, 0, {before.uuid(), 3, 3, 3}), (RollbackDecision{true, 2}));
}

TEST_F(VBucketStatePersistenceTest, BecomingActiveStartsABranchAtTheHighSeqno) {
    test::storeNow(*bucket, setRequest(0, "k", "v"));
    ASSERT_EQ(bucket->setVBucketState(0, VBucketState::Replica), Status::Success);
    const auto asReplica = logOf(0);
    ASSERT_EQ(bucket->setVBucketState(0, VBucketState::Active), Status::Success);
    const auto asActive = logOf(0);
    ASSERT_EQ(asActive.entries().size(), asReplica.entries().size() + 1);
    EXPECT_EQ(asActive.entries().front().seqno, 1u);
    EXPECT_EQ(test::storeNow(*bucket, setRequest(0, "k", "w"))->token.vbucketUuid, asActive.uuid());
    // Staying active (a new topology) is not a new branch.
    ASSERT_EQ(bucket->setVBucketState(0, VBucketState::Active, {{"a", "c"}}), Status::Success);
    EXPECT_EQ(logOf(0), asActive);
}

TEST_F(VBucketStatePersistenceTest, ADamagedStatesFileFailsWarmupNamingIt) {
    bucket.reset();
    std::ofstream(dir.path() / "vbuckets.json") << "{\"shutdown\": \"clean\", \"vbuckets\": [";
    bucket = Bucket::open(pool, config);
    pool.runReady(TaskType::Reader);
    const auto progress = bucket->warmupProgress();
    EXPECT_EQ(progress.state, WarmupState::Failed);
    EXPECT_NE(progress.error.find("vbuckets.json"), std::string::npos) << progress.error;
    bucket.reset();
    // The failed bucket did not overwrite the file it could not read.
    std::ifstream in(dir.path() / "vbuckets.json");
    std::string text((std::istreambuf_iterator<char>(in)), {});
    EXPECT_EQ(text, "{\"shutdown\": \"clean\", \"vbuckets\": [");
}

TEST_F(VBucketStatePersistenceTest, AnotherNumberOfVBucketsIsRefused) {
    bucket.reset();
    config.numVBuckets = 16;
    bucket = Bucket::open(pool, config);
    pool.runReady(TaskType::Reader);
    EXPECT_EQ(bucket->warmupProgress().state, WarmupState::Failed);
    EXPECT_NE(bucket->warmupProgress().error.find("hold 8 vBuckets"), std::string::npos)
        << bucket->warmupProgress().error;
}

TEST_F(VBucketStatePersistenceTest, ADirectoryWithoutStatesOpensWithEveryVBucketActive) {
    test::storeNow(*bucket, setRequest(3, "k", "v"));
    settle();
    bucket.reset();
    std::filesystem::remove(dir.path() / "vbuckets.json");
    open();
    EXPECT_EQ(bucket->vbucketAssignment(3)->state, VBucketState::Active);
    EXPECT_EQ(test::getNow(*bucket, 3, "k").item.value, "v");
}

TEST_F(VBucketStatePersistenceTest, AChainLedByAnotherNodeIsRefusedAtWarmup) {
    ASSERT_EQ(bucket->setVBucketState(0, VBucketState::Active, {{"a", "b"}}), Status::Success);
    bucket.reset();
    config.nodeName = "renamed";
    bucket = Bucket::open(pool, config);
    pool.runReady(TaskType::Reader);
    EXPECT_EQ(bucket->warmupProgress().state, WarmupState::Failed);
    EXPECT_NE(bucket->warmupProgress().error.find("does not lead"), std::string::npos)
        << bucket->warmupProgress().error;
}

}  // namespace
}  // namespace kvexec::engine
