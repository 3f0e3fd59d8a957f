// bench/peers/libevent_peer.h: libevent as a peer (TimeoutAddCancel only).
//
// One event_base with pthread locking, looped by one thread; a timeout is an
// evtimer, re-armed from any thread with evtimer_add() (which moves a
// pending timer in the base's min-heap, O(log n)).
#pragma once

#include "executor/targets.h"

namespace kvexec::bench {

// libeventPeer: the "Peer<Libevent>" implementation.
Implementation libeventPeer();

}  // namespace kvexec::bench
