// pillowfight/server_stats.h: reads STAT groups from the server over a
// blocking connection of its own (after the load, so it measures nothing
// it disturbs): the default group, "timings" (the engine's histograms,
// sync_write_commit_* among them) and "file_cache".
//
// Functions of their arguments; each opens and closes its own socket.
// Safe from any thread.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kvexec/engine/bucket_stats.h"
#include "pillowfight/options.h"

namespace kvexec::pillowfight {

using StatList = std::vector<std::pair<std::string, std::string>>;

// Every (name, value) of the groups, in order ("" is the default group).
// Throws std::runtime_error naming what failed (connect, handshake, a
// refused group, no answer within --timeout).
StatList fetchStats(const Options& options, const std::vector<std::string>& groups);

// The histograms of STAT timings' "<name>_histogram" values (JSON:
// {"count", "mean", "p50", "p90", "p99", "p999", "max", "buckets"} in
// nanoseconds), the ones whose name starts with `prefix`.
std::vector<engine::HistogramSnapshot> histogramsFromTimings(const StatList& stats,
                                                             const std::string& prefix);

}  // namespace kvexec::pillowfight
