// timer_wheel_bench: the costs of kvexec::TimerWheel (include/kvexec/
// timer_wheel.h) as the number of armed entries grows: 1,000 (one timeout
// per vBucket, one bucket), 30,000 (30 buckets, seed 001's largest case) and
// 1,000,000. Re-arm should stay flat: that is the reason for the wheel.
//
//   TimerWheel_Rearm          re-arm entries round-robin to "now + ~30 s",
//                             the seed's pattern (timeouts pushed later long
//                             before they fire)
//   TimerWheel_RearmRandom    the same, entries picked at random (cache-hostile)
//   TimerWheel_ArmCancel      arm one more entry and cancel it
//   TimerWheel_Advance        one 1 ms advance() in a steady state where the
//                             fired entries re-arm 30 s later (items = fired)
//   TimerWheel_NextExpiry     nextExpiry() (the timer thread's sleep target)
//   StdSet_Rearm              peer: a balanced tree (erase + insert), what a
//                             heap- or tree-based timer queue pays
//
// Time is driven explicitly (no clock reads inside the loops), so the numbers
// are the data structure's alone.
#include <kvexec/timer_wheel.h>

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <random>
#include <set>
#include <utility>
#include <vector>

namespace {

using kvexec::TimerWheel;
using namespace std::chrono_literals;
using TimePoint = TimerWheel::Clock::time_point;

const TimePoint kStart = TimePoint(std::chrono::hours(1000));

// Armed: a wheel with n entries armed at deadlines spread over [1 s, 31 s).
struct Armed {
    explicit Armed(std::size_t count) : n(count), entries(new TimerWheel::Entry[count]) {
        std::mt19937_64 rng(42);
        for (std::size_t i = 0; i < n; ++i) {
            wheel.arm(entries[i], kStart + 1s + std::chrono::microseconds(rng() % 30'000'000));
        }
    }
    ~Armed() {
        for (std::size_t i = 0; i < n; ++i) {
            wheel.cancel(entries[i]);
        }
    }
    Armed(const Armed&) = delete;
    Armed& operator=(const Armed&) = delete;

    TimerWheel wheel{kStart};
    std::size_t n;
    std::unique_ptr<TimerWheel::Entry[]> entries;
};

void TimerWheel_Rearm(benchmark::State& state) {
    Armed armed(static_cast<std::size_t>(state.range(0)));
    std::size_t i = 0;
    std::int64_t jitter = 0;
    for (auto _ : state) {
        armed.wheel.arm(armed.entries[i], kStart + 30s + std::chrono::microseconds(jitter));
        i = i + 1 == armed.n ? 0 : i + 1;
        jitter = (jitter + 7919) % 1'000'000;  // deadlines spread over a second
    }
    state.SetItemsProcessed(state.iterations());
}

void TimerWheel_RearmRandom(benchmark::State& state) {
    Armed armed(static_cast<std::size_t>(state.range(0)));
    std::mt19937_64 rng(7);
    for (auto _ : state) {
        const std::uint64_t r = rng();
        armed.wheel.arm(armed.entries[r % armed.n],
                        kStart + 30s + std::chrono::microseconds((r >> 32) % 1'000'000));
    }
    state.SetItemsProcessed(state.iterations());
}

void TimerWheel_ArmCancel(benchmark::State& state) {
    Armed armed(static_cast<std::size_t>(state.range(0)));
    TimerWheel::Entry extra;
    std::int64_t jitter = 0;
    for (auto _ : state) {
        armed.wheel.arm(extra, kStart + 30s + std::chrono::microseconds(jitter));
        benchmark::DoNotOptimize(armed.wheel.cancel(extra));
        jitter = (jitter + 7919) % 1'000'000;
    }
    state.SetItemsProcessed(state.iterations());
}

void TimerWheel_Advance(benchmark::State& state) {
    Armed armed(static_cast<std::size_t>(state.range(0)));
    TimerWheel& wheel = armed.wheel;
    TimePoint now = kStart;
    std::size_t fired = 0;
    auto rearm = [&](TimerWheel::Entry& e) { wheel.arm(e, wheel.currentTime() + 30s); };
    // Reach the steady state (every entry has fired and re-armed once) first.
    for (; now < kStart + 31s; now += 1ms) {
        wheel.advance(now, rearm);
    }
    for (auto _ : state) {
        now += 1ms;
        fired += wheel.advance(now, rearm);
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(fired));
    state.counters["fired_per_advance"] =
        static_cast<double>(fired) / static_cast<double>(state.iterations());
}

void TimerWheel_NextExpiry(benchmark::State& state) {
    Armed armed(static_cast<std::size_t>(state.range(0)));
    for (auto _ : state) {
        benchmark::DoNotOptimize(armed.wheel.nextExpiry());
    }
}

void StdSet_Rearm(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    std::set<std::pair<TimePoint, std::size_t>> timers;
    std::vector<TimePoint> deadline(n);
    std::mt19937_64 rng(42);
    for (std::size_t i = 0; i < n; ++i) {
        deadline[i] = kStart + 1s + std::chrono::microseconds(rng() % 30'000'000);
        timers.emplace(deadline[i], i);
    }
    std::size_t i = 0;
    std::int64_t jitter = 0;
    for (auto _ : state) {
        timers.erase({deadline[i], i});
        deadline[i] = kStart + 30s + std::chrono::microseconds(jitter);
        timers.emplace(deadline[i], i);
        i = i + 1 == n ? 0 : i + 1;
        jitter = (jitter + 7919) % 1'000'000;
    }
    state.SetItemsProcessed(state.iterations());
}

void Sizes(benchmark::internal::Benchmark* b) {
    b->ArgName("Timeouts")->Arg(1'000)->Arg(30'000)->Arg(1'000'000);
}

BENCHMARK(TimerWheel_Rearm)->Apply(Sizes);
BENCHMARK(TimerWheel_RearmRandom)->Apply(Sizes);
BENCHMARK(TimerWheel_ArmCancel)->Apply(Sizes);
BENCHMARK(TimerWheel_Advance)->Apply(Sizes);
BENCHMARK(TimerWheel_NextExpiry)->Apply(Sizes);
BENCHMARK(StdSet_Rearm)->Apply(Sizes);

}  // namespace

BENCHMARK_MAIN();
