#include "pillowfight/run.h"

#include <netdb.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "pillowfight/load_loop.h"
#include "pillowfight/run_state.h"
#include "pillowfight/workload.h"

namespace kvexec::pillowfight {
namespace {

void resolve(const Options& o, RunState& run) {
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    const int rc = getaddrinfo(o.host.c_str(), std::to_string(o.port).c_str(), &hints, &found);
    if (rc != 0 || found == nullptr) {
        throw std::runtime_error("cannot resolve " + o.host + ": " + gai_strerror(rc));
    }
    std::memcpy(&run.address, found->ai_addr, found->ai_addrlen);
    run.addressLength = found->ai_addrlen;
    freeaddrinfo(found);
}

// The ops a phase will make when it is bounded (0: unbounded).
std::uint64_t expectedOps(const Options& o, Phase phase) {
    if (phase == Phase::Populate) {
        return o.numItems < o.clientCount() ? o.clientCount() : o.numItems;
    }
    return o.numCycles < 0
               ? 0
               : static_cast<std::uint64_t>(o.numCycles) * o.batchSize * o.clientCount();
}

// "OPS/SEC: N  (Load: X ops, E errors)", and ", R retried" once an op
// has been sent again.
void printProgress(std::ostream& out, Phase phase, std::uint64_t done, std::uint64_t expected,
                   std::uint64_t perSecond, std::size_t errors, std::size_t retries) {
    char line[200];
    const char* what = phase == Phase::Populate ? "Populate" : "Load";
    if (expected > 0) {
        std::snprintf(line, sizeof line, "OPS/SEC: %llu  (%s %.0f%%: %llu/%llu ops, %zu errors",
                      static_cast<unsigned long long>(perSecond), what,
                      100.0 * static_cast<double>(done) / static_cast<double>(expected),
                      static_cast<unsigned long long>(done),
                      static_cast<unsigned long long>(expected), errors);
    } else {
        std::snprintf(line, sizeof line, "OPS/SEC: %llu  (%s: %llu ops, %zu errors",
                      static_cast<unsigned long long>(perSecond), what,
                      static_cast<unsigned long long>(done), errors);
    }
    out << line;
    if (retries > 0) {
        out << ", " << retries << " retried";
    }
    out << ")" << std::endl;
}

std::size_t sumOf(const ErrorCounts& counts) {
    std::size_t total = 0;
    for (const auto& [what, count] : counts.snapshot()) {
        total += count;
    }
    return total;
}

// Waits until every client has finished, meanwhile: gives the go once all
// are ready (or failed), sets the stop flag at --duration or an interrupt,
// and prints progress once a second. Returns the time of the go.
Clock::time_point supervise(const Options& o, RunState& run, std::size_t clients,
                            std::ostream& progress, const InterruptWait& waitForInterrupt,
                            bool& interrupted) {
    const std::uint64_t expected = expectedOps(o, run.phase);
    auto go = Clock::now();
    auto lastPrint = go;
    std::uint64_t lastDone = 0;
    while (run.clientsDone.load() < clients) {
        if (!run.go.load() &&
            (run.clientsReady.load() + run.clientsDone.load() >= clients || run.stop.load())) {
            go = lastPrint = Clock::now();
            run.go.store(true, std::memory_order_release);
        }
        // Short waits until the go, so that the clock starts when the clients do.
        if (waitForInterrupt(std::chrono::milliseconds(run.go.load() ? 100 : 2))) {
            interrupted = true;
            run.stop.store(true);
        }
        const auto now = Clock::now();
        if (run.phase == Phase::Load && o.duration && run.go.load() && now - go >= *o.duration) {
            run.stop.store(true);
        }
        if (now - lastPrint < std::chrono::seconds(1) || o.quiet) {
            continue;
        }
        if (!run.go.load()) {
            progress << "Connecting: " << run.clientsReady.load() << "/" << clients
                     << " clients ready" << std::endl;
        } else {
            const std::uint64_t done = run.completed.load();
            const double seconds = std::chrono::duration<double>(now - lastPrint).count();
            printProgress(
                progress, run.phase, done, expected,
                static_cast<std::uint64_t>(static_cast<double>(done - lastDone) / seconds),
                sumOf(run.errors), sumOf(run.retries));
            lastDone = done;
        }
        lastPrint = now;
    }
    return go;
}

PhaseResult runPhase(const Options& o, Phase phase, std::vector<std::unique_ptr<Workload>>& work,
                     std::ostream& progress, const InterruptWait& waitForInterrupt,
                     bool& interrupted, std::uint16_t& vbucketCount) {
    RunState run(o, phase);
    resolve(o, run);
    std::vector<std::vector<Workload*>> perThread(o.threads);
    for (std::size_t c = 0; c < work.size(); ++c) {
        perThread[c % o.threads].push_back(work[c].get());
    }
    std::vector<std::unique_ptr<LoadLoop>> loops;
    const auto start = Clock::now();
    for (auto& clients : perThread) {
        loops.push_back(std::make_unique<LoadLoop>(run, std::move(clients)));
        loops.back()->start();
    }
    const auto go = supervise(o, run, work.size(), progress, waitForInterrupt, interrupted);
    for (auto& loop : loops) {
        loop->join();
    }
    // The last client's finish, not when this thread noticed it.
    const auto end = std::max(go, Clock::time_point(Clock::duration(run.lastFinish.load())));
    PhaseResult result;
    result.ran = true;
    result.setupSeconds = std::chrono::duration<double>(go - start).count();
    result.seconds = std::chrono::duration<double>(end - go).count();
    result.ops = run.completed.load();
    result.getMisses = run.getMisses.load();
    result.errors = run.errors.snapshot();
    result.retries = run.retries.snapshot();
    result.sets = run.sets.snapshot();
    result.gets = run.gets.snapshot();
    result.clientsFailed = run.clientsFailed.load();
    result.linksLost = run.linksLost.load();
    result.reconnects = run.reconnects.load();
    result.mapsPushed = run.mapsPushed.load();
    vbucketCount = std::max(vbucketCount, run.vbucketCount.load());
    return result;
}

}  // namespace

std::uint64_t PhaseResult::errorCount() const {
    std::uint64_t total = 0;
    for (const auto& [what, count] : errors) {
        total += count;
    }
    return total;
}

std::uint64_t PhaseResult::retryCount() const {
    std::uint64_t total = 0;
    for (const auto& [what, count] : retries) {
        total += count;
    }
    return total;
}

RunResult runPillowfight(const Options& o, std::ostream& progress,
                         const InterruptWait& waitForInterrupt) {
    RunResult result;
    std::vector<std::unique_ptr<Workload>> work;
    for (std::size_t c = 0; c < o.clientCount(); ++c) {
        work.push_back(std::make_unique<Workload>(o, c, o.clientCount()));
    }
    if (!o.noPopulation) {
        result.population = runPhase(o, Phase::Populate, work, progress, waitForInterrupt,
                                     result.interrupted, result.vbucketCount);
    }
    if (!result.interrupted) {
        result.load = runPhase(o, Phase::Load, work, progress, waitForInterrupt, result.interrupted,
                               result.vbucketCount);
    }
    try {
        const bool couchbase = o.protocol == Protocol::Couchbase;
        result.serverStats =
            fetchStats(o, couchbase ? std::vector<std::string>{"", "timings", "file_cache"}
                                    : std::vector<std::string>{""});
        result.serverHistograms = histogramsFromTimings(result.serverStats, "sync_write_commit_");
    } catch (const std::exception& e) {
        result.serverStatsError = e.what();
    }
    return result;
}

}  // namespace kvexec::pillowfight
