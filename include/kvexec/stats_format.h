// kvexec/stats_format.h: a PoolStats as text for people (cbstats-style
// tables) and as JSON for machines.
//
// formatStatsTable() prints four tables: per type (threads, sleeping,
// ready, future, executed), per task kind (runs, slow runs, queue-time and
// run-time percentiles p50/p90/p99/p99.9/max), per worker (state, task,
// running for), and the live tasks (at most `maxTasks` rows).
// formatStatsJson() gives one object with the same content:
//   {"byType": {"Writer": {...}, ...}, "kinds": [...], "workers": [...],
//    "tasks": [...]}
// Durations in JSON are integer nanoseconds (keys end in "Ns"); a task's
// wake time is "wakeInNs", relative to the moment of formatting (null when
// it sleeps until woken).
//
// Thread safety: pure functions of their argument; call from any thread.
#pragma once

#include <cstddef>
#include <string>

#include "kvexec/executor_pool.h"

namespace kvexec {

std::string formatStatsTable(const PoolStats& stats, std::size_t maxTasks = 20);
// indent < 0: one line; else pretty-printed with that many spaces.
std::string formatStatsJson(const PoolStats& stats, int indent = 2);

// A duration for people: "850ns", "12.3us", "4.56ms", "1.20s".
std::string formatDuration(Clock::duration d);

}  // namespace kvexec
