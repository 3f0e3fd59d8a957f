// bench/executor/scenarios.h: the seeds' three scenarios, registered for
// one implementation (a kvexec backend or a peer).
//
//   <family>/OneShotScheduleRun_<label>/real_time/threads:N
//   <family>/LongLivedScheduleRun_<label>/Tasks:K/real_time/threads:N
//   <family>/TimeoutAddCancel_<label>/Timeouts:K/real_time/threads:N
//
// items_per_second counts completed round trips (OneShot, LongLived) or
// re-arms (TimeoutAddCancel), summed over the N benchmark threads.
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
