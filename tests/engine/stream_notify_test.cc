// How the engine wakes its change streams' tasks (BucketConfig::
// streamNotify, seed 000's comparison of wake() and wakeAndWait()): streams
// woken by wakeAndWait() get every item, as with wake(), step by step on
// the Manual pool and with front-end threads racing the stream tasks on
// Wheel and Classic; and the notify timing (measureStreamNotify) counts
// only when asked.
#include <gtest/gtest.h>

#include <mutex>
#include <thread>
#include <vector>

#include "engine_test_support.h"
#include "executor/backends.h"
#include "executor/test_support.h"
#include "manual_bucket_fixture.h"

namespace kvexec::engine {
namespace {

using kvexec::test::waitFor;
using storage::test::keyOf;
using test::setRequest;
using test::storeNow;

// --- Manual pool: each notify, each delivery ----------------------------------

class ManualStreamNotifyTest : public ManualBucketTest,
                               public ::testing::WithParamInterface<StreamNotify> {
  protected:
    void SetUp() override {
        config.streamNotify = GetParam();
        config.measureStreamNotify = true;
        ManualBucketTest::SetUp();
    }
};

INSTANTIATE_TEST_SUITE_P(Notify, ManualStreamNotifyTest,
                         ::testing::Values(StreamNotify::Wake, StreamNotify::WakeAndWait),
                         [](const auto& info) { return std::string(to_string(info.param)); });

TEST_P(ManualStreamNotifyTest, EveryMutationArrivesAndOnlyAnEmptyBufferNotifies) {
    std::vector<Seqno> seen;
    auto stream = bucket->openReplicationStream({0, 0}, [&](const StreamEvent& e) {
        if (e.kind == StreamEventKind::Mutation) {
            seen.push_back(e.item.meta.seqno);
        }
    });
    ASSERT_NE(stream, nullptr);
    ASSERT_EQ(storeNow(*bucket, setRequest(0, "a", "1"))->status, Status::Success);
    ASSERT_EQ(storeNow(*bucket, setRequest(0, "b", "2"))->status, Status::Success);
    // The second set found the stream's buffer non-empty: one notify.
    EXPECT_EQ(bucket->stats().streamNotifies, 1u);
    settle();
    EXPECT_EQ(seen, (std::vector<Seqno>{1, 2}));
    ASSERT_EQ(storeNow(*bucket, setRequest(0, "c", "3"))->status, Status::Success);
    const auto stats = bucket->stats();
    EXPECT_EQ(stats.streamNotifies, 2u);
    EXPECT_GT(stats.streamNotifyNs, 0u);
    settle();
    EXPECT_EQ(seen, (std::vector<Seqno>{1, 2, 3}));
    EXPECT_EQ(stream->lastDelivered(), 3u);
    stream->close();
}

TEST_F(ManualBucketTest, StreamNotifiesAreNotTimedUnlessAsked) {
    ASSERT_EQ(config.streamNotify, StreamNotify::Wake);
    ASSERT_FALSE(config.measureStreamNotify);
    std::size_t events = 0;
    auto stream = bucket->openStream({0, 0}, [&](const Item&) { ++events; });
    ASSERT_EQ(storeNow(*bucket, setRequest(0, "a", "1"))->status, Status::Success);
    settle();
    EXPECT_EQ(events, 1u);
    EXPECT_EQ(bucket->stats().streamNotifies, 0u);
    EXPECT_EQ(bucket->stats().streamNotifyNs, 0u);
    stream->close();
}

// --- Threads: front ends racing the stream tasks -------------------------------

template <class BackendTag>
class ThreadedStreamNotifyTest : public ::testing::Test {
  protected:
    void SetUp() override {
        PoolConfig poolConfig;
        poolConfig.writers = 2;
        poolConfig.readers = 2;
        poolConfig.auxIO = 1;
        poolConfig.nonIO = 2;
        pool = ExecutorPool::create(BackendTag::value, poolConfig);
        config.streamNotify = StreamNotify::WakeAndWait;
        config.measureStreamNotify = true;
        bucket = Bucket::open(*pool, config);
        ASSERT_TRUE(
            waitFor([&] { return bucket->warmupProgress().state != WarmupState::Running; }));
        ASSERT_EQ(bucket->warmupProgress().state, WarmupState::Complete);
    }
    void TearDown() override { bucket.reset(); }

    test::TempDir dir;
    BucketConfig config = test::testConfig(dir);
    std::unique_ptr<ExecutorPool> pool;
    std::unique_ptr<Bucket> bucket;
};

TYPED_TEST_SUITE(ThreadedStreamNotifyTest, kvexec::test::ThreadedBackends,
                 kvexec::test::BackendNames);

// Three replication streams per vBucket, opened from 0 over a persisted
// document (so each also backfills, its completion woken the same way),
// then two front-end threads set across every vBucket: each stream gets
// every seqno of its vBucket once, in order.
TYPED_TEST(ThreadedStreamNotifyTest, WakeAndWaitStreamsGetEveryItem) {
    constexpr int kStreamsPerVBucket = 3, kThreads = 2, kWrites = 2'000;
    auto& bucket = *this->bucket;
    const auto vbuckets = static_cast<Vbid>(this->config.numVBuckets);
    for (Vbid vb = 0; vb < vbuckets; ++vb) {
        ASSERT_EQ(storeNow(bucket, setRequest(vb, "before", "x"))->status, Status::Success);
    }
    ASSERT_TRUE(waitFor([&] {
        for (Vbid vb = 0; vb < vbuckets; ++vb) {
            if (bucket.observeSeqno(vb).persistedSeqno == 0) {
                return false;
            }
        }
        return true;
    }));

    struct Seen {
        std::mutex mutex;
        std::vector<Seqno> seqnos;  // guarded by mutex
    };
    std::vector<std::unique_ptr<Seen>> seen;
    std::vector<std::shared_ptr<ChangeStream>> streams;
    for (Vbid vb = 0; vb < vbuckets; ++vb) {
        for (int s = 0; s < kStreamsPerVBucket; ++s) {
            auto& mine = *seen.emplace_back(std::make_unique<Seen>());
            streams.push_back(bucket.openReplicationStream({vb, 0}, [&mine](const StreamEvent& e) {
                if (e.kind == StreamEventKind::Mutation) {
                    std::lock_guard lock(mine.mutex);
                    mine.seqnos.push_back(e.item.meta.seqno);
                }
            }));
            ASSERT_NE(streams.back(), nullptr);
        }
    }
    // Each stream past its backfill before the writes: a write that finds
    // every stream still reading the disk notifies none (the stats below
    // would count nothing).
    for (const auto& stream : streams) {
        ASSERT_TRUE(waitFor([&] { return stream->lastDelivered() >= 1; }))
            << "vb:" << stream->vbid() << " never delivered its backfill";
    }

    std::vector<std::thread> frontEnds;
    for (int t = 0; t < kThreads; ++t) {
        frontEnds.emplace_back([&, t] {
            for (int i = 0; i < kWrites; ++i) {
                const auto n = static_cast<std::uint64_t>(t * kWrites + i);
                const auto result =
                    storeNow(bucket, setRequest(static_cast<Vbid>(n % vbuckets), keyOf(n), "v"));
                EXPECT_TRUE(result && result->status == Status::Success);
            }
        });
    }
    for (auto& t : frontEnds) {
        t.join();
    }

    for (std::size_t i = 0; i < streams.size(); ++i) {
        const Vbid vb = streams[i]->vbid();
        const Seqno high = bucket.observeSeqno(vb).currentSeqno;
        ASSERT_TRUE(waitFor([&] { return streams[i]->lastDelivered() == high; }))
            << "vb:" << vb << " stream " << i << " stopped at " << streams[i]->lastDelivered()
            << " of " << high;
        std::lock_guard lock(seen[i]->mutex);
        std::vector<Seqno> expected;
        for (Seqno s = 1; s <= high; ++s) {
            expected.push_back(s);
        }
        EXPECT_EQ(seen[i]->seqnos, expected) << "vb:" << vb << " stream " << i;
    }
    const auto stats = bucket.stats();
    EXPECT_GT(stats.streamNotifies, 0u);
    EXPECT_GT(stats.streamNotifyNs, 0u);
    for (auto& stream : streams) {
        stream->close();
    }
}

}  // namespace
}  // namespace kvexec::engine
