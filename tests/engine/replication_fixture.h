// replication_fixture.h: two buckets in one process, node "a" active and
// node "b" its replica, wired the way DCP wires them across the network: a's
// replication stream feeds b's applyReplicated, and b's high prepared seqno
// goes back to a as its acknowledgement. Deterministic on one Manual pool.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "executor/test_support.h"
#include "manual_bucket_fixture.h"

namespace kvexec::engine {

inline const std::string kActive{"a"};
inline const std::string kReplica{"b"};
inline constexpr Vbid kVb = 0;

class ReplicationTest : public ManualBucketTest {
  protected:
    void SetUp() override {
        config.nodeName = kActive;
        ManualBucketTest::SetUp();
        replicaConfig = test::testConfig(replicaDir);
        replicaConfig.nodeName = kReplica;
        replicaConfig.unixTime = [this] { return now.load(); };  // the active's clock
        replicaConfig.onReplicaPrepared = [this](Vbid vbid, Seqno seqno) {
            acks.push_back(seqno);
            if (bucket) {
                bucket->seqnoAcknowledged(vbid, kReplica, seqno);
            }
        };
        openReplica();
        ASSERT_EQ(bucket->setVBucketState(kVb, VBucketState::Active, {{kActive, kReplica}}),
                  Status::Success);
    }
    void TearDown() override {
        stream.reset();
        replica.reset();
        ManualBucketTest::TearDown();
    }
    void openReplica() {
        replica = Bucket::open(pool, replicaConfig);
        pool.runReady(TaskType::Reader);
        ASSERT_EQ(replica->warmupProgress().state, WarmupState::Complete);
        ASSERT_EQ(replica->setVBucketState(kVb, VBucketState::Replica), Status::Success);
    }
    // The replication stream from `from`, applied in order on the replica.
    void connect(Seqno from = 0) {
        stream = bucket->openReplicationStream({kVb, from}, [this](const StreamEvent& e) {
            events.push_back(e.kind);
            if (e.kind == StreamEventKind::StateChanged) {
                return;  // the active's news, not a change
            }
            EXPECT_EQ(replica->applyReplicated(kVb, e), Status::Success) << to_string(e.kind);
        });
        ASSERT_NE(stream, nullptr);
    }
    // Runs both buckets' expiry pagers (the only NonIO tasks with a wake
    // time once settled), one at a time, and what each sets off.
    void runExpiryPagers() {
        for (int pager = 0; pager < 2; ++pager) {
            ASSERT_NE(pool.runNext(TaskType::NonIO), 0u);
            settle();
        }
    }
    void storeExpiring(const std::string& key) {
        auto set = test::setRequest(kVb, key, "v");
        set.expiry = now + 10;
        ASSERT_EQ(test::storeNow(*bucket, set)->status, Status::Success);
    }
    GetResult replicaRead(const std::string& key) {
        GetResult out;
        replica->getReplica(kVb, DocKey{key}, [&](const GetResult& r) { out = r; });
        return out;
    }

    test::TempDir replicaDir;
    BucketConfig replicaConfig;
    std::unique_ptr<Bucket> replica;
    std::shared_ptr<ChangeStream> stream;
    std::vector<StreamEventKind> events;
    std::vector<Seqno> acks;
};

}  // namespace kvexec::engine
