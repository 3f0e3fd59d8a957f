// bench/executor/pool_targets.h: the kvexec backends as benchmark targets.
//
// OneShot: schedule() a new LambdaTask that returns false.
// LongLived: LambdaTasks scheduled with initialSleep = kForever; wake(id)
//   runs one, which snoozes itself forever again and returns true.
// TimeoutAddCancel: LambdaTasks scheduled 10-30 s ahead; a re-arm is the
//   asynchronous ExecutorPool::snooze(id, d).
#pragma once

#include <kvexec/executor_pool.h>

#include "executor/targets.h"

namespace kvexec::bench {

// poolImplementation: "ExecutorPoolFixture<Classic>" etc. for `backend`.
Implementation poolImplementation(Backend backend);

}  // namespace kvexec::bench
