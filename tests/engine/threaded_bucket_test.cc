// The engine with real threads, on every threaded backend: the behaviour
// the Manual tests pin down step by step must hold when front-end threads,
// flushers, completion, timeout and stream tasks race (run under TSan).
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <thread>

#include "engine_test_support.h"
#include "executor/backends.h"
#include "executor/test_support.h"

namespace kvexec::engine {
namespace {

using kvexec::test::waitFor;
using storage::test::keyOf;
using test::getNow;
using test::pending;
using test::setRequest;
using test::storeNow;

template <class BackendTag>
class ThreadedBucketTest : public ::testing::Test {
  protected:
    void SetUp() override {
        PoolConfig poolConfig;
        poolConfig.writers = 2;
        poolConfig.readers = 2;
        poolConfig.auxIO = 1;
        poolConfig.nonIO = 2;
        pool = ExecutorPool::create(BackendTag::value, poolConfig);
        open();
    }
    void TearDown() override { bucket.reset(); }
    void open() {
        bucket = Bucket::open(*pool, config);
        ASSERT_TRUE(
            waitFor([&] { return bucket->warmupProgress().state != WarmupState::Running; }));
        ASSERT_EQ(bucket->warmupProgress().state, WarmupState::Complete);
    }
    void reopen() {
        bucket.reset();
        open();
    }
    // `threads` front-end threads run body(thread index) at once.
    template <class Body>
    static void onThreads(int threads, Body body) {
        std::vector<std::thread> all;
        for (int t = 0; t < threads; ++t) {
            all.emplace_back(body, t);
        }
        for (auto& t : all) {
            t.join();
        }
    }

    test::TempDir dir;
    BucketConfig config = test::testConfig(dir);
    std::unique_ptr<ExecutorPool> pool;
    std::unique_ptr<Bucket> bucket;
};

TYPED_TEST_SUITE(ThreadedBucketTest, kvexec::test::ThreadedBackends, kvexec::test::BackendNames);

TYPED_TEST(ThreadedBucketTest, ConcurrentDurableWritesAllCommitAndSurviveReopen) {
    constexpr int kThreads = 4, kWrites = 100;
    std::vector<std::shared_ptr<test::Pending<MutationResult>>> results(kThreads * kWrites);
    this->onThreads(kThreads, [&](int t) {
        for (int i = 0; i < kWrites; ++i) {
            const int n = t * kWrites + i;
            results[static_cast<std::size_t>(n)] = pending<MutationResult>();
            const auto level = static_cast<DurabilityLevel>(1 + n % 3);
            this->bucket->store(setRequest(static_cast<Vbid>(n % 8),
                                           keyOf(static_cast<std::uint64_t>(n)), "v", level),
                                results[static_cast<std::size_t>(n)]->callback());
        }
    });
    ASSERT_TRUE(waitFor([&] {
        for (const auto& r : results) {
            if (!r->done()) {
                return false;
            }
        }
        return true;
    }));
    for (const auto& r : results) {
        EXPECT_EQ(r->calls(), 1);
        EXPECT_EQ(r->result().status, Status::Success);
    }
    this->reopen();
    for (int n = 0; n < kThreads * kWrites; ++n) {
        EXPECT_EQ(
            getNow(*this->bucket, static_cast<Vbid>(n % 8), keyOf(static_cast<std::uint64_t>(n)))
                .status,
            Status::Success);
    }
}

TYPED_TEST(ThreadedBucketTest, StreamOpenedWhileWritingSeesIncreasingSeqnosAndTheLatestValues) {
    constexpr int kThreads = 2, kWrites = 300;
    std::mutex mutex;
    std::vector<Item> seen;  // guarded by mutex
    std::shared_ptr<ChangeStream> stream;
    this->onThreads(kThreads + 1, [&](int t) {
        if (t == kThreads) {
            storeNow(*this->bucket, setRequest(0, "first", "x"));
            stream = this->bucket->openStream({0, 0}, [&](const Item& item) {
                std::lock_guard lock(mutex);
                seen.push_back(item);
            });
            return;
        }
        for (int i = 0; i < kWrites; ++i) {
            storeNow(*this->bucket,
                     setRequest(0, keyOf(static_cast<std::uint64_t>(i % 50)),
                                keyOf(static_cast<std::uint64_t>(t * kWrites + i), "v")));
        }
    });
    ASSERT_TRUE(stream);
    const Seqno high = this->bucket->observeSeqno(0).currentSeqno;
    ASSERT_TRUE(waitFor([&] { return stream->lastDelivered() == high; }));
    std::lock_guard lock(mutex);
    std::map<std::string, std::string> latest;
    for (std::size_t i = 0; i < seen.size(); ++i) {
        if (i > 0) {
            ASSERT_LT(seen[i - 1].meta.seqno, seen[i].meta.seqno);
        }
        latest[seen[i].key] = seen[i].value;
    }
    for (const auto& [key, value] : latest) {
        EXPECT_EQ(getNow(*this->bucket, 0, key).item.value, value) << key;
    }
    stream->close();
}

TYPED_TEST(ThreadedBucketTest, TimeoutsRacingCommitsCompleteEachWriteOnceAndLoseNoSuccess) {
    constexpr int kThreads = 2, kWrites = 200;
    std::vector<std::shared_ptr<test::Pending<MutationResult>>> results(kThreads * kWrites);
    this->onThreads(kThreads, [&](int t) {
        std::mt19937 random(static_cast<unsigned>(t));
        for (int i = 0; i < kWrites; ++i) {
            const auto n = static_cast<std::size_t>(t * kWrites + i);
            results[n] = pending<MutationResult>();
            auto request = setRequest(static_cast<Vbid>(n % 8), keyOf(n), "v",
                                      DurabilityLevel::PersistToMajority);
            request.durability.timeout = std::chrono::milliseconds(1 + random() % 3);
            this->bucket->store(request, results[n]->callback());
        }
    });
    ASSERT_TRUE(waitFor([&] {
        for (const auto& r : results) {
            if (!r->done()) {
                return false;
            }
        }
        return true;
    }));
    std::vector<std::size_t> committed;
    for (std::size_t n = 0; n < results.size(); ++n) {
        ASSERT_EQ(results[n]->calls(), 1);
        const auto status = results[n]->result().status;
        ASSERT_TRUE(status == Status::Success || status == Status::SyncWriteAmbiguous)
            << to_string(status);
        if (status == Status::Success) {
            committed.push_back(n);
        }
    }
    this->reopen();
    for (const auto n : committed) {
        EXPECT_EQ(getNow(*this->bucket, static_cast<Vbid>(n % 8), keyOf(n)).status,
                  Status::Success);
    }
}

}  // namespace
}  // namespace kvexec::engine
