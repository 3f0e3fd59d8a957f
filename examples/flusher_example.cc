// flusher_example: the executor as a KV engine uses it.
//
// One bucket (a Taskable) with two background tasks:
// - a Flusher (Writer task), snoozed forever, woken by every front-end write
//   to persist what is dirty (seeds 000 and 004);
// - a durability Timeout (NonIO task), re-armed by every write to fire only
//   if writes stop for a while (seed 001).
// Front-end threads write; at the end the program prints the pool's stats.
//
// Usage: flusher_example [Classic|Wheel] [writes-per-thread]
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "kvexec/executor_pool.h"

namespace {

using namespace std::chrono_literals;
using kvexec::Clock;
using kvexec::TaskType;

class Bucket : public kvexec::Taskable {
  public:
    const std::string& name() const override { return name_; }

    // Front end: queue a mutation; the flusher persists it.
    void write(int key) {
        std::lock_guard lock(mutex_);
        dirty_.push_back(key);
    }
    // Flusher: take everything dirty (the "persist" is counting it).
    std::size_t flushDirty() {
        std::lock_guard lock(mutex_);
        const std::size_t n = dirty_.size();
        dirty_.clear();
        persisted_ += n;
        persistedChanged_.notify_all();
        return n;
    }
    bool waitPersisted(std::size_t n) {
        std::unique_lock lock(mutex_);
        return persistedChanged_.wait_for(lock, 30s, [&] { return persisted_ >= n; });
    }

  private:
    std::string name_ = "default";
    std::mutex mutex_;
    std::condition_variable persistedChanged_;
    std::deque<int> dirty_;
    std::size_t persisted_ = 0;
};

kvexec::Backend parseBackend(const char* name) {
    const std::string s = name;
    if (s == "Classic") {
        return kvexec::Backend::Classic;
    }
    if (s == "Wheel") {
        return kvexec::Backend::Wheel;
    }
    std::fprintf(stderr, "unknown backend '%s' (Classic or Wheel)\n", name);
    std::exit(2);
}

void printStats(const kvexec::ExecutorPool& pool) {
    const auto stats = pool.stats();
    std::printf("\n%-8s %8s %9s %6s %7s %9s\n", "type", "threads", "sleeping", "ready", "future",
                "executed");
    for (std::size_t i = 0; i < kvexec::kTaskTypeCount; ++i) {
        const auto& s = stats.byType[i];
        std::printf("%-8s %8zu %9zu %6zu %7zu %9llu\n",
                    std::string(kvexec::to_string(static_cast<TaskType>(i))).c_str(), s.threads,
                    s.sleeping, s.ready, s.future, static_cast<unsigned long long>(s.executed));
    }
    std::printf("\n%-6s %-22s %-8s %-7s %-8s %6s %12s\n", "id", "task", "owner", "type", "state",
                "runs", "total_us");
    for (const auto& t : stats.tasks) {
        std::printf(
            "%-6llu %-22s %-8s %-7s %-8s %6llu %12lld\n", static_cast<unsigned long long>(t.id),
            t.description.c_str(), t.owner.c_str(), std::string(kvexec::to_string(t.type)).c_str(),
            std::string(kvexec::to_string(t.state)).c_str(),
            static_cast<unsigned long long>(t.runCount),
            static_cast<long long>(
                std::chrono::duration_cast<std::chrono::microseconds>(t.totalRuntime).count()));
    }
}

}  // namespace

int main(int argc, char** argv) {
    const auto backend = argc > 1 ? parseBackend(argv[1]) : kvexec::Backend::Classic;
    const int writesPerThread = argc > 2 ? std::atoi(argv[2]) : 20000;
    constexpr int kFrontEndThreads = 2;
    constexpr auto kDurabilityTimeout = 200ms;

    auto pool = kvexec::ExecutorPool::create(backend, kvexec::PoolConfig{2, 2, 1, 2});
    Bucket bucket;
    pool->registerTaskable(bucket);

    std::atomic<std::size_t> flushes{0};
    std::atomic<int> timeouts{0};
    auto flusher = std::make_shared<kvexec::LambdaTask>(
        bucket, TaskType::Writer, "Flusher shard 0",
        [&](kvexec::LambdaTask& self) {
            if (bucket.flushDirty() > 0) {
                flushes.fetch_add(1);
            }
            self.snooze(kvexec::kForever);  // until the next write wakes it
            return true;
        },
        0, kvexec::kForever);
    auto timeout = std::make_shared<kvexec::LambdaTask>(
        bucket, TaskType::NonIO, "Durability timeout",
        [&](kvexec::LambdaTask& self) {
            timeouts.fetch_add(1);  // writes stopped for kDurabilityTimeout
            self.snooze(kvexec::kForever);
            return true;
        },
        0, kDurabilityTimeout);
    const auto flusherId = pool->schedule(flusher);
    const auto timeoutId = pool->schedule(timeout);

    const auto start = Clock::now();
    std::vector<std::thread> frontEnd;
    for (int t = 0; t < kFrontEndThreads; ++t) {
        frontEnd.emplace_back([&, t] {
            for (int i = 0; i < writesPerThread; ++i) {
                bucket.write(t * writesPerThread + i);
                pool->wake(flusherId);                        // asynchronous: never blocks
                pool->snooze(timeoutId, kDurabilityTimeout);  // re-arm the timeout
            }
        });
    }
    for (auto& t : frontEnd) {
        t.join();
    }
    const std::size_t total = static_cast<std::size_t>(kFrontEndThreads) * writesPerThread;
    const bool allPersisted = bucket.waitPersisted(total);
    const auto elapsed = std::chrono::duration<double>(Clock::now() - start).count();

    std::printf("kvexec flusher example on the %s backend\n",
                std::string(pool->backendName()).c_str());
    std::printf(
        "%zu writes from %d front-end threads persisted in %zu flushes, %.3f s "
        "(%.0f writes/s); durability timeouts fired: %d\n",
        total, kFrontEndThreads, flushes.load(), elapsed, total / elapsed, timeouts.load());
    printStats(*pool);
    pool->unregisterTaskable(bucket, false);
    return allPersisted ? 0 : 1;
}
