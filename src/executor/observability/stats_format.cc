// stats_format.cc: PoolStats as plain-text tables (the benchmark tables'
// look: left-aligned names, right-aligned numbers).
#include "kvexec/stats_format.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

namespace kvexec {

namespace {

std::string typeName(TaskType type) {
    return std::string(to_string(type));
}

// snprintf into a std::string (rows are short).
template <class... Args>
std::string line(const char* format, Args... args) {
    char buffer[256];
    std::snprintf(buffer, sizeof buffer, format, args...);
    return std::string(buffer) + "\n";
}

std::string shorten(const std::string& s, std::size_t width) {
    return s.size() <= width ? s : s.substr(0, width - 1) + "~";
}

std::string typeTable(const PoolStats& stats) {
    std::string out = line("%-8s %8s %9s %6s %7s %10s", "type", "threads", "sleeping", "ready",
                           "future", "executed");
    for (std::size_t i = 0; i < kTaskTypeCount; ++i) {
        const auto& s = stats.byType[i];
        out += line("%-8s %8zu %9zu %6zu %7zu %10llu", typeName(static_cast<TaskType>(i)).c_str(),
                    s.threads, s.sleeping, s.ready, s.future,
                    static_cast<unsigned long long>(s.executed));
    }
    return out;
}

std::string percentiles(const HistogramSummary& h) {
    return formatDuration(h.p50) + "/" + formatDuration(h.p90) + "/" + formatDuration(h.p99) + "/" +
           formatDuration(h.p999) + "/" + formatDuration(h.max);
}

std::string kindTable(const PoolStats& stats) {
    std::string out = line("%-28s %-6s %9s %5s  %-40s %s", "task kind", "type", "runs", "slow",
                           "queue p50/p90/p99/p99.9/max", "run p50/p90/p99/p99.9/max");
    for (const auto& k : stats.kinds) {
        out += line("%-28s %-6s %9llu %5llu  %-40s %s", shorten(k.description, 28).c_str(),
                    typeName(k.type).c_str(), static_cast<unsigned long long>(k.runs),
                    static_cast<unsigned long long>(k.slowRuns), percentiles(k.queueTime).c_str(),
                    percentiles(k.runTime).c_str());
    }
    return out;
}

std::string workerTable(const PoolStats& stats) {
    std::string out =
        line("%-16s %-6s %-8s %8s %-28s %s", "worker", "type", "state", "task", "running", "for");
    for (const auto& w : stats.workers) {
        const bool running = w.state == WorkerState::Running;
        out += line("%-16s %-6s %-8s %8s %-28s %s", w.name.c_str(), typeName(w.type).c_str(),
                    std::string(to_string(w.state)).c_str(),
                    running ? std::to_string(w.task).c_str() : "-",
                    running ? shorten(w.taskDescription, 28).c_str() : "-",
                    running ? formatDuration(w.runningFor).c_str() : "-");
    }
    return out;
}

std::string taskTable(const PoolStats& stats, std::size_t maxTasks) {
    std::string out = line("%-8s %-28s %-12s %-6s %-8s %8s %10s %10s", "id", "task", "owner",
                           "type", "state", "runs", "last", "total");
    const std::size_t shown = std::min(maxTasks, stats.tasks.size());
    for (std::size_t i = 0; i < shown; ++i) {
        const auto& t = stats.tasks[i];
        out += line("%-8llu %-28s %-12s %-6s %-8s %8llu %10s %10s",
                    static_cast<unsigned long long>(t.id), shorten(t.description, 28).c_str(),
                    shorten(t.owner, 12).c_str(), typeName(t.type).c_str(),
                    std::string(to_string(t.state)).c_str(),
                    static_cast<unsigned long long>(t.runCount),
                    formatDuration(t.lastRuntime).c_str(), formatDuration(t.totalRuntime).c_str());
    }
    if (shown < stats.tasks.size()) {
        out += line("... and %zu more tasks", stats.tasks.size() - shown);
    }
    return out;
}

}  // namespace

std::string formatDuration(Clock::duration d) {
    const double ns = static_cast<double>(std::chrono::nanoseconds(d).count());
    char buffer[32];
    if (ns < 1e3) {
        std::snprintf(buffer, sizeof buffer, "%.0fns", ns);
    } else if (ns < 1e6) {
        std::snprintf(buffer, sizeof buffer, "%.1fus", ns / 1e3);
    } else if (ns < 1e9) {
        std::snprintf(buffer, sizeof buffer, "%.2fms", ns / 1e6);
    } else {
        std::snprintf(buffer, sizeof buffer, "%.2fs", ns / 1e9);
    }
    return buffer;
}

std::string formatStatsTable(const PoolStats& stats, std::size_t maxTasks) {
    std::string out = typeTable(stats);
    if (!stats.kinds.empty()) {
        out.append("\n").append(kindTable(stats));
    }
    if (!stats.workers.empty()) {
        out.append("\n").append(workerTable(stats));
    }
    return out.append("\n").append(taskTable(stats, maxTasks));
}

}  // namespace kvexec
