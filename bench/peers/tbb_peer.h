// bench/peers/tbb_peer.h: oneTBB as a peer (OneShot and LongLived only:
// oneTBB has no timers).
//
// A task_arena of N slots, none reserved for an outside thread, fed with
// task_arena::enqueue(). oneTBB caps its worker count at the core count
// minus one by default, so the peer raises the cap with a global_control:
// an arena of N really gets N workers, as the kvexec pools do.
#pragma once

#include "executor/targets.h"

namespace kvexec::bench {

// tbbPeer: the "Peer<TBB>" implementation.
Implementation tbbPeer();

}  // namespace kvexec::bench
