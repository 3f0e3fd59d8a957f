// parallel_run.h: what a multi-threaded benchmark loop achieved as a whole:
// its items over the wall time from the first thread's start to the last
// thread's end (counter wall_items_per_second), and the process's CPU over
// that same span per item (counter cpu_ns_per_item).
//
// Why not Google Benchmark's items_per_second: with N threads it divides
// the items by the *average* of the threads' own loop times. Threads that
// finish early shorten that average while the others still run, so the
// figure overstates the rate by as much as the threads finish apart, and
// favours an implementation that lets some threads run ahead: 16 threads on
// 2 vCPUs, OneShot against oneTBB, the span was 1.18x (Wheel) and 1.36x
// (oneTBB) the average.
//
// Use, in every benchmark thread:
//   ParallelRun run(state);
//   for (auto _ : run.loop()) { ... }
//   run.record();
// loop() starts the span once Google Benchmark's start barrier has let the
// threads go; record() reads the end after its end barrier, where every
// thread has finished, so thread 0 sees the last thread's end and every
// thread's start. Set-up before the loop is not counted.
//
// Thread safety: one ParallelRun per benchmark thread; the threads' starts
// meet in a table that Google Benchmark's barriers order (one benchmark
// runs at a time).
#pragma once

#include <benchmark/benchmark.h>

#include <chrono>

namespace kvexec::bench {

class ParallelRun {
  public:
    explicit ParallelRun(benchmark::State& state) : state_(state) {}

    // The loop's range: `for (auto _ : run.loop())`. It calls the state's
    // begin() and end() once each, in the order a range-for over the
    // state itself would, and marks the start between them.
    class Loop {
      public:
        explicit Loop(ParallelRun& run) : run_(run) {}
        auto begin() {
            auto first = run_.state_.begin();  // waits at the start barrier
            run_.markStart();
            return first;
        }
        auto end() { return run_.state_.end(); }

      private:
        ParallelRun& run_;
    };
    Loop loop() { return Loop(*this); }

    // Sets the counters (thread 0; the others only finish their part).
    void record() const;

  private:
    void markStart();

    benchmark::State& state_;
};

}  // namespace kvexec::bench
