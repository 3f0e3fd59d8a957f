// pillowfight/run_state.h: what the clients of one phase share: the
// options, the stop flag, the counters the progress line reads and the
// latency histograms, error and retry counts the report prints.
//
// Thread safety: the atomics and histograms are written by every event-loop
// thread and read by the main thread at any time; ErrorCounts takes its
// mutex (errors are rare). Everything else is set before the loops start.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>

#include <sys/socket.h>

#include "executor/thread_annotations.h"
#include "pillowfight/latency_histogram.h"
#include "pillowfight/options.h"

namespace kvexec::pillowfight {

enum class Phase { Populate, Load };
using Clock = std::chrono::steady_clock;

// Errors by what happened ("SET: SyncWriteAmbiguous", "timeout", ...);
// retries likewise, by the answer that caused them.
class ErrorCounts {
  public:
    void add(const std::string& what, std::uint64_t n = 1) {
        kvexec::detail::MutexLock lock(mutex_);
        counts_[what] += n;
    }
    std::map<std::string, std::uint64_t> snapshot() const {
        kvexec::detail::MutexLock lock(mutex_);
        return counts_;
    }

  private:
    mutable kvexec::detail::Mutex mutex_;
    std::map<std::string, std::uint64_t> counts_ GUARDED_BY(mutex_);
};

struct RunState {
    RunState(const Options& o, Phase p) : options(o), phase(p) {}

    const Options& options;
    const Phase phase;
    sockaddr_storage address{};
    socklen_t addressLength = 0;

    // Clients connect and bootstrap first; the phase's clock and its first
    // batches start together once every client is ready (or failed), so
    // that connection set-up (SCRAM's PBKDF2 costs milliseconds) is not
    // counted as load.
    std::atomic<std::size_t> clientsReady{0};
    std::atomic<bool> go{false};
    std::atomic<bool> stop{false};            // no new batch after this
    std::atomic<std::uint64_t> completed{0};  // ops answered (or counted as failed)
    std::atomic<std::uint64_t> getMisses{0};  // gets answered KEY_ENOENT
    std::atomic<std::size_t> clientsDone{0};
    std::atomic<std::size_t> clientsFailed{0};  // ended by a failure, not the run's end
    // A cluster's links that dropped (counted once per drop, however many
    // attempts follow) and that were connected again (connection.h).
    std::atomic<std::uint64_t> linksLost{0};
    std::atomic<std::uint64_t> reconnects{0};
    // Maps a server pushed that a client took (newer than the one it had).
    std::atomic<std::uint64_t> mapsPushed{0};
    std::atomic<Clock::rep> lastFinish{0};       // steady_clock ticks of the latest finish
    std::atomic<std::uint16_t> vbucketCount{0};  // from the first cluster map
    LatencyHistogram sets{"SET"};
    LatencyHistogram gets{"GET"};
    ErrorCounts errors;
    ErrorCounts retries;  // ops sent again (NOT_MY_VBUCKET, TMPFAIL: retry.h)
};

}  // namespace kvexec::pillowfight
