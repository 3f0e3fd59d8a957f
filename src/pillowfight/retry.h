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
// On a cluster, a connection to one node that drops (EOF, a network error)
// does not fail the client (connection.h): the client reconnects it after
// reconnectDelay(attempts), doubling from kFirstReconnect up to
// kMaxBackoff, until the run ends. The ops it loses follow retryOfLost():
//
//   sent, a read    (GET, LOOKUP_IN: idempotent) sent again after a backoff,
//                   as an SDK does;
//   sent, a write   (SET, MUTATE_IN) final: the server may or may not have
//                   applied it, an error "network error (ambiguous)";
//   not sent        (held for a node being reconnected, or in its
//                   handshake's queue) sent after a backoff, to the active
//                   of the newest map the client has by then.
//
// Each takes one of the op's kMaxRetries, so an op routed to a node that
// stays unreachable counts as an error after about 3 s.
//
// Pure functions; safe from any thread.
#pragma once

#include <chrono>

#include "protocol/binary_types.h"

namespace kvexec::pillowfight {

inline constexpr unsigned kMaxRetries = 10;
inline constexpr std::chrono::milliseconds kFirstBackoff{4};
inline constexpr std::chrono::milliseconds kMaxBackoff{1000};
inline constexpr std::chrono::milliseconds kFirstReconnect{10};

struct Retry {
    bool again = false;                 // send the op again
    std::chrono::milliseconds after{};  // ...this much later (0: now)
};

// What to do with an op answered `status` after `retries` retries;
// `routedElsewhere`: the map the client now holds sends its vBucket to
// another node than the one that answered.
Retry retryOf(protocol::Status status, unsigned retries, bool routedElsewhere);

// What to do with an op after `retries` retries whose connection dropped
// (or whose node is not connected): `sent`, it was written to the node;
// `idempotent`, a read.
Retry retryOfLost(bool idempotent, bool sent, unsigned retries);

// How long to wait before the `attempts`+1-th reconnection of a link
// (attempts: failed ones so far, 0 right after the drop).
std::chrono::milliseconds reconnectDelay(unsigned attempts);

}  // namespace kvexec::pillowfight
