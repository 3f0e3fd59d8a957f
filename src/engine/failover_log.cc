#include "kvexec/engine/failover_log.h"

#include <algorithm>
#include <stdexcept>

namespace kvexec::engine {

FailoverLog::FailoverLog(std::vector<FailoverEntry> newestFirst)
    : entries_(std::move(newestFirst)) {
    if (entries_.empty()) {
        throw std::invalid_argument("a failover log has at least one entry");
    }
    for (std::size_t i = 0; i < entries_.size(); ++i) {
        if (entries_[i].uuid == 0) {
            throw std::invalid_argument("a failover log entry has a zero uuid");
        }
        if (i > 0 && entries_[i].seqno > entries_[i - 1].seqno) {
            throw std::invalid_argument("failover log seqnos rise from newest to oldest");
        }
    }
}

void FailoverLog::branch(std::uint64_t uuid, Seqno seqno) {
    std::erase_if(entries_, [seqno](const FailoverEntry& e) { return e.seqno > seqno; });
    entries_.insert(entries_.begin(), FailoverEntry{uuid, seqno});
    if (entries_.size() > kMaxEntries) {
        entries_.resize(kMaxEntries);
    }
}

bool validStreamStart(const StreamStart& request) {
    return request.snapStart <= request.start && request.start <= request.snapEnd;
}

RollbackDecision decideRollback(const FailoverLog& log, Seqno highSeqno, Seqno purgeSeqno,
                                StreamStart request) {
    // A consumer at the end of its snapshot has all of it; one at its start
    // has none of it.
    if (request.start == request.snapEnd) {
        request.snapStart = request.snapEnd;
    } else if (request.start == request.snapStart) {
        request.snapEnd = request.snapStart;
    }
    if (request.start == 0 && request.uuid == 0) {
        return {};  // no history to disagree with
    }
    // It may have missed purged deletions of what it held. Inside a first
    // disk snapshot (snapStart 0) it held nothing older than what it got,
    // all of it from a file in which a deletion below `start` would have
    // been seen; otherwise its copy before the snapshot counts.
    const Seqno held = request.snapStart == 0 ? request.start : request.snapStart;
    if (request.start != 0 && held < purgeSeqno) {
        return {true, 0};
    }
    const auto& entries = log.entries();
    const auto match = std::find_if(entries.begin(), entries.end(),
                                    [&](const FailoverEntry& e) { return e.uuid == request.uuid; });
    if (match == entries.end()) {
        return {true, 0};  // no common history
    }
    // The shared history ends where the next branch began (or at our end).
    const Seqno upper = match == entries.begin() ? highSeqno : std::prev(match)->seqno;
    if (request.snapEnd <= upper) {
        return {};
    }
    return {true, request.snapStart > upper ? upper : request.snapStart};
}

}  // namespace kvexec::engine
