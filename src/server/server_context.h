// server_context.h: what every connection of kvexec-server shares: the
// configuration, the buckets and pool, the credentials, the connection
// counters behind STAT, and the front ends (stats conns asks each about its
// connections; the cluster node pushes new maps through them; each keeps
// the counters its requests move, and the count of engine operations in
// flight that a graceful stop waits on).
//
// Thread safety: built before the front-end threads start and destroyed
// after they stop; its members are atomics, thread-safe holders (each
// bucket's cluster config and forwarder), or are not written once the
// front ends start (buckets and frontEnds are filled before the first
// starts; a bucket's cluster admin is set before the management endpoint
// starts), so any thread may use it meanwhile. The buckets and pool are
// safe from any thread (their own headers say so).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvexec/engine/bucket.h"
#include "kvexec/executor_pool.h"
#include "protocol/auth/sasl_server.h"
#include "server/cluster_config.h"
#include "server/replication/prepared_forwarder.h"
#include "server/server_config.h"

namespace kvexec::server {

class ClusterAdmin;
class FrontEnd;
class TlsContext;

inline constexpr std::string_view kServerVersion = "1.6.18-kvexec-0.1.0";

// Counts that connections move; what requests move is per front end
// (request_counters.h).
struct ServerCounters {
    std::atomic<std::uint64_t> currConnections{0};  // counted at accept, against the limit
    std::atomic<std::uint64_t> totalConnections{0};
    std::atomic<std::uint64_t> rejectedConnections{0};
    std::atomic<std::uint64_t> listenDisabled{0};  // accept() failed: accepting paused
};

// What a bucket has of its cluster (--cluster: each bucket is a cluster of
// its own in etcd, under clusterRoot(name)); a single node's stay empty.
struct BucketCluster {
    // The nodes and map clients get; null for a single node.
    ClusterConfigHolder config;
    // Where the REST endpoint sends scope and collection changes and
    // flushes (they are the whole cluster's); null: they go to the bucket.
    ClusterAdmin* admin = nullptr;
    // The bucket's replica acknowledgements, to this node's DCP consumers.
    PreparedForwarder replicaPrepared;
};

// A bucket kvexec-server serves, by the name clients select it with.
struct ServedBucket {
    std::string name;
    engine::Bucket* bucket = nullptr;  // owned by main()
    std::unique_ptr<BucketCluster> cluster = std::make_unique<BucketCluster>();
};

struct ServerContext {
    ServerConfig config;
    ExecutorPool* pool = nullptr;
    // In config.buckets' order: a connection starts on the first. Filled
    // before the Server is made, read-only afterwards.
    std::vector<ServedBucket> buckets;
    protocol::auth::Users users;  // none: no authentication asked
    std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
    ServerCounters counters;
    std::atomic<std::uint16_t> boundPort{0};
    // The management (REST) endpoint's port once bound; 0: none (no
    // --mgmt-port). The cluster map advertises it as the "mgmt" service.
    std::atomic<std::uint16_t> boundMgmtPort{0};
    // The TLS port once bound (--tls-port); 0: none. The cluster map
    // advertises it as the "kvSSL" service.
    std::atomic<std::uint16_t> boundTlsPort{0};
    // The management endpoint's HTTPS port once bound (--mgmt-tls-port);
    // 0: none. The cluster map advertises it as "mgmtSSL".
    std::atomic<std::uint16_t> boundMgmtTlsPort{0};
    // With --tls-port or --mgmt-tls-port, what TLS connections get their
    // sessions from (owned by the Server, set before the front ends and
    // the management endpoint start).
    const TlsContext* tls = nullptr;
    std::vector<FrontEnd*> frontEnds;  // owned by the Server

    // The bucket named `name`; null if none is.
    const ServedBucket* findBucket(std::string_view name) const {
        for (const auto& served : buckets) {
            if (served.name == name) {
                return &served;
            }
        }
        return nullptr;
    }
    // Where `served` (one of `buckets`) stands in `buckets`.
    std::size_t indexOf(const ServedBucket& served) const {
        return static_cast<std::size_t>(&served - buckets.data());
    }
};

}  // namespace kvexec::server
