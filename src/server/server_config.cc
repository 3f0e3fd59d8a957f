#include "server/server_config.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <stdexcept>

#include "cluster/etcd_types.h"
#include "cluster/vbucket_map.h"

namespace kvexec::server {
namespace {

// Room a packet needs beyond its value: key (250), extras, framing extras.
constexpr std::size_t kBodyRoomBeyondValue = 64 * 1024;

template <class T>
T number(const std::string& option, const std::string& text, T min, T max) {
    T value{};
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || ptr != text.data() + text.size() || value < min || value > max) {
        throw std::invalid_argument(option + ": expected a number in [" + std::to_string(min) +
                                    ", " + std::to_string(max) + "], got '" + text + "'");
    }
    return value;
}

// An empty file name would read as "not given" (TLS silently off).
std::string fileName(const std::string& option, const std::string& text) {
    if (text.empty()) {
        throw std::invalid_argument(option + ": expected a file name, got an empty one");
    }
    return text;
}

bool onOff(const std::string& option, const std::string& text) {
    if (text == "on") {
        return true;
    }
    if (text == "off") {
        return false;
    }
    throw std::invalid_argument(option + ": expected on or off, got '" + text + "'");
}

// The first --bucket replaces the default bucket, the others add to it.
void addBucket(ServerConfig& c, const std::string& name, bool bucketGiven) {
    if (!validBucketName(name)) {
        throw std::invalid_argument("--bucket: '" + name +
                                    "' is not a bucket name (1-100 of A-Z a-z 0-9 _ - . %, "
                                    "not starting with '.')");
    }
    if (!bucketGiven) {
        c.buckets.clear();
    }
    if (std::find(c.buckets.begin(), c.buckets.end(), name) != c.buckets.end()) {
        throw std::invalid_argument("--bucket: '" + name + "' is given twice");
    }
    c.buckets.push_back(name);
}

// --node, --replicas and --failover-timeout only mean something with
// --cluster, and --cluster needs a name for the node.
void checkCluster(const ServerConfig& c, bool nodeGiven, bool clusterOptionGiven) {
    if (c.cluster) {
        (void)etcdEndpoint(c);  // std::invalid_argument saying why
        if (c.node.empty()) {
            throw std::invalid_argument("--cluster needs --node NAME");
        }
        return;
    }
    if (nodeGiven || clusterOptionGiven || !c.etcdCa.empty()) {
        throw std::invalid_argument(
            "--node, --replicas, --failover-timeout and --etcd-ca go with --cluster");
    }
}

// With users, a cluster's nodes need a password of their own: DCP streams
// the whole bucket, so a client's credentials must not open it.
void checkCredentials(const ServerConfig& c) {
    if (c.user.has_value() != c.password.has_value()) {
        throw std::invalid_argument("--user and --password go together");
    }
    const bool users = c.user || !c.usersFile.empty();
    if (c.nodePassword && !users) {
        throw std::invalid_argument(
            "--node-password goes with --user or --users (without users no authentication is "
            "asked)");
    }
    if (c.cluster && users && !c.nodePassword) {
        throw std::invalid_argument(
            "--cluster with --user or --users needs --node-password (the nodes' own password)");
    }
    if (c.user && *c.user == kNodeUser) {
        throw std::invalid_argument("--user: " + std::string(kNodeUser) +
                                    " is the nodes' own user name");
    }
}

// A TLS port needs the certificate and key, and they need a TLS port; the
// management endpoint's needs the endpoint.
void checkTls(const ServerConfig& c) {
    const bool files = !c.tlsCert.empty() || !c.tlsKey.empty();
    const bool port = c.tlsPort || c.mgmtTlsPort;
    if (port && (c.tlsCert.empty() || c.tlsKey.empty())) {
        throw std::invalid_argument(
            "--tls-port and --mgmt-tls-port need --tls-cert FILE and --tls-key FILE");
    }
    if (!port && files) {
        throw std::invalid_argument(
            "--tls-cert and --tls-key go with --tls-port or --mgmt-tls-port");
    }
    if (c.mgmtTlsPort && !c.mgmtPort) {
        throw std::invalid_argument("--mgmt-tls-port goes with --mgmt-port");
    }
    // Its peers, configured alike, stream from this node's TLS port.
    if (!c.clusterTlsCa.empty() && (!c.cluster || !c.tlsPort)) {
        throw std::invalid_argument("--cluster-tls-ca goes with --cluster and --tls-port");
    }
}

}  // namespace

cluster::EtcdEndpoint etcdEndpoint(const ServerConfig& config) {
    try {
        return cluster::parseEtcdUrl(config.cluster.value_or(""), config.etcdCa);
    } catch (const std::invalid_argument& error) {
        throw std::invalid_argument(std::string("--cluster: ") + error.what());
    }
}

std::string clusterRoot(const std::string& bucket) {
    return "/kvexec/" + bucket;
}

std::string bucketDataDir(const ServerConfig& config, const std::string& name) {
    return config.buckets.size() == 1 ? config.dataDir : config.dataDir + "/" + name;
}

bool validBucketName(std::string_view name) {
    constexpr std::size_t kMaxBucketName = 100;  // Couchbase's limit
    if (name.empty() || name.size() > kMaxBucketName || name.front() == '.') {
        return false;
    }
    return std::all_of(name.begin(), name.end(), [](char ch) {
        return std::isalnum(static_cast<unsigned char>(ch)) != 0 || ch == '_' || ch == '-' ||
               ch == '.' || ch == '%';
    });
}

std::string usage() {
    return "usage: kvexec-server [--host 127.0.0.1] [--port 11210] (port 0: any free port)\n"
           "                     [--mgmt-port PORT] (0: any free port)\n"
           "                     [--tls-port PORT] [--mgmt-tls-port PORT]\n"
           "                     [--tls-cert FILE --tls-key FILE] [--cluster-tls-ca FILE]\n"
           "                     [--data-dir DIR] [--bucket default]... [--memory-quota MB (256)]\n"
           "                     [--vbuckets 1024] [--shards 4] [--sync fdatasync|none]\n"
           "                     [--file-cache on|off]\n"
           "                     [--compaction-threshold 30] [--compaction-min-file-bytes "
           "1048576]\n"
           "                     [--backend wheel|classic] [--frontend-threads N]\n"
           "                     [--user NAME --password PW] [--users FILE]\n"
           "                     [--node-password PW]\n"
           "                     [--max-connections 4096] [--max-value-bytes 20971520]\n"
           "                     [--max-body-bytes 31457280]\n"
           "                     [--idle-timeout SECONDS (300) | --idle-timeout-ms MS]\n"
           "                     [--cluster http[s]://ETCD_HOST:PORT [--etcd-ca FILE]\n"
           "                      --node NAME [--replicas 0-3]\n"
           "                      [--failover-timeout SECONDS (5)]]\n"
           "--max-connections: connections beyond it are refused (ERROR Too many open\n"
           "  connections). --idle-timeout: a connection that sends nothing (half a request\n"
           "  included), reads none of its responses, or takes longer than that to send\n"
           "  one request is closed.\n"
           "--max-value-bytes: the largest value a document may have (binary or text);\n"
           "  a bigger one gets E2BIG (SERVER_ERROR object too large for cache).\n"
           "--max-body-bytes: the largest binary packet body (value, key, extras); a\n"
           "  bigger one gets E2BIG from its header and its bytes are dropped as they\n"
           "  arrive. At least --max-value-bytes + 64 KiB (the default when only\n"
           "  --max-value-bytes is given and above 30 MiB).\n"
           "--bucket: once per bucket served (default: one named default); a connection\n"
           "  starts on the first and SELECT_BUCKET moves it. One bucket keeps its files in\n"
           "  --data-dir, several each in --data-dir/NAME. With --cluster, each bucket is a\n"
           "  cluster of its own in etcd (/kvexec/NAME), on the same nodes.\n"
           "--memory-quota: each bucket's, in MiB; a write beyond it is refused (TMPFAIL,\n"
           "  SERVER_ERROR out of memory), nothing is evicted.\n"
           "--compaction-threshold: a vBucket file of at least --compaction-min-file-bytes\n"
           "  whose stale part (older versions of documents) reaches this percent of it is\n"
           "  compacted in the background, tombstones kept (0: never).\n"
           "--mgmt-port: serves the management REST API the Couchbase SDKs' bucket and\n"
           "  collection managers call (scopes, collections, flush; HTTP Basic auth with\n"
           "  a user's name and password) on --host; none without it.\n"
           "--user/--password: a user that may use every bucket. --users: a JSON file of\n"
           "  more, {\"users\": [{\"name\": N, \"password\": P, \"buckets\": [B, ...]}]}, each\n"
           "  confined to the buckets it lists (no \"buckets\": every bucket). With users,\n"
           "  a connection authenticates (SASL) before anything else, and uses only the\n"
           "  buckets its user may (EACCESS otherwise).\n"
           "--tls-port: a second data port (0: any free port), both protocols over TLS\n"
           "  1.2 or later, with the certificate chain (leaf first) and private key in\n"
           "  those PEM files. --port stays plain.\n"
           "--mgmt-tls-port: the management endpoint over HTTPS too (0: any free port),\n"
           "  with the same files; with --mgmt-port, which stays plain.\n"
           "--cluster-tls-ca: with --cluster and --tls-port, replication between the nodes\n"
           "  goes over TLS: the node streams from its peers' TLS ports and accepts only a\n"
           "  certificate that this CA file (PEM) signed, issued to the peer's --host.\n"
           "--cluster: joins the cluster kept in that etcd (under /kvexec/BUCKET) as --node\n"
           "  NAME: registers under a lease, takes the vBucket states of the cluster's map\n"
           "  (computed by the elected node, with --replicas replicas per vBucket) and\n"
           "  answers NOT_MY_VBUCKET with the cluster's config for vBuckets it is not\n"
           "  active for. Without it, a single node.\n"
           "--etcd-ca: with an https:// --cluster, the CA certificates (PEM) etcd's\n"
           "  certificate must be signed by (default: the system's); it must be issued to\n"
           "  ETCD_HOST. Every connection to etcd then goes over TLS 1.2 or later.\n"
           "--failover-timeout: the TTL of the node's lease in etcd. A node whose lease\n"
           "  expires (it died, or lost etcd) is failed over: each vBucket it led is given\n"
           "  to the replica that holds the most. The node stops serving its vBuckets\n"
           "  before then (2/3 of it after its last renewal got through).\n"
           "--node-password: with users, the password the members of a cluster use\n"
           "  towards each other, as user @kvexec-node, the only user that may open DCP\n"
           "  (a client's DCP_OPEN gets EACCESS); --cluster with users needs it.\n";
}

ServerConfig parseCommandLine(const std::vector<std::string>& args, bool& help) {
    ServerConfig c;
    help = false;
    bool bodyLimitGiven = false;
    bool nodeGiven = false;
    bool bucketGiven = false;
    bool clusterOptionGiven = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
        std::string option = args[i];
        if (option == "--help" || option == "-h") {
            help = true;
            return c;
        }
        std::string v;
        if (const auto equals = option.find('=');
            option.rfind("--", 0) == 0 && equals != std::string::npos) {
            v = option.substr(equals + 1);  // --option=value
            option.resize(equals);
        } else if (i + 1 < args.size()) {
            v = args[++i];
        } else {
            throw std::invalid_argument(option.rfind("--", 0) == 0
                                            ? option + ": missing value"
                                            : "unexpected argument '" + option + "'");
        }
        if (option == "--host") {
            c.host = v;
        } else if (option == "--port") {
            c.port = number<std::uint16_t>(option, v, 0, 65535);
        } else if (option == "--mgmt-port") {
            c.mgmtPort = number<std::uint16_t>(option, v, 0, 65535);
        } else if (option == "--tls-port") {
            c.tlsPort = number<std::uint16_t>(option, v, 0, 65535);
        } else if (option == "--mgmt-tls-port") {
            c.mgmtTlsPort = number<std::uint16_t>(option, v, 0, 65535);
        } else if (option == "--tls-cert") {
            c.tlsCert = fileName(option, v);
        } else if (option == "--tls-key") {
            c.tlsKey = fileName(option, v);
        } else if (option == "--cluster-tls-ca") {
            c.clusterTlsCa = fileName(option, v);
        } else if (option == "--data-dir") {
            c.dataDir = v;
        } else if (option == "--bucket") {
            addBucket(c, v, bucketGiven);
            bucketGiven = true;
        } else if (option == "--vbuckets") {
            c.vbuckets = number<std::size_t>(option, v, 1, 65535);
        } else if (option == "--shards") {
            c.shards = number<std::size_t>(option, v, 1, 1024);
        } else if (option == "--sync") {
            if (v != "fdatasync" && v != "none") {
                throw std::invalid_argument("--sync: expected fdatasync or none, got '" + v + "'");
            }
            c.sync = v == "none" ? storage::SyncMode::None : storage::SyncMode::Fdatasync;
        } else if (option == "--file-cache") {
            c.fileCache = onOff(option, v);
        } else if (option == "--compaction-threshold") {
            c.compactionThreshold = number<std::uint32_t>(option, v, 0, 99);
        } else if (option == "--compaction-min-file-bytes") {
            // Smaller, a file's header and commit record alone look stale.
            c.compactionMinFileBytes =
                number<std::uint64_t>(option, v, 4096, std::uint64_t{1} << 40);
        } else if (option == "--backend") {
            if (v != "wheel" && v != "classic") {
                throw std::invalid_argument("--backend: expected wheel or classic, got '" + v +
                                            "'");
            }
            c.backend = v == "wheel" ? Backend::Wheel : Backend::Classic;
        } else if (option == "--frontend-threads") {
            c.frontendThreads = number<std::size_t>(option, v, 1, 256);
        } else if (option == "--user") {
            c.user = v;
        } else if (option == "--password") {
            c.password = v;
        } else if (option == "--node-password") {
            c.nodePassword = v;
        } else if (option == "--users") {
            c.usersFile = v;
        } else if (option == "--memory-quota") {
            c.memoryQuotaMb = number<std::size_t>(option, v, 1, std::size_t{1} << 22);
        } else if (option == "--max-connections") {
            c.maxConnections = number<std::size_t>(option, v, 1, 1'000'000);
        } else if (option == "--idle-timeout") {
            c.idleTimeout = std::chrono::seconds(number<std::int64_t>(option, v, 1, 86'400));
        } else if (option == "--idle-timeout-ms") {
            c.idleTimeout =
                std::chrono::milliseconds(number<std::int64_t>(option, v, 1, 86'400'000));
        } else if (option == "--max-body-bytes") {
            c.maxBodyLength = number<std::size_t>(option, v, 1024, std::size_t{1} << 30);
            bodyLimitGiven = true;
        } else if (option == "--max-value-bytes") {
            c.maxValueBytes = number<std::size_t>(option, v, 1, std::size_t{1} << 30);
        } else if (option == "--cluster") {
            c.cluster = v;
        } else if (option == "--etcd-ca") {
            c.etcdCa = v;
        } else if (option == "--node") {
            if (v.empty() || v.find('/') != std::string::npos) {
                throw std::invalid_argument("--node: expected a name without '/', got '" + v + "'");
            }
            c.node = v;
            nodeGiven = true;
        } else if (option == "--replicas") {
            c.replicas = number<std::uint32_t>(option, v, 0, cluster::kMaxReplicas);
            clusterOptionGiven = true;
        } else if (option == "--failover-timeout") {
            // etcd's shortest lease is about 2 s.
            c.failoverTimeout = std::chrono::seconds(number<std::int64_t>(option, v, 2, 3600));
            clusterOptionGiven = true;
        } else {
            throw std::invalid_argument("unknown option '" + option + "'");
        }
    }
    checkCluster(c, nodeGiven, clusterOptionGiven);
    checkCredentials(c);
    checkTls(c);
    if (!bodyLimitGiven) {
        c.maxBodyLength = std::max(c.maxBodyLength, c.maxValueBytes + kBodyRoomBeyondValue);
    }
    if (c.maxBodyLength < c.maxValueBytes + kBodyRoomBeyondValue) {
        throw std::invalid_argument(
            "--max-body-bytes must be at least --max-value-bytes + 65536 (room for the key, "
            "extras and framing extras of the largest value)");
    }
    return c;
}

}  // namespace kvexec::server
