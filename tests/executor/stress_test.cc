// executor_stress_test: N threads hammer a pool with a random mix of
// schedule, wake, snooze, cancel (with and without remove), owner
// register/unregister, setThreadCount and stats(), for every threaded
// backend, and check the contract's invariants as they go:
//   - a task never runs on two threads at once (rule 3);
//   - a task whose cancel() returned never starts again: at most the one
//     run that had already been taken may still start (rule 7);
//   - a wake is followed by a run, unless a later snooze or cancel
//     overrode it: a wake of a running task makes it run once more
//     (rule 5);
//   - after unregisterTaskable() returns, no task of the owner starts and
//     every one has been released: weak_ptrs expired (rule 9);
//   - tasks call back into the pool (wake of other tasks) while all this
//     happens;
//   - no deadlock: a watchdog prints every thread's stack (gdb) and aborts
//     if no operation completes for 10 s.
//
// Usage: executor_stress_test [--seed N] [--soak SECONDS] [gtest flags]
//   Default time per backend: $KVEXEC_STRESS_SECONDS, else 10 s (4 s under
//   sanitizers). A failure prints the seed; the same seed replays the same
//   sequence of operations per thread (thread interleaving still varies).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string>

#include "executor/contract_fixture.h"
#include "kvexec/stats_format.h"

namespace kvexec::test {
namespace {

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
constexpr double kDefaultSeconds = 4;
#else
constexpr double kDefaultSeconds = 10;
#endif
constexpr auto kWatchdogLimit = 10s;
constexpr auto kWakeDeadline = 30s;
constexpr int kStressThreads = 4;
constexpr std::size_t kSlotsPerThread = 8;

struct Options {
    std::uint64_t seed = 0;
    double seconds = 0;
};
Options options;

// Everything that went wrong, with the seed to replay it.
class Violations {
  public:
    void add(const std::string& what) {
        std::lock_guard lock(mutex_);
        if (messages_.size() < 20) {
            messages_.push_back(what);
        }
        count_.fetch_add(1);
    }
    int count() const { return count_.load(); }
    std::string report() const {
        std::lock_guard lock(mutex_);
        std::string out;
        for (const auto& m : messages_) {
            out += "  " + m + "\n";
        }
        return out + "replay: executor_stress_test --seed " + std::to_string(options.seed);
    }

  private:
    mutable std::mutex mutex_;
    std::vector<std::string> messages_;
    std::atomic<int> count_{0};
};

class StressOwner : public TestOwner {
  public:
    explicit StressOwner(std::string name) : TestOwner(std::move(name)) {}
    std::atomic<bool> finishing{false};  // tasks: a few more runs, then return false
    std::atomic<bool> gone{false};       // unregisterTaskable() has returned
};

enum class Kind { OneShot, Flusher, Periodic, Busy };

// What a task shares with the thread that made it; outlives the task.
struct Probe {
    Kind kind = Kind::OneShot;
    StressOwner* owner = nullptr;
    Violations* violations = nullptr;
    std::atomic<int> inRun{0};
    std::atomic<std::uint64_t> starts{0};
    std::atomic<std::uint64_t> startsAtCancel{0};
    std::atomic<bool> cancelled{false};
    // Bumped before and after every pool->snooze() call on it: a snooze
    // under way while a wake is made shows as a change.
    std::atomic<std::uint64_t> snoozes{0};
    // Runs it still asks for once its owner is finishing ("more to flush"):
    // keeps blockShutdown tasks alive, and being re-queued, while
    // unregisterTaskable() is under way.
    int runsWhenFinishing = 0;
    std::atomic<int> finishingRuns{0};
    // Busy tasks call back into their pool: wake() of a peer's id.
    ExecutorPool* pool = nullptr;
    TaskId peer = 0;
};

bool runProbe(Probe& p, LambdaTask& self) {
    if (p.inRun.fetch_add(1) != 0) {
        p.violations->add("task " + std::to_string(self.id()) + " ran on two threads at once");
    }
    const auto n = p.starts.fetch_add(1) + 1;
    if (p.cancelled.load() && n > p.startsAtCancel.load() + 1) {
        p.violations->add("task " + std::to_string(self.id()) + " started after cancel()");
    }
    if (p.owner->gone.load()) {
        p.violations->add("task " + std::to_string(self.id()) +
                          " started after its owner was unregistered");
    }
    bool again = true;
    switch (p.kind) {
        case Kind::OneShot:
            again = false;
            break;
        case Kind::Flusher:
            self.snooze(kForever);
            break;
        case Kind::Periodic:
            self.snooze(std::chrono::microseconds(100 + n % 900));
            break;
        case Kind::Busy:
            again = n % 5 != 0;  // runs again at once, four times in five
            p.pool->wake(p.peer);
            break;
    }
    if (p.owner->finishing.load()) {
        again = p.finishingRuns.fetch_add(1) < p.runsWhenFinishing;
    }
    p.inRun.fetch_sub(1);
    return again;
}

// Held by a task alone: its destructor runs when the pool (or the last
// holder) drops the task, and sometimes takes a while, as a task's
// destructor may. A slow release keeps unregisterTaskable() midway between
// shards for longer: the window in which other threads wake and snooze the
// owner's tasks (a Wheel crash hid there).
class SlowRelease {
  public:
    explicit SlowRelease(std::chrono::microseconds delay) : delay_(delay) {}
    SlowRelease(const SlowRelease&) = delete;
    SlowRelease& operator=(const SlowRelease&) = delete;
    ~SlowRelease() { std::this_thread::sleep_for(delay_); }

  private:
    std::chrono::microseconds delay_;
};

// Task ids (and their probes) that any thread may wake or snooze.
class Published {
  public:
    void add(TaskId id, std::shared_ptr<Probe> probe) {
        std::lock_guard lock(mutex_);
        ring_[next_++ % ring_.size()] = {id, std::move(probe)};
    }
    std::pair<TaskId, std::shared_ptr<Probe>> pick(std::mt19937_64& rng) {
        std::lock_guard lock(mutex_);
        return ring_[rng() % ring_.size()];
    }

  private:
    std::mutex mutex_;
    std::array<std::pair<TaskId, std::shared_ptr<Probe>>, 256> ring_{};
    std::size_t next_ = 0;
};

// Fails the process with every thread's stack when progress stops.
class Watchdog {
  public:
    Watchdog(std::atomic<std::uint64_t>& progress, ExecutorPool& pool)
        : progress_(progress), pool_(pool), thread_([this] { watch(); }) {}
    ~Watchdog() {
        stop_ = true;
        thread_.join();
    }

  private:
    void watch() {
        auto last = progress_.load();
        auto lastChange = Clock::now();
        while (!stop_) {
            std::this_thread::sleep_for(100ms);
            const auto now = progress_.load();
            if (now != last) {
                last = now;
                lastChange = Clock::now();
            } else if (Clock::now() - lastChange > kWatchdogLimit) {
                fail();
            }
        }
    }
    [[noreturn]] void fail() {
        std::fprintf(stderr,
                     "\nexecutor_stress_test: no progress for 10 s: deadlock? seed %llu\n"
                     "stacks of all threads:\n",
                     static_cast<unsigned long long>(options.seed));
        printTasks();
        const std::string gdb = "gdb -p " + std::to_string(getpid()) +
                                " -batch -ex 'thread apply all bt' 1>&2 2>/dev/null";
        if (std::system(gdb.c_str()) != 0) {
            std::fprintf(stderr, "(gdb failed; no stacks)\n");
        }
        std::abort();
    }

    // Every task the pool still holds: what it waits for. stats() may block
    // if a pool lock is held, so it runs on its own thread, given 2 s.
    void printTasks() {
        auto done = std::make_shared<Gate>();
        std::thread([this, done] {
            const auto now = Clock::now();
            for (const auto& t : pool_.stats().tasks) {
                const auto wakeIn =
                    t.wakeTime == Clock::time_point::max()
                        ? -1.0
                        : std::chrono::duration<double, std::milli>(t.wakeTime - now).count();
                std::fprintf(stderr, "  task %llu '%s' of %s: %s %s, wake in %.1f ms, %llu runs\n",
                             static_cast<unsigned long long>(t.id), t.description.c_str(),
                             t.owner.c_str(), std::string(to_string(t.type)).c_str(),
                             std::string(to_string(t.state)).c_str(), wakeIn,
                             static_cast<unsigned long long>(t.runCount));
            }
            done->open();
        }).detach();
        if (!done->wait(2s)) {
            std::fprintf(stderr, "  (stats() blocked: a pool lock is held)\n");
        }
    }

    std::atomic<std::uint64_t>& progress_;
    ExecutorPool& pool_;
    std::atomic<bool> stop_{false};
    std::thread thread_;
};

struct Slot {
    TaskPtr task;
    std::shared_ptr<Probe> probe;
};

// A wake that must be followed by a run.
struct WakeCheck {
    std::shared_ptr<Probe> probe;
    TaskId id;
    std::uint64_t startsBefore;
    std::uint64_t snoozesBefore;
    Clock::time_point deadline;
};

class StressThread {
  public:
    StressThread(ExecutorPool& pool, Published& published, Violations& violations,
                 std::atomic<std::uint64_t>& progress, int index)
        : pool_(pool),
          published_(published),
          violations_(violations),
          progress_(progress),
          index_(index),
          rng_(options.seed * 7919 + static_cast<std::uint64_t>(index)) {
        newOwner();
    }

    void run(Clock::time_point until) {
        while (Clock::now() < until && violations_.count() == 0) {
            step();
            checkWakes(false);
            progress_.fetch_add(1);
        }
    }
    // Every pending wake must still be followed by a run; then unregister.
    void finish() {
        while (!wakes_.empty() && violations_.count() == 0) {
            checkWakes(false);
            std::this_thread::sleep_for(1ms);
            progress_.fetch_add(1);
        }
        unregisterOwner(false);
    }

  private:
    void step() {
        const auto dice = rng_() % 1000;
        Slot& slot = slots_[rng_() % slots_.size()];
        if (dice < 250) {
            schedule(slot);
        } else if (dice < 450) {
            wakeOwn(slot);
        } else if (dice < 600) {
            wakeAny();
        } else if (dice < 750) {
            snoozeAny();
        } else if (dice < 900) {
            cancel(slot);
        } else if (dice < 960) {
            stats();
        } else if (dice < 975) {
            setThreadCount();
        } else if (dice < 985) {
            if (rng_() % 2 == 0) {
                scheduleAgainAll();  // revives, some of them mid-run: then unregister at once
            }
            unregisterOwner(rng_() % 2 == 0);
            newOwner();
        } else {
            pool_.wake(0);  // bad input is ignored
            pool_.cancel(rng_(), rng_() % 2 == 0);
        }
    }

    void newOwner() {
        owners_.push_back(std::make_unique<StressOwner>("stress-" + std::to_string(index_) + "-" +
                                                        std::to_string(owners_.size())));
        pool_.registerTaskable(*owners_.back());
    }
    StressOwner& owner() { return *owners_.back(); }

    void schedule(Slot& slot) {
        if (slot.task && rng_() % 2 == 0) {
            slot.probe->cancelled = false;  // revives it if Dead
            pool_.schedule(slot.task);
            return;
        }
        auto probe = std::make_shared<Probe>();
        probe->kind = static_cast<Kind>(rng_() % 4);
        probe->owner = &owner();
        probe->violations = &violations_;
        probe->pool = &pool_;
        probe->peer = published_.pick(rng_).first;
        const auto type = static_cast<TaskType>(rng_() % kTaskTypeCount);
        const bool blockShutdown = rng_() % 8 == 0;
        const auto sleep = rng_() % 3 == 0
                               ? Clock::duration(std::chrono::microseconds(rng_() % 2000))
                               : Clock::duration::zero();
        probe->runsWhenFinishing = static_cast<int>(rng_() % 4);
        auto release = std::make_shared<SlowRelease>(
            std::chrono::microseconds(rng_() % 4 == 0 ? rng_() % 200 : 0));
        slot.probe = probe;
        slot.task = makeTask(
            owner(), [probe, release](LambdaTask& self) { return runProbe(*probe, self); }, type,
            static_cast<int>(rng_() % 3), sleep, blockShutdown,
            "stress " + std::to_string(static_cast<int>(probe->kind)) +
                (blockShutdown ? " blockShutdown" : ""));
        pool_.schedule(slot.task);
        published_.add(slot.task->id(), probe);
    }

    // schedule() again of every task held in a slot: revives the cancelled
    // ones, including those whose last run is just ending.
    void scheduleAgainAll() {
        for (auto& slot : slots_) {
            if (slot.task) {
                slot.probe->cancelled = false;
                pool_.schedule(slot.task);
            }
        }
    }

    void wakeOwn(Slot& slot) {
        if (!slot.task) {
            return;
        }
        WakeCheck check{slot.probe, slot.task->id(), slot.probe->starts.load(),
                        slot.probe->snoozes.load(), Clock::now() + kWakeDeadline};
        if (rng_() % 2 == 0) {
            pool_.wake(check.id);
        } else {
            pool_.wakeAndWait(check.id);
        }
        // A flusher asks to run again, asleep until woken: whatever it was
        // doing at the wake (asleep, queued, taken by a worker that has
        // not begun its run, running), a run must begin after it.
        if (slot.probe->kind == Kind::Flusher && !slot.probe->cancelled) {
            wakes_.push_back(std::move(check));
        }
    }

    void wakeAny() {
        auto [id, probe] = published_.pick(rng_);
        pool_.wake(id);
    }

    void snoozeAny() {
        auto [id, probe] = published_.pick(rng_);
        if (!probe) {
            return;
        }
        probe->snoozes.fetch_add(1);
        const auto d = std::chrono::microseconds(static_cast<int>(rng_() % 3000) - 500);
        if (rng_() % 2 == 0) {
            pool_.snooze(id, d);
        } else {
            pool_.snoozeAndWait(id, rng_() % 4 == 0 ? kForever : Clock::duration(d));
        }
        probe->snoozes.fetch_add(1);
    }

    void cancel(Slot& slot) {
        if (!slot.task) {
            return;
        }
        const bool remove = rng_() % 2 == 0;
        const auto startsBefore = slot.probe->starts.load();
        if (pool_.cancel(slot.task->id(), remove)) {
            slot.probe->startsAtCancel = std::max(startsBefore, slot.probe->starts.load());
            slot.probe->cancelled = true;
        }
        if (remove || rng_() % 2 == 0) {
            slot = Slot{};
        }
    }

    void stats() {
        const auto s = pool_.stats();
        if (rng_() % 8 == 0 && formatStatsJson(s).empty()) {
            violations_.add("stats JSON is empty");
        }
    }

    void setThreadCount() {
        const auto type = static_cast<TaskType>(rng_() % kTaskTypeCount);
        pool_.setThreadCount(type, 1 + rng_() % 3);  // never 0: wakes must run
    }

    // Unregistration: every task of the owner must be released by the time
    // it returns.
    void unregisterOwner(bool force) {
        owner().finishing = true;
        std::vector<std::weak_ptr<Task>> weak;
        for (auto& slot : slots_) {
            if (slot.task) {
                weak.push_back(slot.task);
            }
            slot = Slot{};
        }
        std::erase_if(wakes_, [&](const WakeCheck& w) { return w.probe->owner == &owner(); });
        pool_.unregisterTaskable(owner(), force);
        owner().gone = true;
        for (const auto& w : weak) {
            if (auto t = w.lock()) {
                violations_.add("task " + std::to_string(t->id()) + " (" + t->description() + ", " +
                                std::string(to_string(t->state())) + ", " +
                                std::to_string(t.use_count() - 1) +
                                " references) of unregistered owner " + owner().name() +
                                " is still referenced");
                return;
            }
        }
    }

    void checkWakes(bool) {
        const auto now = Clock::now();
        std::erase_if(wakes_, [&](const WakeCheck& w) {
            if (w.probe->starts.load() > w.startsBefore) {
                return true;  // the run came
            }
            if (w.probe->cancelled || w.probe->snoozes.load() != w.snoozesBefore) {
                return true;  // overridden by a later cancel or snooze
            }
            if (now > w.deadline) {
                violations_.add("wake of task " + std::to_string(w.id) +
                                " was not followed by a run");
                return true;
            }
            return false;
        });
    }

    ExecutorPool& pool_;
    Published& published_;
    Violations& violations_;
    std::atomic<std::uint64_t>& progress_;
    const int index_;
    std::mt19937_64 rng_;
    std::vector<std::unique_ptr<StressOwner>> owners_;  // old ones stay alive
    std::array<Slot, kSlotsPerThread> slots_{};
    std::vector<WakeCheck> wakes_;
};

template <class B>
class Stress : public ::testing::Test {};
TYPED_TEST_SUITE(Stress, ThreadedBackends, BackendNames);

TYPED_TEST(Stress, RandomMixKeepsTheInvariants) {
    std::fprintf(stderr, "stress: backend %s, seed %llu, %.1f s\n", TypeParam::name,
                 static_cast<unsigned long long>(options.seed), options.seconds);
    auto pool = makePool<TypeParam>(PoolConfig{2, 2, 1, 2});
    Violations violations;
    Published published;
    std::atomic<std::uint64_t> progress{0};
    {
        Watchdog watchdog(progress, *pool);
        std::vector<std::unique_ptr<StressThread>> stressors;
        for (int i = 0; i < kStressThreads; ++i) {
            stressors.push_back(
                std::make_unique<StressThread>(*pool, published, violations, progress, i));
        }
        const auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                              std::chrono::duration<double>(options.seconds));
        std::vector<std::thread> threads;
        for (auto& s : stressors) {
            threads.emplace_back([&s, until] {
                s->run(until);
                s->finish();
            });
        }
        for (auto& t : threads) {
            t.join();
        }
        std::fprintf(stderr, "stress: %llu operations\n",
                     static_cast<unsigned long long>(progress.load()));
        EXPECT_GT(progress.load(), 1000u) << "the stress made too few operations";
    }
    EXPECT_EQ(violations.count(), 0) << violations.report();
    const auto stats = pool->stats();
    EXPECT_EQ(pool->taskableCount(), 0u);
    EXPECT_TRUE(stats.tasks.empty()) << stats.tasks.size() << " tasks left behind";
}

double defaultSeconds() {
    if (const char* env = std::getenv("KVEXEC_STRESS_SECONDS")) {
        return std::atof(env);
    }
    return kDefaultSeconds;
}

}  // namespace
}  // namespace kvexec::test

int main(int argc, char** argv) {
    using kvexec::test::options;
    options.seed = std::random_device{}();
    options.seconds = kvexec::test::defaultSeconds();
    ::testing::InitGoogleTest(&argc, argv);
    for (int i = 1; i + 1 < argc; ++i) {
        const std::string flag = argv[i];
        if (flag == "--seed") {
            options.seed = std::strtoull(argv[++i], nullptr, 10);
        } else if (flag == "--soak") {
            options.seconds = std::atof(argv[++i]);
        } else {
            std::fprintf(stderr, "unknown flag %s (use --seed N, --soak SECONDS)\n", argv[i]);
            return 2;
        }
    }
    std::fprintf(stderr, "executor_stress_test: seed %llu (replay with --seed %llu)\n",
                 static_cast<unsigned long long>(options.seed),
                 static_cast<unsigned long long>(options.seed));
    return RUN_ALL_TESTS();
}
