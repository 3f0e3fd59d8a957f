// bench/executor/floor.h: the rows every other row is read against.
//
//   PingPong/real_time/threads:N  each benchmark thread hands a token to its
//       own partner thread and back (Signal: atomic wait/notify_one). The
//       cheapest possible round trip between two threads: the floor under
//       OneShot and LongLived.
//   Baseline/ClockNow, Baseline/RandomDelay  what a TimeoutAddCancel re-arm
//       costs before any executor work: reading steady_clock (every
//       implementation does it inside the call) and drawing a 10-30 s delay
//       (drawn ahead of time in the scenario, shown here for reference).
#pragma once

#include "executor/options.h"

namespace kvexec::bench {

void registerFloor(const Options& options);

}  // namespace kvexec::bench
