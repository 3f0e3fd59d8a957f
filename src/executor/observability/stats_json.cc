// stats_json.cc: PoolStats as JSON, through nlohmann-json (private to the
// library: the public header returns a std::string).
#include <chrono>
#include <nlohmann/json.hpp>

#include "kvexec/stats_format.h"

namespace kvexec {

namespace {

using nlohmann::json;

std::int64_t ns(Clock::duration d) {
    return std::chrono::nanoseconds(d).count();
}

json toJson(const HistogramSummary& h) {
    return {{"count", h.count},       {"meanNs", h.mean.count()}, {"p50Ns", h.p50.count()},
            {"p90Ns", h.p90.count()}, {"p99Ns", h.p99.count()},   {"p999Ns", h.p999.count()},
            {"maxNs", h.max.count()}};
}

json toJson(const TaskTypeStats& s) {
    return {{"threads", s.threads},
            {"sleeping", s.sleeping},
            {"ready", s.ready},
            {"future", s.future},
            {"executed", s.executed}};
}

json toJson(const TaskKindStats& k) {
    return {{"description", k.description},
            {"type", to_string(k.type)},
            {"runs", k.runs},
            {"slowRuns", k.slowRuns},
            {"queueTime", toJson(k.queueTime)},
            {"runTime", toJson(k.runTime)}};
}

json toJson(const WorkerInfo& w) {
    json j = {{"name", w.name}, {"type", to_string(w.type)}, {"state", to_string(w.state)}};
    if (w.state == WorkerState::Running) {
        j["task"] = w.task;
        j["taskDescription"] = w.taskDescription;
        j["runningForNs"] = ns(w.runningFor);
    }
    return j;
}

json toJson(const TaskInfo& t, Clock::time_point now) {
    json j = {{"id", t.id},
              {"description", t.description},
              {"owner", t.owner},
              {"type", to_string(t.type)},
              {"state", to_string(t.state)},
              {"priority", t.priority},
              {"runCount", t.runCount},
              {"lastRuntimeNs", ns(t.lastRuntime)},
              {"totalRuntimeNs", ns(t.totalRuntime)}};
    j["wakeInNs"] =
        t.wakeTime == Clock::time_point::max() ? json(nullptr) : json(ns(t.wakeTime - now));
    return j;
}

}  // namespace

std::string formatStatsJson(const PoolStats& stats, int indent) {
    const auto now = Clock::now();
    json j;
    j["byType"] = json::object();
    for (std::size_t i = 0; i < kTaskTypeCount; ++i) {
        j["byType"][std::string(to_string(static_cast<TaskType>(i)))] = toJson(stats.byType[i]);
    }
    j["kinds"] = json::array();
    for (const auto& k : stats.kinds) {
        j["kinds"].push_back(toJson(k));
    }
    j["workers"] = json::array();
    for (const auto& w : stats.workers) {
        j["workers"].push_back(toJson(w));
    }
    j["tasks"] = json::array();
    for (const auto& t : stats.tasks) {
        j["tasks"].push_back(toJson(t, now));
    }
    // Descriptions are user text: replace invalid UTF-8 rather than throw.
    return j.dump(indent, ' ', false, json::error_handler_t::replace);
}

}  // namespace kvexec
