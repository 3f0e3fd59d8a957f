// pillowfight/retry.h: which answers kvexec-pillowfight sends again, and
// when, as the Couchbase SDKs do while a cluster's map changes under them:
//
//   NOT_MY_VBUCKET  the node no longer leads the vBucket. Its answer
//                   carries its map; the client takes it if it is newer.
//                   If that routes the vBucket to another node, the op goes
//                   there at once; else (the node is ahead of the map the
//                   client has, or behind it) after a backoff.
//   TMPFAIL         the vBucket is handing over to its new active (a
//                   rebalance's takeover, about a second): after a backoff.
//   SYNC_WRITE_RE_COMMIT_IN_PROGRESS
//                   a promoted active commits a prepare it inherited on
//                   the key (with XERROR; TMPFAIL without): after a backoff.
//
// The backoff doubles from kFirstBackoff up to kMaxBackoff, so that
// kMaxRetries retries span about 3 s (the SDKs give a KV op 2.5 s): a
// takeover waits for two of the nodes' status reports (every 500 ms) and
// lasted up to 1.1 s under load on a 2-vCPU VM; a node that answers
// NOT_MY_VBUCKET with an older map than the client's (it has not applied
// the new one yet) is usually ready within the first few retries. An op
// answered so more than kMaxRetries times counts as the error of its last
// answer. Any other status is final.
//
// Pure functions; safe from any thread.
#pragma once

#include <chrono>

#include "protocol/binary_types.h"

namespace kvexec::pillowfight {

inline constexpr unsigned kMaxRetries = 10;
inline constexpr std::chrono::milliseconds kFirstBackoff{4};
inline constexpr std::chrono::milliseconds kMaxBackoff{1000};

struct Retry {
    bool again = false;                 // send the op again
    std::chrono::milliseconds after{};  // ...this much later (0: now)
};

// What to do with an op answered `status` after `retries` retries;
// `routedElsewhere`: the map the client now holds sends its vBucket to
// another node than the one that answered.
Retry retryOf(protocol::Status status, unsigned retries, bool routedElsewhere);

}  // namespace kvexec::pillowfight
