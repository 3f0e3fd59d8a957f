// bench/peers/asio_peer.h: Boost.Asio as a peer.
//
// OneShot / LongLived: boost::asio::thread_pool(N) + post().
// TimeoutAddCancel: steady_timers on one io_context run by one thread; a
// re-arm is expires_after() (which cancels the pending wait) + async_wait().
#pragma once

#include "executor/targets.h"

namespace kvexec::bench {

// asioPeer: the "Peer<Asio>" implementation.
Implementation asioPeer();

}  // namespace kvexec::bench
