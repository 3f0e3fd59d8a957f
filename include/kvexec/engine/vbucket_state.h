// kvexec/engine/vbucket_state.h: what a node is for a vBucket (its state)
// and which nodes hold it (its replication topology), as a cluster map
// assigns them.
//
// States (Couchbase's): Active serves reads and writes and decides its
// SyncWrites; Replica follows an active's stream and serves nothing to
// clients; Pending is an active-to-be during a takeover (clients get
// TempFail and retry); Dead serves nothing. An Active vBucket can also be
// handing over (a rebalance's takeover): it still streams to its replicas
// but refuses clients with TempFail, and the SyncWrites it had not ended
// end ambiguous, so that its high seqno stops moving and the next active
// can catch up with all of it.
//
// A Topology is the vBucket's replication chain: the active node first,
// then its replicas; an empty name stands for a replica the map wants but
// has no node for (Couchbase's null slot). Durability counts a majority of
// the whole chain, empty slots included, so a chain with too few real nodes
// refuses SyncWrites (DurabilityImpossible) instead of pretending.
//
// Thread safety: plain values.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kvexec/storage/types.h"

namespace kvexec::engine {

using Vbid = storage::Vbid;

enum class VBucketState : std::uint8_t { Active = 1, Replica = 2, Pending = 3, Dead = 4 };
std::string_view to_string(VBucketState state);

struct Topology {
    std::vector<std::string> chain;  // [active, replica...]; "" = no node yet

    // The nodes a SyncWrite must reach: chain size / 2 + 1.
    std::size_t majority() const { return chain.size() / 2 + 1; }
    // The chain's real nodes (non-empty names).
    std::size_t nodes() const;
    friend bool operator==(const Topology&, const Topology&) = default;
};

struct VBucketAssignment {
    VBucketState state = VBucketState::Active;
    Topology topology;
    bool handingOver = false;  // Active only
};

// One vBucket's new state, as a cluster map assigns it.
struct VBucketStateChange {
    Vbid vbid = 0;
    VBucketState state = VBucketState::Active;
    Topology topology;         // for Active; empty: [this node]
    bool handingOver = false;  // for Active: refuse clients, end SyncWrites
};

// The node name a bucket that is not part of a cluster gives itself; its
// vBuckets are active with the chain [kLocalNode].
inline constexpr std::string_view kLocalNode = "local";

}  // namespace kvexec::engine
