// The engine with real threads, on every threaded backend: the behaviour
// the Manual tests pin down step by step must hold when front-end threads,
// flushers, completion, timeout and stream tasks race (run under TSan).
#include <gtest/gtest.h>

#include <algorithm>
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

// Dropping and re-creating a collection while writers (some durable) use it
// and the default collection: every write completes once, a write to the
// collection either lands or is refused (UnknownCollection, or ambiguous
// when a drop aborted it), and the default collection loses nothing, also
// on disk (the flusher's batch once dropped a default-collection key whose
// twin in a collection came before it: see deduplicated() in flusher.cc).
TYPED_TEST(ThreadedBucketTest, CollectionsDroppedUnderLoadLoseNothingElse) {
    constexpr int kWriters = 3, kWrites = 200, kDrops = 20;
    ASSERT_EQ(this->bucket->createScope("s").outcome, ManifestOutcome::Success);
    std::vector<std::shared_ptr<test::Pending<MutationResult>>> inCollection(kWriters * kWrites);
    std::vector<std::shared_ptr<test::Pending<MutationResult>>> inDefault(kWriters * kWrites);
    this->onThreads(kWriters + 1, [&](int t) {
        if (t == kWriters) {
            for (int d = 0; d < kDrops; ++d) {
                this->bucket->createCollection("s", "c", 0);
                this->bucket->dropCollection("s", "c");
            }
            return;
        }
        for (int i = 0; i < kWrites; ++i) {
            const auto n = static_cast<std::size_t>(t * kWrites + i);
            const auto vbid = static_cast<Vbid>(n % 8);
            const auto level =
                i % 4 == 0 ? DurabilityLevel::PersistToMajority : DurabilityLevel::None;
            const auto manifest = this->bucket->manifest();
            const auto* c = manifest.findCollection("s", "c");
            auto request = setRequest(vbid, keyOf(n), "v", level);
            request.collection = c == nullptr ? 99 : c->id;
            inCollection[n] = pending<MutationResult>();
            this->bucket->store(request, inCollection[n]->callback());
            inDefault[n] = pending<MutationResult>();
            this->bucket->store(setRequest(vbid, keyOf(n), "d", level), inDefault[n]->callback());
        }
    });
    const auto allDone = [](const auto& results) {
        return std::ranges::all_of(results, [](const auto& r) { return r->done(); });
    };
    ASSERT_TRUE(waitFor([&] { return allDone(inCollection) && allDone(inDefault); }));
    for (const auto& r : inCollection) {
        EXPECT_EQ(r->calls(), 1);
        const Status s = r->result().status;
        EXPECT_TRUE(s == Status::Success || s == Status::UnknownCollection ||
                    s == Status::SyncWriteAmbiguous)
            << to_string(s);
    }
    for (const auto& r : inDefault) {
        EXPECT_EQ(r->calls(), 1);
        EXPECT_EQ(r->result().status, Status::Success);
    }
    this->reopen();
    EXPECT_EQ(this->bucket->manifest().findCollection("s", "c"), nullptr);
    EXPECT_EQ(this->bucket->stats().currItems, static_cast<std::uint64_t>(kWriters * kWrites));
    for (std::size_t n = 0; n < inDefault.size(); ++n) {
        EXPECT_EQ(getNow(*this->bucket, static_cast<Vbid>(n % 8), keyOf(n)).item.value, "d") << n;
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

namespace kvexec::engine {
namespace {

// Range scans while writers churn other keys of the same vBucket and two
// scanners continue their scans on threads of their own: every key that
// lives through a scan comes back exactly once, in order, with its value;
// a churned key comes back at most once.
TYPED_TEST(ThreadedBucketTest, ScansRacingWritersReturnEveryStableKeyOnceInOrder) {
    constexpr int kStable = 300, kChurned = 300, kScansPerThread = 20;
    for (int i = 0; i < kStable; ++i) {
        ASSERT_EQ(storeNow(*this->bucket, setRequest(0, keyOf(i, "s"), "stable"))->status,
                  Status::Success);
    }
    std::atomic<bool> scanning{true};
    std::atomic<int> scannersLeft{2};
    this->onThreads(4, [&](int t) {
        if (t >= 2) {  // writers: set and delete churned keys until the scans end
            std::mt19937 random(static_cast<unsigned>(t));
            while (scanning.load()) {
                const auto key = keyOf(random() % kChurned, "c");
                if (random() % 2 == 0) {
                    storeNow(*this->bucket, setRequest(0, key, "churn"));
                } else {
                    this->bucket->remove(RemoveRequest{0, key, 0, {}},
                                         [](const MutationResult&) {});
                }
            }
            return;
        }
        const auto scans = [&] {
            for (int scan = 0; scan < kScansPerThread; ++scan) {
                RangeScanRequest request;
                request.keys = KeyRange{"", false, "\xff", false};
                const auto created = this->bucket->createRangeScan(request);
                ASSERT_EQ(created.status, Status::Success);
                std::vector<std::string> keys;
                for (bool complete = false; !complete;) {
                    auto batch = this->bucket->continueRangeScan(0, created.id, {17, {}, 0});
                    ASSERT_EQ(batch.status, Status::Success);
                    for (const auto& item : batch.items) {
                        if (item.key[0] == 's') {
                            ASSERT_EQ(item.value, "stable") << item.key;
                        }
                        keys.push_back(item.key);
                    }
                    complete = batch.complete;
                }
                ASSERT_TRUE(std::is_sorted(keys.begin(), keys.end()));
                ASSERT_EQ(std::adjacent_find(keys.begin(), keys.end()), keys.end()) << "a repeat";
                ASSERT_EQ(std::count_if(keys.begin(), keys.end(),
                                        [](const std::string& key) { return key[0] == 's'; }),
                          kStable);
            }
        };
        scans();  // returns early on a failed assertion: the writers stop all the same
        if (--scannersLeft == 0) {
            scanning = false;
        }
    });
}

}  // namespace
}  // namespace kvexec::engine
