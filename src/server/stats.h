// stats.h: the STAT groups kvexec-server answers (both protocols): the
// default memcached group, "timings" (the engine's histograms, cbstats
// style: <name>_count, _mean, _p50 ... _max, and <name>_histogram, the
// buckets as JSON), "tasks" and "executor" (the pool), "file_cache" (the
// store: file handles, flushes, compactions),
// "replication" (a cluster node's streams of the bucket from its peers), and
// memcached's "settings", "items" and "slabs" as far as kvexec has their
// figures (stats.cc says what each means here). "conns" and "cachedump"
// are the text protocol's (text_stats.cc).
//
// Thread safety: reads atomics and snapshots (Bucket::stats, pool stats,
// the replication client's report); any thread.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "server/server_context.h"

namespace kvexec::server {

using StatList = std::vector<std::pair<std::string, std::string>>;

// `served`'s figures (the connection's bucket) and the server's; nullopt
// for an unknown group.
std::optional<StatList> collectStats(const ServerContext& context, const ServedBucket& served,
                                     const std::string& group);

}  // namespace kvexec::server
