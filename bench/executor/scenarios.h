// bench/executor/scenarios.h: the seeds' three scenarios, registered for
// one implementation (a kvexec backend or a peer).
//
//   <family>/OneShotScheduleRun_<label>/real_time/threads:N
//   <family>/LongLivedScheduleRun_<label>/Tasks:K/real_time/threads:N
//   <family>/TimeoutAddCancel_<label>/Timeouts:K/real_time/threads:N
// and, with the pool held at 2 workers under 16 submitting threads:
//   <family>/OneShotOversubscribed_<label>/real_time/threads:16
//   <family>/LongLivedOversubscribed_<label>/Tasks:K/real_time/threads:16
//   <family>/SparseWakeCpu_<label>/Tasks:16/iterations:1/real_time/threads:16
//
// Items are completed round trips (OneShot, LongLived) or re-arms
// (TimeoutAddCancel), summed over the N benchmark threads. The counter
// wall_items_per_second is their rate over the whole run, first thread's
// start to last thread's end, and cpu_ns_per_item the process's CPU per
// item over that span (parallel_run.h: Google Benchmark's own
// items_per_second divides by the threads' average time, which overstates
// the rate when threads finish apart).
// SparseWakeCpu wakes 1,000 tasks/s in all and reports cpu_pct, the
// process's CPU over its window in % of one core.
#pragma once

#include "executor/options.h"
#include "executor/targets.h"

namespace kvexec::bench {

// registerScenarios: registers every scenario `impl` supports.
void registerScenarios(const Implementation& impl, const Options& options);

// releaseCachedTimeouts: destroys the TimeoutAddCancel set kept between
// runs (see scenarios.cc). Call before measuring anything process-wide.
void releaseCachedTimeouts();

}  // namespace kvexec::bench
