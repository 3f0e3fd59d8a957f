// bench/executor/options.h: the knobs of executor_bench, and the
// scenario grids the seeds use.
#pragma once

#include <cstdint>
#include <vector>

namespace kvexec::bench {

struct Options {
    // --smoke: every benchmark runs exactly one iteration and the idle-CPU
    // window shrinks, so CI proves that each one works in seconds.
    bool smoke = false;
};

// The seeds' grids: benchmark threads, long-lived tasks, timeouts in flight.
inline const std::vector<int> kThreadCounts{1, 2, 4, 8, 16};
inline const std::vector<std::int64_t> kLongLivedTasks{16, 64};
inline const std::vector<std::int64_t> kTimeoutCounts{1000, 4096, 30000, 1000000};

// parseOptions: removes our own flags from argv (before benchmark sees it).
Options parseOptions(int& argc, char** argv);

}  // namespace kvexec::bench
