// replication/replication_report.h: what a node's replication client
// has done and where it stands, for `stats replication` (stats.cc) and
// the tests.
//
// Plain values, copied out of the client.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace kvexec::server {

// Totals since the client started (any thread may read them).
struct ReplicationCounters {
    std::uint64_t connections = 0;     // connections opened to peers
    std::uint64_t breaks = 0;          // connections that failed or broke off (then retried)
    std::uint64_t streamRequests = 0;  // streams asked for (DCP_STREAM_REQ; not rollbacks')
    std::uint64_t streamsClosed = 0;   // streams closed by a change of peers
};

// What `stats replication` reports: the counters, the streams open now,
// whether the links use TLS, and why the last one broke off (empty: none
// has).
struct ReplicationReport {
    ReplicationCounters counters;
    std::size_t peers = 0;
    std::size_t streamsOpen = 0;
    bool tls = false;
    std::string lastBreak;
};

}  // namespace kvexec::server
