// The cluster's bucket-wide REST requests (server/cluster_admin.h) against
// a private etcd and a real bucket: the first manifest change seeds etcd
// with the node's own manifest, a change decides on what etcd holds, a
// flush raises the count and waits for every node, and none is asked
// while a rebalance runs.
#include "server/cluster_admin.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <thread>

#include "etcd_fixture.h"
#include "kvexec/executor_pool.h"
#include "storage/storage_test_util.h"
#include "support/wait.h"

namespace kvexec::server {
namespace {

using engine::ManifestEdit;
using engine::ManifestOutcome;

class ClusterAdminTest : public cluster::test::EtcdTest {
  protected:
    void SetUp() override {
        EtcdTest::SetUp();
        if (HasFatalFailure()) {
            return;
        }
        engine::BucketConfig config;
        config.dataDir = dir_.path();
        config.numVBuckets = 4;
        config.numShards = 1;
        config.syncMode = storage::SyncMode::None;
        pool_ = ExecutorPool::create(Backend::Wheel);
        bucket_ = engine::Bucket::open(*pool_, config);
        kvexec::test::waitUntil(
            [&] { return bucket_->warmupProgress().state != engine::WarmupState::Running; },
            cluster::test::kEtcdDeadline);
        ASSERT_EQ(bucket_->warmupProgress().state, engine::WarmupState::Complete);
        admin_ = std::make_unique<ClusterAdmin>(etcd().endpoint(), kKeys.root(), *bucket_);
    }

    std::optional<std::string> valueOf(const std::string& key) {
        auto held = cluster::EtcdClient(etcd().endpoint()).get(key);
        return held ? std::optional(held->value) : std::nullopt;
    }

    const cluster::ClusterKeys kKeys{"/kvexec/test"};
    storage::test::TempDir dir_;
    std::unique_ptr<ExecutorPool> pool_;
    std::unique_ptr<engine::Bucket> bucket_;
    std::unique_ptr<ClusterAdmin> admin_;
};

TEST_F(ClusterAdminTest, TheFirstChangeSeedsEtcdWithThisNodesManifestThenEtcdDecides) {
    ASSERT_EQ(bucket_->createCollection("_default", "mine", 0).outcome, ManifestOutcome::Success);
    admin_->close();  // what is tested here is etcd's manifest, not the wait for the nodes
    const auto first = admin_->change(ManifestEdit::createCollection("_default", "c", 0));
    ASSERT_EQ(first.outcome, ManifestOutcome::Success) << first.message;
    auto held = engine::decodeManifestState(valueOf(kKeys.manifest()).value());
    EXPECT_EQ(held.manifest.findCollection("_default", "mine")->id, 8u);
    EXPECT_EQ(held.manifest.findCollection("_default", "c")->id, 9u);
    EXPECT_EQ(held.manifest.uid, first.uid);
    EXPECT_EQ(bucket_->manifest().findCollection("_default", "c"), nullptr)
        << "the node adopts it from etcd (ClusterNode), not here";

    // Another node's change meanwhile: this one decides on it.
    ASSERT_EQ(
        engine::applyManifestEdit(held, ManifestEdit::createCollection("_default", "x", 0)).outcome,
        ManifestOutcome::Success);
    cluster::EtcdClient(etcd().endpoint()).put(kKeys.manifest(), encodeManifestState(held));
    EXPECT_EQ(admin_->change(ManifestEdit::createCollection("_default", "x", 0)).outcome,
              ManifestOutcome::CollectionExists);
    cluster::EtcdClient(etcd().endpoint()).put(kKeys.manifest(), "{not json");
    EXPECT_EQ(admin_->change(ManifestEdit::createScope("s")).outcome,
              ManifestOutcome::StorageFailure);
}

TEST_F(ClusterAdminTest, AFlushRaisesTheCountAndSucceedsOnceEveryNodeHasFlushed) {
    auto flushed = std::async(std::launch::async, [&] { return admin_->flush(); });
    kvexec::test::waitUntil([&] { return valueOf(kKeys.flush()) == "1"; },
                            cluster::test::kEtcdDeadline, std::chrono::milliseconds(10));
    ASSERT_EQ(valueOf(kKeys.flush()), "1");
    EXPECT_EQ(flushed.wait_for(std::chrono::milliseconds(100)), std::future_status::timeout)
        << "answered before the nodes flushed";
    cluster::ClusterState state;
    state.flushes = 1;
    state.flushedEverywhere = 1;
    admin_->observe(state);
    const auto outcome = flushed.get();
    EXPECT_EQ(outcome.status, engine::Status::Success) << outcome.message;
}

TEST_F(ClusterAdminTest, AFlushIsRefusedWhileARebalanceRuns) {
    cluster::EtcdClient(etcd().endpoint()).put(kKeys.rebalance(), "{}");
    const auto outcome = admin_->flush();
    EXPECT_EQ(outcome.status, engine::Status::TempFail);
    EXPECT_NE(outcome.message.find("rebalance"), std::string::npos) << outcome.message;
    EXPECT_EQ(valueOf(kKeys.flush()), std::nullopt) << "no node was asked to flush";
}

// A node that leads vBuckets and is down would keep their documents (its
// flush count would rise without it): refused until it is back.
TEST_F(ClusterAdminTest, AFlushIsRefusedWhileANodeThatLeadsVBucketsIsDown) {
    cluster::ClusterState state;
    state.activesDown = {"n1", "n2"};
    admin_->observe(state);
    const auto outcome = admin_->flush();
    EXPECT_EQ(outcome.status, engine::Status::TempFail);
    EXPECT_NE(outcome.message.find("n1, n2"), std::string::npos) << outcome.message;
    EXPECT_EQ(valueOf(kKeys.flush()), std::nullopt) << "no node was asked to flush";
    state.activesDown.clear();
    state.flushes = state.flushedEverywhere = 1;  // as the nodes will say
    admin_->observe(state);
    EXPECT_EQ(admin_->flush().status, engine::Status::Success);
    EXPECT_EQ(valueOf(kKeys.flush()), "1");
}

}  // namespace
}  // namespace kvexec::server
