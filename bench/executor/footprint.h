// bench/executor/footprint.h: what an idle pool costs, per backend.
//
//   Footprint<B>/IdleCpu_B/Tasks:30000/iterations:1/real_time
//       counter idle_cpu_pct: CPU (user + system, whole process, from
//       getrusage) used while a pool with default thread counts holds 30,000
//       tasks snoozed 10-30 s ahead, in percent of one core, over 5 s
//       (0.5 s with --smoke).
//   Footprint<B>/MemoryPerTask_B/Tasks:1000000/iterations:1/real_time
//       counter bytes_per_task: RSS growth while scheduling 1,000,000 tasks
//       snoozed 10-30 s ahead (the benchmark keeps no reference), divided by
//       the count; heap_bytes_per_task: the same from malloc's own
//       bookkeeping (mallinfo2), which freed-but-resident memory of earlier
//       benchmarks cannot hide.
//
// Registered before every other benchmark so that they run first, in a
// process that has not yet made other pools.
#pragma once

#include <vector>

#include <kvexec/executor_pool.h>

#include "executor/options.h"

namespace kvexec::bench {

void registerFootprint(const std::vector<Backend>& backends, const Options& options);

}  // namespace kvexec::bench
