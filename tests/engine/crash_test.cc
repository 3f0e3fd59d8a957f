// Crash safety across the engine: a child process makes PersistToMajority
// writes (sync mode fdatasync) on a real pool and reports each acknowledged
// one (key number, CAS) through a pipe; the parent SIGKILLs it at a random
// moment, reopens the bucket and checks that every acknowledged write is
// there with its value and CAS. Many rounds over one directory, seeded: set
// KVEXEC_CRASH_SEED to replay a failure. A second test overwrites a few
// keys, so that automatic compaction keeps switching files under the kill.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <random>
#include <thread>

#include "engine_test_support.h"
#include "kvexec/manual_executor_pool.h"
#include "storage/crash_support.h"

namespace kvexec::engine {
namespace {

constexpr int kRounds = 12;
constexpr std::size_t kInFlight = 16;  // SyncWrites the child keeps pending

struct Ack {
    std::uint64_t number;  // the key's number; the value is a function of it
    std::uint64_t cas;
};

std::string keyOf(std::uint64_t n) {
    return storage::test::keyOf(n, "key-");
}
Vbid vbOf(std::uint64_t n) {
    return static_cast<Vbid>(n % 8);
}
std::string valueOf(std::uint64_t n) {
    return storage::test::valueFor(n, 16 + n % 1000);
}

BucketConfig crashConfig(const test::TempDir& dir) {
    auto config = test::testConfig(dir);
    config.syncMode = storage::SyncMode::Fdatasync;
    return config;
}

// What a child writes: write n sets key(n) to value(n), PersistToMajority,
// in a bucket of config(dir).
struct Workload {
    BucketConfig (*config)(const test::TempDir&);
    std::string (*key)(std::uint64_t);
    std::string (*value)(std::uint64_t);
};

// The child: writes n = first, first+1, ... keeping kInFlight pending, and
// writes an Ack for each success. Never returns.
[[noreturn]] void runChild(const Workload& workload, const test::TempDir& dir, int ackFd,
                           std::uint64_t first) {
    try {
        auto pool = ExecutorPool::create(Backend::Wheel);
        auto bucket = Bucket::open(*pool, workload.config(dir));
        while (bucket->warmupProgress().state == WarmupState::Running) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        std::atomic<std::size_t> inFlight{0};
        for (std::uint64_t n = first;; ++n) {
            while (inFlight.load() >= kInFlight) {
                std::this_thread::sleep_for(std::chrono::microseconds(100));
            }
            inFlight.fetch_add(1);
            bucket->store(test::setRequest(vbOf(n), workload.key(n), workload.value(n),
                                           DurabilityLevel::PersistToMajority),
                          [&inFlight, ackFd, n](const MutationResult& r) {
                              if (r.status == Status::Success) {
                                  const Ack ack{n, r.cas};
                                  if (::write(ackFd, &ack, sizeof ack) != sizeof ack) {
                                      ::_exit(3);
                                  }
                              }
                              inFlight.fetch_sub(1);
                          });
        }
    } catch (...) {
        ::_exit(2);
    }
}

// kRounds rounds over one directory, seeded by `seed`: the workload's
// child is killed after 1 to maxReports acknowledgements (at once, or
// within 5 ms), each Ack goes to `acknowledged`, then `verify` checks the
// directory. Stops at the first failure, naming the seed and round.
void crashRounds(const Workload& workload, const test::TempDir& dir, std::uint64_t seed,
                 std::size_t maxReports, const std::function<void(const Ack&)>& acknowledged,
                 const std::function<void()>& verify) {
    std::mt19937_64 rng(seed);
    std::uint64_t next = 1;
    for (int round = 0; round < kRounds; ++round) {
        SCOPED_TRACE("round " + std::to_string(round));
        const auto crash =
            kvexec::test::crashRound<Ack>(rng, maxReports, std::chrono::microseconds(5000),
                                          [&](int fd) { runChild(workload, dir, fd, next); });
        ASSERT_TRUE(crash.forked);
        ASSERT_TRUE(crash.aliveAtKill && WIFSIGNALED(crash.status))
            << "child ended early, status " << crash.status;
        for (const auto& ack : crash.reports) {
            acknowledged(ack);
            next = std::max(next, ack.number + 1);
        }
        next += kInFlight;  // writes that may be on disk unacknowledged: not reused
        verify();
        if (::testing::Test::HasFailure()) {
            std::fprintf(stderr, "engine crash test failed: KVEXEC_CRASH_SEED=%llu round %d\n",
                         static_cast<unsigned long long>(seed), round);
            return;
        }
    }
}

// Every acknowledged write must be there, with its value and CAS.
void verify(const test::TempDir& dir, const std::map<std::uint64_t, std::uint64_t>& acked) {
    ManualExecutorPool pool;
    auto bucket = Bucket::open(pool, crashConfig(dir));
    pool.runReady(TaskType::Reader);
    ASSERT_EQ(bucket->warmupProgress().state, WarmupState::Complete)
        << bucket->warmupProgress().error;
    for (const auto& [n, cas] : acked) {
        const auto got = test::getNow(*bucket, vbOf(n), keyOf(n));
        ASSERT_EQ(got.status, Status::Success) << "acknowledged write " << n << " lost";
        ASSERT_EQ(got.item.value, valueOf(n)) << n;
        ASSERT_EQ(got.item.meta.cas, cas) << n;
    }
}

TEST(EngineCrashTest, EveryAcknowledgedDurableWriteSurvivesSigkill) {
#ifdef KVEXEC_TSAN
    GTEST_SKIP() << "fork() of a TSan process is not supported; runs under Release and ASan";
#endif
    const std::uint64_t seed = kvexec::test::crashSeed();
    SCOPED_TRACE("KVEXEC_CRASH_SEED=" + std::to_string(seed));
    test::TempDir dir;
    std::map<std::uint64_t, std::uint64_t> acked;  // key number -> CAS
    crashRounds(
        {crashConfig, keyOf, valueOf}, dir, seed, 60,
        [&](const Ack& ack) { acked[ack.number] = ack.cas; }, [&] { verify(dir, acked); });
    if (HasFailure()) {
        return;
    }
    std::printf("engine crash test: seed %llu, %d rounds, %zu acknowledged writes verified\n",
                static_cast<unsigned long long>(seed), kRounds, acked.size());
}

// Eight keys, one per vBucket, overwritten with version n: the value
// names its version, so that the parent can tell which one is on disk.
std::string versionedKey(std::uint64_t n) {
    return "hot-" + std::to_string(n % 8);
}
std::string versionedValue(std::uint64_t n) {
    return std::to_string(n) + ":" + storage::test::valueFor(n, 200 + n % 800);
}

BucketConfig compactingConfig(const test::TempDir& dir) {
    auto config = crashConfig(dir);
    config.compactionMinFileBytes = 16 << 10;
    config.compactionFragmentationPercent = 30;
    return config;
}

// Each key holds its last acknowledged version, with its CAS, or a later
// one whose write was under way at the kill; never an older one.
void verifyLatest(const test::TempDir& dir, const std::map<Vbid, Ack>& latest) {
    ManualExecutorPool pool;
    auto bucket = Bucket::open(pool, compactingConfig(dir));
    pool.runReady(TaskType::Reader);
    ASSERT_EQ(bucket->warmupProgress().state, WarmupState::Complete)
        << bucket->warmupProgress().error;
    for (const auto& [vb, ack] : latest) {
        const auto got = test::getNow(*bucket, vb, versionedKey(ack.number));
        ASSERT_EQ(got.status, Status::Success) << versionedKey(ack.number) << " lost";
        const std::uint64_t version =
            std::stoull(got.item.value.substr(0, got.item.value.find(':')));
        ASSERT_GE(version, ack.number)
            << "acknowledged version of " << versionedKey(ack.number) << " lost";
        ASSERT_EQ(got.item.value, versionedValue(version));
        if (version == ack.number) {
            ASSERT_EQ(got.item.meta.cas, ack.cas) << version;
        }
    }
}

// The highest file revision in the directory: above 1 once a compaction
// switched a vBucket's file.
std::uint64_t highestRevision(const test::TempDir& dir) {
    std::uint64_t highest = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
        const std::string name = entry.path().filename().string();
        const auto at = name.find(".kv.");
        if (at != std::string::npos &&
            name.find_first_not_of("0123456789", at + 4) == std::string::npos) {
            highest = std::max<std::uint64_t>(highest, std::stoull(name.substr(at + 4)));
        }
    }
    return highest;
}

TEST(EngineCrashTest, AcknowledgedOverwritesSurviveSigkillWhileFilesAreCompacted) {
#ifdef KVEXEC_TSAN
    GTEST_SKIP() << "fork() of a TSan process is not supported; runs under Release and ASan";
#endif
    const std::uint64_t seed = kvexec::test::crashSeed();
    SCOPED_TRACE("KVEXEC_CRASH_SEED=" + std::to_string(seed));
    test::TempDir dir;
    std::map<Vbid, Ack> latest;  // each key's last acknowledged version
    crashRounds(
        {compactingConfig, versionedKey, versionedValue}, dir, seed, 400,
        [&](const Ack& ack) {
            auto& held = latest[vbOf(ack.number)];
            if (ack.number >= held.number) {
                held = ack;
            }
        },
        [&] { verifyLatest(dir, latest); });
    if (HasFailure()) {
        return;
    }
    EXPECT_GE(highestRevision(dir), 2u) << "no compaction switched a file: the test proved little";
    std::printf("engine overwrite crash test: seed %llu, %d rounds, highest file revision %llu\n",
                static_cast<unsigned long long>(seed), kRounds,
                static_cast<unsigned long long>(highestRevision(dir)));
}

}  // namespace
}  // namespace kvexec::engine
