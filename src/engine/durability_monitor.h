// engine/durability_monitor.h: the durability decision of one active
// vBucket, as a state machine with no I/O, no clock and no locks of its own.
//
// Inputs: the prepares the active queued (seqno, level, deadline), how far
// the active itself has queued and persisted, the replicas' acknowledgements
// (SEQNO_ACKNOWLEDGED: each replica's high prepared seqno), the topology
// (the chain from the cluster map) and the current time when asked to
// expire. Outputs: which prepares to commit and which to abort, in the
// order they were decided, taken with takeDecisions().
//
// The rule (Couchbase's): a node "holds" a prepare once every prepare up to
// it is satisfied on that node: in memory for Majority, after persistence
// for the levels that ask it of that node (the active persists for
// MajorityAndPersistToActive and PersistToMajority; a replica, which
// computes its own position with replicaHighPrepared(), persists for
// PersistToMajority only). A prepare commits once the active holds it and a
// majority of the chain (chain size / 2 + 1, empty slots counted) holds it.
// Positions only move forward, and a node's position stops at its first
// unsatisfied prepare, so prepares commit in seqno order. A prepare whose
// deadline passes before that is aborted (the client hears
// SyncWriteAmbiguous), which unblocks the prepares behind it.
//
// A single node is the chain [local]: Majority commits once queued, the
// persist levels once persisted, as before replicas existed.
//
// Thread safety: none; the owner serialises every call (a VBucket keeps its
// monitor under its own mutex).
#pragma once

#include <algorithm>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvexec/engine/item.h"
#include "kvexec/engine/vbucket_state.h"
#include "kvexec/task.h"

namespace kvexec::engine {

struct DurabilityDecision {
    enum class Outcome : std::uint8_t { Commit, Abort };
    Seqno seqno = 0;
    Outcome outcome = Outcome::Commit;
    friend bool operator==(const DurabilityDecision&, const DurabilityDecision&) = default;
};

class DurabilityMonitor {
  public:
    // `localNode`: this node's name in topologies.
    explicit DurabilityMonitor(std::string localNode = std::string(kLocalNode));

    // Replaces the chain. Invalid unless chain[0] is this node and no node
    // appears twice; acknowledgements of nodes that left are forgotten.
    Status setTopology(Topology topology);
    // The check setTopology makes: chain[0] is `localNode`, no node twice.
    static bool validTopology(const Topology& topology, std::string_view localNode);
    const Topology& topology() const { return topology_; }
    // DurabilityImpossible when the chain has fewer real nodes than its
    // majority (a new SyncWrite could never commit).
    Status checkPossible() const;

    // A prepare the active queued; seqnos increase.
    void addPrepare(Seqno seqno, DurabilityLevel level, Clock::time_point deadline);
    // The active's own progress: its high seqno and persisted seqno.
    void localProgress(Seqno queued, Seqno persisted);
    // A replica's high prepared seqno. False (and ignored) when `node` is
    // not a replica in the chain.
    bool acknowledge(std::string_view node, Seqno preparedSeqno);
    // Aborts every undecided prepare whose deadline is at or before `now`.
    void expire(Clock::time_point now);
    // Forgets a prepare that was ended elsewhere (flush, a dropped
    // collection, a failed save); no decision is reported for it.
    void forget(Seqno seqno);

    // The decisions since the last call, in the order they were made.
    std::vector<DurabilityDecision> takeDecisions();

    std::optional<Clock::time_point> nextDeadline() const;
    std::size_t pending() const { return prepares_.size(); }
    // The active's position: its highest seqno up to which every prepare
    // is satisfied locally.
    Seqno localHighPrepared() const;
    // A replica's last acknowledged seqno (0 if none).
    Seqno acknowledged(std::string_view node) const;
    Seqno highCompletedSeqno() const { return highCompleted_; }

  private:
    struct Prepare {
        DurabilityLevel level;
        Clock::time_point deadline;
    };
    bool heldByMajority(Seqno seqno, Seqno local) const;
    void commitSatisfied();

    std::string localNode_;
    Topology topology_;
    std::map<Seqno, Prepare> prepares_;
    // By node; looked up by string_view for every chain node on every
    // decision, so without building a string each time.
    std::map<std::string, Seqno, std::less<>> acks_;
    Seqno queued_ = 0, persisted_ = 0, highCompleted_ = 0;
    Seqno localHighPrepared_ = 0;  // monotonic: see highPrepared()
    std::vector<DurabilityDecision> decisions_;
};

// A node's high prepared seqno over its undecided prepares (seqno ->
// level, in order): the last prepare such that it and every one before it
// are in memory (<= queued) and persisted where `persists(level)` says the
// node must persist them; `floor` (the position already reached: prepares
// that ended are no longer listed) if none is. Only prepares move it, so a
// replica acknowledges prepares, not every mutation.
template <typename Prepares, typename PersistRule>
Seqno highPrepared(const Prepares& prepares, Seqno queued, Seqno persisted, PersistRule persists,
                   Seqno floor = 0) {
    Seqno last = floor;
    for (const auto& [seqno, prepare] : prepares) {
        if (seqno > queued || (persists(prepare.level) && seqno > persisted)) {
            break;
        }
        last = std::max(last, seqno);
    }
    return last;
}

// Whether a node in each role must persist a prepare of `level` before it
// holds it.
bool activePersists(DurabilityLevel level);
bool replicaPersists(DurabilityLevel level);

}  // namespace kvexec::engine
