// server_config.h: kvexec-server's command line and the limits it serves
// with.
//
// Plain values, parsed once in main() and read-only afterwards.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/etcd_types.h"
#include "kvexec/executor_pool.h"
#include "kvexec/storage/types.h"

namespace kvexec::server {

struct ServerConfig {
    std::string host = "127.0.0.1";
    std::uint16_t port = 11210;
    // The management REST endpoint (--mgmt-port; 0: any free port); none
    // when unset.
    std::optional<std::uint16_t> mgmtPort;
    // A second data port (--tls-port; 0: any free port) that speaks both
    // protocols over TLS, and the management endpoint over HTTPS
    // (--mgmt-tls-port, with --mgmt-port), with this certificate chain
    // and key (PEM); none when unset. The files go with either port.
    std::optional<std::uint16_t> tlsPort;
    std::optional<std::uint16_t> mgmtTlsPort;
    std::string tlsCert;
    std::string tlsKey;
    // With --cluster: the node streams its replicas from its peers' TLS
    // ports (the map's kvSSL), accepting only certificates this CA file
    // (PEM) signed, issued to the peer's address (--cluster-tls-ca).
    // Empty: plain TCP to the peers' data ports.
    std::string clusterTlsCa;
    std::string dataDir = "./kvexec-data";
    // The buckets served (--bucket, once per bucket), in that order: a new
    // connection starts on the first. One bucket keeps its files in
    // dataDir itself, several each in dataDir/NAME (bucketDataDir).
    std::vector<std::string> buckets{"default"};
    // Each bucket's memory quota (--memory-quota, in MiB; Couchbase's
    // ramQuotaMB, memcached's -m): beyond it writes are refused, never
    // evicted.
    std::size_t memoryQuotaMb = 256;
    std::size_t vbuckets = 1024;
    std::size_t shards = 4;
    storage::SyncMode sync = storage::SyncMode::Fdatasync;
    bool fileCache = true;
    // Automatic compaction (--compaction-threshold PERCENT, 0: off;
    // --compaction-min-file-bytes): engine::BucketConfig's.
    std::uint32_t compactionThreshold = 30;
    std::uint64_t compactionMinFileBytes = std::uint64_t{1} << 20;
    Backend backend = Backend::Wheel;
    std::size_t frontendThreads = 2;
    // The client user (--user/--password) and the password the members of
    // a cluster authenticate to each other with as kNodeUser
    // (--node-password), the only user that may open DCP. No user: no
    // authentication is asked, and anyone may open DCP.
    std::optional<std::string> user;
    std::optional<std::string> password;
    std::optional<std::string> nodePassword;
    // --users FILE: more client users, each confined to the buckets it
    // names or not (users_file.h); empty: none.
    std::string usersFile;
    // Limits against bad input and load. A value (binary, or a text data
    // block) may be maxValueBytes long (Couchbase's 20 MiB); a binary packet
    // body, with key, extras and framing extras, maxBodyLength (Couchbase's
    // max_packet_size, 30 MiB): bigger is refused from its header.
    std::size_t maxValueBytes = 20 * 1024 * 1024;
    std::size_t maxBodyLength = 30 * 1024 * 1024;
    std::size_t maxConnections = 4096;
    std::chrono::milliseconds idleTimeout{300'000};  // as memcached's idle_timeout
    // A member of a cluster (--cluster): etcd's client URL, this node's
    // name (--node, unique in the cluster) and the replicas per vBucket the
    // map has when this node is the one that computes it (--replicas).
    // Without --cluster: a single node, every vBucket active on it.
    std::optional<std::string> cluster;
    // --etcd-ca: with an https:// --cluster, the CA certificates (PEM) that
    // signed etcd's; empty: the system's.
    std::string etcdCa;
    std::string node;
    std::uint32_t replicas = 0;
    // Its lease's TTL in etcd: how long after this node dies (or loses
    // etcd) the others fail it over (--failover-timeout).
    std::chrono::seconds failoverTimeout{5};
};

// The user name the members of a cluster authenticate to each other with.
// '@' starts no user name a client is given (as Couchbase's "@ns_server").
inline constexpr std::string_view kNodeUser = "@kvexec-node";

// Where --cluster's etcd is (with --etcd-ca); throws std::invalid_argument
// for a URL that is not http[s]://HOST:PORT, or a CA file without https.
cluster::EtcdEndpoint etcdEndpoint(const ServerConfig& config);

// Where the cluster of the bucket `bucket` lives in etcd (each bucket of a
// node is a cluster of its own).
std::string clusterRoot(const std::string& bucket);

// The directory the bucket `name` (one of config.buckets) keeps its files in.
std::string bucketDataDir(const ServerConfig& config, const std::string& name);

// Whether `name` is a bucket name Couchbase accepts: 1 to 100 of
// A-Z a-z 0-9 _ - . %, not starting with '.'.
bool validBucketName(std::string_view name);

// Parses argv; on a bad or missing value throws std::invalid_argument with
// a message naming the option. `--help` sets `help`.
ServerConfig parseCommandLine(const std::vector<std::string>& args, bool& help);
std::string usage();

}  // namespace kvexec::server
