// kvexec/engine/failover_log.h: a vBucket's history branches, and the
// rollback decision a DCP producer makes from them.
//
// A failover log is a list of (uuid, seqno) entries, newest first: the
// vBucket's history has been branch `uuid` since `seqno`. A new branch
// starts when the vBucket becomes active on a node and after an unclean
// shutdown, since what followed the last persisted seqno may differ from
// what another copy saw. A consumer that asks to resume from (uuid, seqno)
// shares the producer's history up to the point where that branch ended;
// decideRollback() says whether it may resume or from where it must start
// again (Couchbase's rules, kv_engine docs/dcp/documentation/rollback.md).
//
// Thread safety: plain values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kvexec/engine/item.h"

namespace kvexec::engine {

struct FailoverEntry {
    std::uint64_t uuid = 0;
    Seqno seqno = 0;
    friend bool operator==(const FailoverEntry&, const FailoverEntry&) = default;
};

class FailoverLog {
  public:
    static constexpr std::size_t kMaxEntries = 25;  // Couchbase's bound

    // A log of one branch, `uuid` from seqno 0.
    explicit FailoverLog(std::uint64_t uuid) : entries_{{uuid, 0}} {}
    // Entries newest first; throws std::invalid_argument unless non-empty,
    // uuids non-zero and seqnos not rising from newest to oldest.
    explicit FailoverLog(std::vector<FailoverEntry> newestFirst);

    // Starts branch `uuid` at `seqno`. Entries above `seqno` (a history
    // this copy rolled back) are dropped; the oldest go beyond kMaxEntries.
    void branch(std::uint64_t uuid, Seqno seqno);
    std::uint64_t uuid() const { return entries_.front().uuid; }
    const std::vector<FailoverEntry>& entries() const { return entries_; }
    friend bool operator==(const FailoverLog&, const FailoverLog&) = default;

  private:
    std::vector<FailoverEntry> entries_;
};

// Where a consumer asks to start: its newest branch (0: no history), the
// seqno it has, and the snapshot that seqno is in.
struct StreamStart {
    std::uint64_t uuid = 0;
    Seqno start = 0, snapStart = 0, snapEnd = 0;
};

// snapStart <= start <= snapEnd (a request that breaks it is malformed).
bool validStreamStart(const StreamStart& request);

struct RollbackDecision {
    bool rollback = false;
    Seqno to = 0;  // when rollback: the seqno to roll back to
    friend bool operator==(const RollbackDecision&, const RollbackDecision&) = default;
};

// The producer's decision for a (valid) request, given its own log, high
// seqno and purge seqno (tombstones below it are gone).
RollbackDecision decideRollback(const FailoverLog& log, Seqno highSeqno, Seqno purgeSeqno,
                                StreamStart request);

}  // namespace kvexec::engine
