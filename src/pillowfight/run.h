// pillowfight/run.h: one kvexec-pillowfight run: resolve the server, store
// every key once (unless --no-population), run the load, then read the
// server's STAT groups; progress and OPS/SEC lines go to `progress` once a
// second meanwhile.
//
// Each phase starts --num-threads event-loop threads with their share of
// the clients and joins them when every client has finished; the caller's
// thread only waits and prints. Call from one thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "kvexec/engine/bucket_stats.h"
#include "pillowfight/options.h"
#include "pillowfight/server_stats.h"

namespace kvexec::pillowfight {

struct PhaseResult {
    bool ran = false;
    std::uint64_t ops = 0;    // answered, or lost with a failed connection
    double setupSeconds = 0;  // connect and bootstrap, before the clock starts
    double seconds = 0;       // from the go (every client ready) to the last answer
    std::uint64_t getMisses = 0;
    std::map<std::string, std::uint64_t> errors;
    // Ops sent again, by the answer that caused it (retry.h); an op that
    // then succeeded is no error.
    std::map<std::string, std::uint64_t> retries;
    engine::HistogramSnapshot sets, gets;  // load only
    std::uint64_t clientsFailed = 0;       // clients a failure ended (not reconnected)
    std::uint64_t linksLost = 0;           // a cluster's links that dropped...
    std::uint64_t reconnects = 0;          // ...and were connected again
    std::uint64_t mapsPushed = 0;          // newer cluster maps servers pushed, taken
    std::uint64_t errorCount() const;
    std::uint64_t retryCount() const;
};

struct RunResult {
    PhaseResult population, load;
    std::uint16_t vbucketCount = 0;                           // from the cluster map (0: memcached)
    bool interrupted = false;                                 // stopped by SIGINT/SIGTERM
    StatList serverStats;                                     // default, timings, file_cache groups
    std::vector<engine::HistogramSnapshot> serverHistograms;  // sync_write_commit_*
    std::string serverStatsError;
};

// Waits up to the given time; returns true if the run should stop (the
// user interrupted it). main() passes one that waits for SIGINT/SIGTERM.
using InterruptWait = std::function<bool(std::chrono::milliseconds)>;

// Throws std::runtime_error if the server's address cannot be resolved.
RunResult runPillowfight(const Options& options, std::ostream& progress,
                         const InterruptWait& waitForInterrupt);

}  // namespace kvexec::pillowfight
