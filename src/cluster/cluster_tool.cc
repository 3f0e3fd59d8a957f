#include "cluster/cluster_tool.h"

#include <algorithm>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>

namespace kvexec::cluster {
namespace {

using nlohmann::json;

[[noreturn]] void refuse(std::string_view what, std::string_view detail = {},
                         std::string_view after = {}) {
    std::string message(what);
    message += detail;
    message += after;
    throw std::invalid_argument(message);
}

std::string addressText(const std::optional<NodeAddress>& address) {
    if (!address) {
        return "-";
    }
    const bool v6 = address->host.find(':') != std::string::npos;
    std::string text = v6 ? "[" : "";
    text += address->host;
    text += v6 ? "]:" : ":";
    text += std::to_string(address->kvPort);
    return text;
}

NodeReport nodeReport(const std::string& name, const ClusterView& view) {
    NodeReport node;
    node.name = name;
    const auto& registered = view.membership.nodes;
    node.alive = std::binary_search(registered.begin(), registered.end(), name);
    if (const auto found = view.addresses.find(name); found != view.addresses.end()) {
        node.address = found->second;
    }
    if (const auto found = view.statuses.find(name); found != view.statuses.end()) {
        node.appliedRevision = found->second.mapRevision;
        if (found->second.manifestUid != 0) {
            node.manifestUid = found->second.manifestUid;
        }
        if (found->second.flushed != 0) {
            node.flushed = found->second.flushed;
        }
        if (const auto& replication = found->second.replication) {
            node.replicaVBucketsApplied = replication->replicaVBuckets;
            node.streamsOpen = replication->streamsOpen;
        }
    }
    if (view.map) {
        const auto& mapped = view.map->nodes;
        node.inMap = std::find(mapped.begin(), mapped.end(), name) != mapped.end();
        const NodeVBuckets held = vbucketsOf(*view.map, name);
        node.active = held.active.size();
        node.replica = held.replica.size();
        node.replicationLag = replicationLag(*view.map, name, view.statuses);
    }
    return node;
}

void countEmptySlots(const VBucketMap& map, StatusReport& report) {
    for (const auto& chain : map.chains) {
        if (chain.empty() || chain.front() == kNoNode) {
            ++report.vbucketsWithoutActive;
        }
        report.replicaSlotsEmpty +=
            static_cast<std::size_t>(std::count(chain.begin() + 1, chain.end(), kNoNode));
    }
}

// A status's seqnos by vBucket; one left out is at 0.
std::map<std::uint16_t, std::uint64_t> byVBucket(const std::vector<VBucketSeqno>& seqnos) {
    std::map<std::uint16_t, std::uint64_t> out;
    for (const VBucketSeqno& entry : seqnos) {
        out[entry.vbid] = entry.seqno;
    }
    return out;
}

std::uint64_t seqnoAt(const std::map<std::uint16_t, std::uint64_t>& seqnos, std::size_t vb) {
    const auto found = seqnos.find(static_cast<std::uint16_t>(vb));
    return found == seqnos.end() ? 0 : found->second;
}

template <typename T>
std::string optionalText(const std::optional<T>& value) {
    return value ? std::to_string(*value) : "-";
}

template <typename T>
json optionalJson(const std::optional<T>& value) {
    return value ? json(*value) : json(nullptr);
}

}  // namespace

std::optional<std::uint64_t> replicationLag(const VBucketMap& map, const std::string& node,
                                            const std::map<std::string, NodeStatus>& statuses) {
    const auto own = statuses.find(node);
    const int self = indexOf(map, node);
    if (own == statuses.end() || !own->second.replication || self == kNoNode) {
        return std::nullopt;
    }
    const auto replicas = byVBucket(own->second.replication->replica);
    std::map<int, std::map<std::uint16_t, std::uint64_t>> actives;  // by the active's map index
    std::uint64_t lag = 0;
    for (std::size_t vb = 0; vb < map.chains.size(); ++vb) {
        const auto& chain = map.chains[vb];
        if (chain.empty() || chain.front() == kNoNode ||
            std::find(chain.begin() + 1, chain.end(), self) == chain.end()) {
            continue;  // not a replica here, or nothing to replicate from
        }
        auto active = actives.find(chain.front());
        if (active == actives.end()) {
            const auto status = statuses.find(map.nodes[static_cast<std::size_t>(chain.front())]);
            if (status == statuses.end() || !status->second.replication) {
                return std::nullopt;
            }
            active =
                actives.emplace(chain.front(), byVBucket(status->second.replication->active)).first;
        }
        const std::uint64_t ahead = seqnoAt(active->second, vb);
        const std::uint64_t behind = seqnoAt(replicas, vb);
        lag += ahead > behind ? ahead - behind : 0;
    }
    return lag;
}

std::string clusterToolUsage() {
    return "usage: kvexec-cluster --etcd http[s]://HOST:PORT [--etcd-ca FILE]\n"
           "                      [--root /kvexec/default]\n"
           "                      status [--json] | rebalance [--json] | failover NODE\n"
           "                      | remove NODE [--json] | add NODE\n"
           "status: the cluster kept under --root (kvexec-server --cluster keeps a bucket B\n"
           "  under /kvexec/B): its nodes (name, address, alive = registered under a live\n"
           "  lease, the map revision each has applied), the map's revision and the leader\n"
           "  that published it, the vBuckets each node is active and replica for, its\n"
           "  replica streams open out of the replica vBuckets of the map it applied, and\n"
           "  its replication lag: the seqnos its replicas are behind their actives.\n"
           "  --json: the same as one JSON object. Exit 1 if etcd cannot be read.\n"
           "failover NODE: fails NODE over now rather than when its lease expires (a hard\n"
           "  failover, for a node that is dying or cut off): its lease is revoked, so the\n"
           "  elected node gives each vBucket it led to the replica that holds the most.\n"
           "  Writes NODE acknowledged without a majority may be lost. A node still alive\n"
           "  stops serving its vBuckets and joins again as a replica of them. Exit 1 if\n"
           "  NODE is not registered.\n"
           "rebalance: moves vBuckets so that every registered node leads and backs up\n"
           "  its share (after nodes joined, or came back after a failover), while the\n"
           "  cluster serves: a few at a time, each copied by DCP to its new nodes, then\n"
           "  handed over (its clients wait for a moment: TMPFAIL). The elected node\n"
           "  drives it; this command asks for it and shows its progress until it is\n"
           "  done (exit 0) or cancelled by a node joining or failing (exit 1; run it\n"
           "  again). --json: one progress object per line.\n"
           "remove NODE: rebalances NODE out: its vBuckets move to the other nodes as a\n"
           "  rebalance moves them, then no map names it (it serves nothing and may be\n"
           "  stopped) until `add NODE`. Exit 1 if cancelled.\n"
           "add NODE: lets a removed NODE back into the map (it then needs a rebalance).\n"
           "--etcd-ca: with https://, the CA certificates (PEM) etcd's certificate must be\n"
           "  signed by (default: the system's); it must be issued to HOST.\n";
}

ClusterToolOptions parseClusterToolArgs(const std::vector<std::string>& args) {
    ClusterToolOptions options;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& arg = args[i];
        if (arg == "--help" || arg == "-h") {
            options.help = true;
            return options;
        }
        if (arg == "--json") {
            options.json = true;
        } else if (arg == "--etcd" || arg == "--etcd-ca" || arg == "--root") {
            if (i + 1 >= args.size()) {
                refuse(arg, ": missing value");
            }
            (arg == "--etcd"   ? options.etcdUrl
             : arg == "--root" ? options.root
                               : options.etcdCa) = args[++i];
        } else if (arg == "status" && options.command.empty()) {
            options.command = arg;
        } else if (arg == "rebalance" && options.command.empty()) {
            options.command = arg;
        } else if ((arg == "failover" || arg == "remove" || arg == "add") &&
                   options.command.empty()) {
            if (i + 1 >= args.size() || args[i + 1].empty() || args[i + 1].front() == '-') {
                refuse(arg, ": which node? (", " NODE)");
            }
            options.command = arg;
            options.node = args[++i];
        } else {
            refuse("unexpected argument '", arg, "'");
        }
    }
    if (options.etcdUrl.empty()) {
        refuse("--etcd URL is required");
    }
    (void)parseEtcdUrl(options.etcdUrl, options.etcdCa);  // std::invalid_argument saying why
    if (options.command.empty()) {
        refuse("a command is required: status, rebalance, failover NODE, remove NODE or add NODE");
    }
    if (options.root.empty() || options.root.front() != '/' || options.root.back() == '/') {
        refuse("--root: expected /PATH without a trailing '/'");
    }
    return options;
}

StatusReport statusReport(const std::string& root, const ClusterView& view) {
    StatusReport report;
    report.root = root;
    report.leader = view.membership.leader;
    report.problems = view.problems;
    std::set<std::string> names(view.membership.nodes.begin(), view.membership.nodes.end());
    if (view.map) {
        report.mapRevision = view.map->revision;
        report.numReplicas = view.map->numReplicas;
        report.numVBuckets = view.map->chains.size();
        names.insert(view.map->nodes.begin(), view.map->nodes.end());
        countEmptySlots(*view.map, report);
    }
    for (const std::string& name : names) {
        report.nodes.push_back(nodeReport(name, view));
    }
    return report;
}

std::string statusText(const StatusReport& report) {
    std::ostringstream out;
    out << "cluster " << report.root << "\n";
    if (report.mapRevision == 0) {
        out << "map: none yet";
    } else {
        out << "map: revision " << report.mapRevision << ", " << report.numVBuckets << " vBuckets, "
            << report.numReplicas << " replica(s) each; " << report.vbucketsWithoutActive
            << " without an active, " << report.replicaSlotsEmpty
            << " replica slot(s) without a node";
    }
    out << "\nleader: " << report.leader.value_or("none") << "\n\n";
    out << std::left << std::setw(12) << "NODE" << std::setw(24) << "ADDRESS" << std::setw(7)
        << "ALIVE" << std::setw(9) << "APPLIED" << std::setw(8) << "ACTIVE" << std::setw(9)
        << "REPLICA" << std::setw(10) << "STREAMS"
        << "REPLICATION LAG (SEQNOS)\n";
    for (const NodeReport& node : report.nodes) {
        const std::string applied =
            node.appliedRevision ? std::to_string(*node.appliedRevision) : "-";
        std::string streams = optionalText(node.streamsOpen);
        streams += '/';
        streams += optionalText(node.replicaVBucketsApplied);
        out << std::setw(12) << node.name << std::setw(24) << addressText(node.address)
            << std::setw(7) << (node.alive ? "yes" : "no") << std::setw(9) << applied
            << std::setw(8) << node.active << std::setw(9) << node.replica << std::setw(10)
            << streams << optionalText(node.replicationLag) << "\n";
    }
    for (const std::string& problem : report.problems) {
        out << "problem: " << problem << "\n";
    }
    return out.str();
}

std::string statusJson(const StatusReport& report) {
    json nodes = json::array();
    for (const NodeReport& node : report.nodes) {
        json entry = {{"name", node.name},
                      {"alive", node.alive},
                      {"inMap", node.inMap},
                      {"active", node.active},
                      {"replica", node.replica},
                      {"appliedRevision", nullptr},
                      {"address", nullptr},
                      {"replicaVBucketsApplied", optionalJson(node.replicaVBucketsApplied)},
                      {"streamsOpen", optionalJson(node.streamsOpen)},
                      {"replicationLag", optionalJson(node.replicationLag)},
                      {"manifestUid", optionalJson(node.manifestUid)},
                      {"flushed", optionalJson(node.flushed)}};
        if (node.appliedRevision) {
            entry["appliedRevision"] = *node.appliedRevision;
        }
        if (node.address) {
            entry["address"] = {{"host", node.address->host},
                                {"kvPort", node.address->kvPort},
                                {"mgmtPort", node.address->mgmtPort}};
        }
        nodes.push_back(std::move(entry));
    }
    const json document = {{"root", report.root},
                           {"leader", report.leader ? json(*report.leader) : json(nullptr)},
                           {"mapRevision", report.mapRevision},
                           {"numReplicas", report.numReplicas},
                           {"numVBuckets", report.numVBuckets},
                           {"vbucketsWithoutActive", report.vbucketsWithoutActive},
                           {"replicaSlotsEmpty", report.replicaSlotsEmpty},
                           {"nodes", std::move(nodes)},
                           {"problems", report.problems}};
    return document.dump();
}

std::string rebalanceProgressText(std::size_t inPlace, std::size_t total) {
    constexpr std::size_t kWidth = 40;
    const std::size_t filled = total == 0 ? kWidth : inPlace * kWidth / total;
    std::string bar = "rebalance [";
    bar.append(filled, '#');
    bar.append(kWidth - filled, '.');
    bar += "] ";
    bar += std::to_string(inPlace);
    bar += '/';
    bar += std::to_string(total);
    bar += " vBuckets in place";
    return bar;
}

std::string rebalanceProgressJson(std::size_t inPlace, std::size_t total, std::uint64_t revision) {
    return json{{"inPlace", inPlace}, {"total", total}, {"mapRevision", revision}}.dump();
}

}  // namespace kvexec::cluster
