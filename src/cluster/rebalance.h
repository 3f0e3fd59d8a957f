// cluster/rebalance.h: the elected node's decisions while a rebalance runs:
// from the map in place, the target (rebalance_plan.h) and what every node
// published, the next map to publish. Pure; the node agent does the I/O.
//
// Each vBucket whose chain differs from the target's goes, a few at a
// time, through:
//   1. incoming: the target's nodes that hold no copy stream one from the
//      active, as replicas durability does not count;
//   2. once they have reached the active's published high seqno (a copy
//      counts only once its stream is open, past the failover-log check):
//   3. takeover: the active hands over (refuses clients, ends its pending
//      SyncWrites), and once its status says it applied that (the seqno
//      listed there is its last) and every node of the target chain
//      holds that seqno, the chain becomes the target's: the new active
//      leads with the old one's history, the old one follows it or drops
//      the vBucket. Every chain change pauses the writes so: a chain that
//      dropped an old copy before a new one held all the old chain
//      acknowledged would lose a write to one more failure.
// A status that lists no seqno for a node's vBucket is "unknown": wait.
// A failover or a node joining during a rebalance cancels it: the map the
// leader then computes (computeMap) carries no moves, and a takeover in
// flight is undone (the old active serves again).
//
// Pure functions over values: no I/O, no locks, no global state; safe from
// any thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <string>

#include "cluster/cluster_state.h"
#include "cluster/vbucket_map.h"

namespace kvexec::cluster {

// vBuckets moving at once: each holds a backfill stream, and a takeover
// pauses its clients.
inline constexpr std::size_t kMovesInFlight = 4;

struct RebalanceStep {
    std::optional<VBucketMap> next;  // to publish (revision current + 1); none: wait
    bool finished = false;           // the map in place is the target
    std::string cancelled;           // why it cannot go on; empty: it can
};

RebalanceStep rebalanceStep(const VBucketMap& current, const VBucketMap& target,
                            const std::map<std::string, NodeStatus>& statuses,
                            std::size_t movesInFlight = kMovesInFlight);

// Bounds how long a takeover pauses its vBucket's clients. A node of the
// target chain that stays registered but cannot stream (or a status that
// stops coming) would otherwise hold the active in its TMPFAIL pause until
// that node joins, leaves or fails; a takeover in flight longer than the
// timeout cancels the rebalance instead, which undoes it.
//
// Thread safety: one thread (the leader's agent thread) uses each object.
class TakeoverWatch {
  public:
    using Clock = std::chrono::steady_clock;

    explicit TakeoverWatch(std::chrono::milliseconds timeout) : timeout_(timeout) {}

    // Looks at the takeovers in flight in `map` at `now` (each timed from
    // when a call first saw it): why the rebalance must be cancelled, or
    // empty while every one is within the timeout.
    std::string overdue(const VBucketMap& map, Clock::time_point now);
    // When the oldest takeover seen last will be overdue; none if none.
    std::optional<Clock::time_point> nextDeadline() const;

  private:
    struct Seen {
        std::uint64_t since = 0;  // the takeover's takeoverSince
        Clock::time_point at;
    };
    const std::chrono::milliseconds timeout_;
    std::map<std::size_t, Seen> seen_;  // by vBucket
};

// How many of the target's chains the map already has.
std::size_t chainsInPlace(const VBucketMap& current, const VBucketMap& target);

}  // namespace kvexec::cluster
