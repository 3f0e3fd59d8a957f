// request_counters.h: the counts behind STAT that requests move. Two sets,
// each kept per front end and summed when read (FrontEnd::sum):
// - RequestCounters: gets, sets, hits, misses... one set per served bucket,
//   as Couchbase's STAT reports them for the bucket a connection selected.
// - FrontEndCounters: what is the server's, not a bucket's (protocol
//   errors, idle timeouts) and the engine operations in flight, which a
//   graceful stop waits on.
//
// Why per front end: every request adds to one or two of them, and one set
// shared by every front end was a cache line that each front-end thread took
// from the others on every request, a cost that grows with the threads
// (memcached keeps per-thread stats for the same reason). The counts that
// connections move (accepted, refused, open) stay in ServerCounters.
//
// Thread safety: atomics. A set is written by its front end's loop thread
// (another thread may add too, without loss), and read by any thread.
#pragma once

#include <atomic>
#include <cstdint>

namespace kvexec::server {

struct alignas(64) RequestCounters {
    using Counter = std::atomic<std::uint64_t>;

    Counter cmdGet{0};
    Counter cmdSet{0};
    Counter cmdFlush{0};
    Counter cmdTouch{0};
    Counter getHits{0};
    Counter getMisses{0};
    Counter deleteHits{0};
    Counter deleteMisses{0};
    Counter durableWrites{0};
};

struct alignas(64) FrontEndCounters {
    using Counter = std::atomic<std::uint64_t>;

    Counter protocolErrors{0};
    Counter idleTimeouts{0};
    // Engine operations outstanding; a graceful stop waits until every
    // front end's is 0.
    Counter operationsInFlight{0};
};

}  // namespace kvexec::server
