// flusher_example: the executor as a KV engine uses it.
//
// One bucket (a Taskable) with two background tasks:
// - a Flusher (Writer task), snoozed forever, woken by every front-end write
//   to persist what is dirty (seeds 000 and 004);
// - a durability Timeout (NonIO task), re-armed by every write to fire only
//   if writes stop for a while (seed 001).
// Front-end threads write; at the end the program prints the pool's stats.
//
// A Compaction (AuxIO) that runs longer than its maxExpectedDuration shows
// the slow-run report and the worker view.
//
// Usage: flusher_example [Classic|Wheel] [writes-per-thread] [--json]
//   --json  also print the final stats as JSON (kvexec/stats_format.h)
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
#include "kvexec/stats_format.h"

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

// A compaction that takes longer than it says it should: shows up in the
// slow-run counts (and in one stderr line per slow run, the default
// Taskable::onSlowRun).
class Compaction : public kvexec::Task {
  public:
    Compaction(kvexec::Taskable& owner, std::atomic<bool>& started)
        : Task(owner, TaskType::AuxIO), started_(started) {}
    std::string description() const override { return "Compaction vb:0"; }
    std::chrono::microseconds maxExpectedDuration() const override { return 20ms; }

  protected:
    bool run() override {
        started_ = true;
        std::this_thread::sleep_for(60ms);  // "rewrites the file"
        return false;
    }

  private:
    std::atomic<bool>& started_;
};

// The worker view while the compaction runs: its worker shows "running".
void printWorkersDuringCompaction(const kvexec::ExecutorPool& pool, std::atomic<bool>& started) {
    while (!started) {
        std::this_thread::sleep_for(1ms);
    }
    std::this_thread::sleep_for(10ms);
    const auto stats = pool.stats();
    std::printf("\nworkers while the compaction runs:\n");
    for (const auto& w : stats.workers) {
        std::printf("  %-16s %-8s %s %s\n", w.name.c_str(),
                    std::string(kvexec::to_string(w.state)).c_str(), w.taskDescription.c_str(),
                    w.state == kvexec::WorkerState::Running
                        ? ("for " + kvexec::formatDuration(w.runningFor)).c_str()
                        : "");
    }
}

}  // namespace

int main(int argc, char** argv) {
    const auto backend = argc > 1 ? parseBackend(argv[1]) : kvexec::Backend::Classic;
    const int writesPerThread = argc > 2 ? std::atoi(argv[2]) : 20000;
    const bool json = argc > 3 && std::string(argv[3]) == "--json";
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

    std::atomic<bool> compactionStarted{false};
    auto compaction = std::make_shared<Compaction>(bucket, compactionStarted);
    pool->schedule(compaction);

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
    printWorkersDuringCompaction(*pool, compactionStarted);
    for (auto& t : frontEnd) {
        t.join();
    }
    const std::size_t total = static_cast<std::size_t>(kFrontEndThreads) * writesPerThread;
    const bool allPersisted = bucket.waitPersisted(total);
    const auto elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    while (!compaction->isDead()) {  // its run is in the stats below
        std::this_thread::sleep_for(1ms);
    }

    std::printf("kvexec flusher example on the %s backend\n",
                std::string(pool->backendName()).c_str());
    std::printf(
        "%zu writes from %d front-end threads persisted in %zu flushes, %.3f s "
        "(%.0f writes/s); durability timeouts fired: %d\n",
        total, kFrontEndThreads, flushes.load(), elapsed, total / elapsed, timeouts.load());
    std::printf("\n%s", kvexec::formatStatsTable(pool->stats()).c_str());
    if (json) {
        std::printf("\n%s\n", kvexec::formatStatsJson(pool->stats()).c_str());
    }
    pool->unregisterTaskable(bucket, false);
    return allPersisted ? 0 : 1;
}
