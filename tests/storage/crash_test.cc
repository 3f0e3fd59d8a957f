// Crash safety: a child process saves batches in fdatasync mode and reports
// each acknowledged high seqno through a pipe; the parent SIGKILLs it at a
// random moment, reopens the store and checks that every acknowledged batch
// is there and intact, and that no batch is half there. Many rounds over the
// same directory (each round recovers what the previous one left), seeded:
// set KVEXEC_CRASH_SEED to replay a failure.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <set>
#include <thread>

#include "crash_support.h"
#include "kvexec/storage/kv_store.h"
#include "storage_test_util.h"

namespace kvexec::storage {
namespace {

constexpr int kRounds = 20;
constexpr Vbid kVb = 0;

// Batch sizes are a function of the batch's first seqno, so the parent knows
// every batch boundary without being told.
std::size_t batchSizeAt(Seqno first) {
    return 1 + (first * 2654435761u) % 17;
}
std::size_t valueSizeOf(Seqno s) {
    return 16 + (s * 40503u) % 3000;
}

KVStoreConfig crashConfig(const test::TempDir& dir) {
    auto config = test::configFor(dir, 2, SyncMode::Fdatasync);
    config.fileCacheCapacity = 4;
    return config;
}

// The child writes each batch in pieces of at most 256 bytes (writeAll
// continues short writes), so a kill often lands inside a batch and the
// recovery of torn tails is exercised, not only whole-batch atomicity.
class ChunkyFileOps final : public FileOps {
  public:
    int open(const std::string& path, int flags, mode_t mode) override {
        return real_->open(path, flags, mode);
    }
    int close(int fd) override { return real_->close(fd); }
    ssize_t pread(int fd, void* buf, std::size_t count, off_t offset) override {
        return real_->pread(fd, buf, count, offset);
    }
    ssize_t pwrite(int fd, const void* buf, std::size_t count, off_t offset) override {
        return real_->pwrite(fd, buf, std::min<std::size_t>(count, 256), offset);
    }
    int fdatasync(int fd) override { return real_->fdatasync(fd); }
    int ftruncate(int fd, off_t length) override { return real_->ftruncate(fd, length); }
    off_t size(int fd) override { return real_->size(fd); }
    int rename(const std::string& from, const std::string& to) override {
        return real_->rename(from, to);
    }
    int unlink(const std::string& path) override { return real_->unlink(path); }
    int syncDirectory(const std::string& path) override { return real_->syncDirectory(path); }

  private:
    std::shared_ptr<FileOps> real_ = posixFileOps();
};

[[noreturn]] void runChild(const test::TempDir& dir, int ackFd) {
    try {
        auto config = crashConfig(dir);
        config.fileOps = std::make_shared<ChunkyFileOps>();
        KVStore store(config);
        store.createVBucket(kVb);
        Seqno high = store.highSeqno(kVb);
        for (int batches = 1; batches < 100000; ++batches) {
            std::vector<Document> batch;
            for (std::size_t i = 0, n = batchSizeAt(high + 1); i < n; ++i) {
                const Seqno s = high + 1 + i;
                batch.push_back(test::doc(test::keyOf(s), test::valueFor(s, valueSizeOf(s)), s));
            }
            high = store.saveDocs(kVb, batch);
            if (::write(ackFd, &high, sizeof high) != sizeof high) {
                ::_exit(3);
            }
            if (batches % 16 == 0) {
                store.compact(kVb);
            }
        }
    } catch (...) {
        ::_exit(2);
    }
    ::_exit(0);
}

// What the store holds after recovery must be a prefix of whole batches
// that includes every acknowledged one.
void verify(const test::TempDir& dir, Seqno maxAcked, Seqno& recovered, int& tornTails) {
    KVStore store(crashConfig(dir));
    tornTails += static_cast<int>(store.recoveryEvents().size());
    ASSERT_TRUE(store.openErrors().empty()) << store.openErrors()[0].what();
    const Seqno high = store.highSeqno(kVb);
    ASSERT_GE(high, maxAcked) << "an acknowledged batch was lost";
    Seqno boundary = 0;
    while (boundary < high) {
        boundary += batchSizeAt(boundary + 1);
    }
    ASSERT_EQ(boundary, high) << "a batch is only partly there";
    for (Seqno s = 1; s <= high; ++s) {
        const auto d = store.get(kVb, test::keyOf(s));
        ASSERT_TRUE(d) << "seqno " << s << " missing";
        ASSERT_EQ(d->seqno, s);
        ASSERT_EQ(d->value, test::valueFor(s, valueSizeOf(s))) << "seqno " << s;
    }
    ASSERT_EQ(store.scan(kVb, 0, [](const Document&) { return true; }), high);
    recovered = high;
}

TEST(CrashTest, AcknowledgedBatchesSurviveSigkill) {
#ifdef KVEXEC_TSAN
    GTEST_SKIP() << "fork() of a TSan process is not supported; runs under Release and ASan";
#endif
    const std::uint64_t seed = kvexec::test::crashSeed();
    SCOPED_TRACE("KVEXEC_CRASH_SEED=" + std::to_string(seed));
    std::mt19937_64 rng(seed);
    test::TempDir dir;
    Seqno recovered = 0;
    int tornTails = 0;
    for (int round = 0; round < kRounds; ++round) {
        SCOPED_TRACE("round " + std::to_string(round));
        // Killed at a random moment: at once (the child is usually writing
        // its next batch) or up to 3 ms later (usually syncing it).
        const auto crash = kvexec::test::crashRound<Seqno>(rng, 40, std::chrono::microseconds(3000),
                                                           [&](int fd) { runChild(dir, fd); });
        ASSERT_TRUE(crash.forked);
        if (!crash.aliveAtKill) {
            ASSERT_TRUE(WIFSIGNALED(crash.status))
                << "child exited with " << WEXITSTATUS(crash.status);
        }
        const auto& acks = crash.reports;
        ASSERT_FALSE(acks.empty());
        ASSERT_GE(acks.front(), recovered + 1);
        verify(dir, acks.back(), recovered, tornTails);
        if (HasFailure()) {
            std::fprintf(stderr, "crash test failed: KVEXEC_CRASH_SEED=%llu round %d\n",
                         static_cast<unsigned long long>(seed), round);
            return;
        }
    }
    std::printf("crash test: seed %llu, %d rounds, %llu seqnos, %d torn tails cut\n",
                static_cast<unsigned long long>(seed), kRounds,
                static_cast<unsigned long long>(recovered), tornTails);
}

}  // namespace
}  // namespace kvexec::storage
