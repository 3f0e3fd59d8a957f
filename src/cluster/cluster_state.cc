#include "cluster/cluster_state.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "cluster/rebalance_plan.h"

namespace kvexec::cluster {
namespace {

using nlohmann::json;

[[noreturn]] void malformed(std::string_view what, std::string_view problem) {
    std::string message(what);
    message += ": ";
    message += problem;
    throw std::invalid_argument(message);
}

json parseObject(std::string_view text, std::string_view what) {
    json document = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (document.is_discarded() || !document.is_object()) {
        malformed(what, "not a JSON object");
    }
    return document;
}

std::uint64_t unsignedField(const json& object, const char* name, std::uint64_t max,
                            std::string_view what) {
    const auto found = object.find(name);
    if (found == object.end() || !found->is_number_unsigned() ||
        found->get<std::uint64_t>() > max) {
        std::string problem = "\"";
        problem += name;
        problem += "\" is not an integer in [0, ";
        problem += std::to_string(max);
        problem += ']';
        malformed(what, problem);
    }
    return found->get<std::uint64_t>();
}

std::uint16_t portField(const json& object, const char* name) {
    return static_cast<std::uint16_t>(
        unsignedField(object, name, std::numeric_limits<std::uint16_t>::max(), "node address"));
}

// The name after `prefix` in `key`; empty when `key` is not under it.
std::string_view nameUnder(std::string_view key, std::string_view prefix) {
    if (key.size() <= prefix.size() || !key.starts_with(prefix)) {
        return {};
    }
    return key.substr(prefix.size());
}

void noteProblem(ClusterView& view, const std::string& key, const std::exception& error) {
    std::string problem = key;
    problem += ": ";
    problem += error.what();
    view.problems.push_back(std::move(problem));
}

// Reads one key the membership does not cover (addresses, statuses, the
// map) into the view.
void readKey(const ClusterKeys& keys, const KeyValue& kv, ClusterView& view) {
    try {
        if (kv.key == keys.map()) {
            view.mapModRevision = kv.modRevision;
            view.map = decodeVBucketMap(kv.value);
        } else if (kv.key == keys.leader()) {
            view.leaderLease = kv.lease;
        } else if (kv.key == keys.rebalance()) {
            view.rebalanceModRevision = kv.modRevision;
            view.rebalanceTarget = decodeVBucketMap(kv.value);
        } else if (kv.key == keys.manifest()) {
            view.manifest = kv.value;
        } else if (kv.key == keys.flush()) {
            view.flushes = decodeFlushCount(kv.value);
        } else if (const auto name = nameUnder(kv.key, keys.nodesPrefix()); !name.empty()) {
            view.leases[std::string(name)] = kv.lease;
            view.addresses[std::string(name)] = decodeNodeAddress(kv.value);
        } else if (const auto name = nameUnder(kv.key, keys.ejectedPrefix()); !name.empty()) {
            view.ejected.insert(std::string(name));
        } else if (const auto name = nameUnder(kv.key, keys.statusPrefix()); !name.empty()) {
            view.statuses[std::string(name)] = decodeNodeStatus(kv.value);
        }
    } catch (const std::invalid_argument& error) {
        noteProblem(view, kv.key, error);
    }
}

bool names(const std::vector<std::string>& nodes, const std::string& name) {
    return std::binary_search(nodes.begin(), nodes.end(), name);
}

std::uint64_t appliedEverywhere(const ClusterView& view, const VBucketMap& map) {
    std::uint64_t lowest = map.revision;
    for (const std::string& node : map.nodes) {
        if (!names(view.membership.nodes, node)) {
            continue;  // gone: it serves no client
        }
        const auto status = view.statuses.find(node);
        lowest = std::min(lowest, status == view.statuses.end() ? 0 : status->second.mapRevision);
    }
    return lowest;
}

// The lowest `field` of the registered nodes' statuses (0 for a node
// without one).
std::uint64_t lowestOfRegistered(const ClusterView& view, std::uint64_t NodeStatus::*field) {
    std::uint64_t lowest = std::numeric_limits<std::uint64_t>::max();
    for (const std::string& node : view.membership.nodes) {
        const auto status = view.statuses.find(node);
        lowest = std::min(lowest, status == view.statuses.end() ? 0 : status->second.*field);
    }
    return view.membership.nodes.empty() ? 0 : lowest;
}

}  // namespace

std::string encodeNodeAddress(const NodeAddress& address) {
    json document{
        {"host", address.host}, {"kvPort", address.kvPort}, {"mgmtPort", address.mgmtPort}};
    if (address.tlsPort != 0) {
        document["tlsPort"] = address.tlsPort;
    }
    if (address.mgmtTlsPort != 0) {
        document["mgmtTlsPort"] = address.mgmtTlsPort;
    }
    return document.dump();
}

NodeAddress decodeNodeAddress(std::string_view text) {
    const json document = parseObject(text, "node address");
    const auto host = document.find("host");
    if (host == document.end() || !host->is_string() ||
        host->get_ref<const std::string&>().empty()) {
        malformed("node address", "\"host\" is not a non-empty string");
    }
    NodeAddress address;
    address.host = host->get<std::string>();
    address.kvPort = portField(document, "kvPort");
    address.mgmtPort = portField(document, "mgmtPort");
    if (document.contains("tlsPort")) {
        address.tlsPort = portField(document, "tlsPort");
    }
    if (document.contains("mgmtTlsPort")) {
        address.mgmtTlsPort = portField(document, "mgmtTlsPort");
    }
    return address;
}

std::string encodeNodeStatus(const NodeStatus& status) {
    json document = {{"mapRevision", status.mapRevision}};
    if (!status.membership.empty()) {
        document["membership"] = status.membership;
    }
    if (status.manifestUid != 0) {
        document["manifestUid"] = status.manifestUid;
    }
    if (status.flushed != 0) {
        document["flushed"] = status.flushed;
    }
    if (const auto& replication = status.replication) {
        // Pairs rather than objects keyed by vbid: the smallest JSON that
        // stays readable.
        const auto pairs = [](const std::vector<VBucketSeqno>& seqnos) {
            json list = json::array();
            for (const VBucketSeqno& entry : seqnos) {
                list.push_back(json::array({entry.vbid, entry.seqno}));
            }
            return list;
        };
        document["replicaVBuckets"] = replication->replicaVBuckets;
        document["streamsOpen"] = replication->streamsOpen;
        document["active"] = pairs(replication->active);
        document["replica"] = pairs(replication->replica);
    }
    return document.dump();
}

NodeStatus decodeNodeStatus(std::string_view text) {
    constexpr std::string_view kWhat = "node status";
    constexpr auto kMax = std::numeric_limits<std::uint64_t>::max();
    const json document = parseObject(text, kWhat);
    NodeStatus status{unsignedField(document, "mapRevision", kMax, kWhat), std::nullopt};
    if (const auto membership = document.find("membership"); membership != document.end()) {
        if (!membership->is_string()) {
            malformed(kWhat, "\"membership\" is not a string");
        }
        status.membership = membership->get<std::string>();
    }
    if (document.contains("manifestUid")) {
        status.manifestUid = unsignedField(document, "manifestUid", kMax, kWhat);
    }
    if (document.contains("flushed")) {
        status.flushed = unsignedField(document, "flushed", kMax, kWhat);
    }
    if (!document.contains("replicaVBuckets")) {
        return status;  // a node that does not replicate, or an older one
    }
    const auto seqnos = [&](const char* name) {
        const auto found = document.find(name);
        if (found == document.end() || !found->is_array()) {
            std::string problem = "\"";
            problem += name;
            problem += "\" is not an array";
            malformed(kWhat, problem);
        }
        std::vector<VBucketSeqno> list;
        for (const json& entry : *found) {
            if (!entry.is_array() || entry.size() != 2 || !entry[0].is_number_unsigned() ||
                entry[0].get<std::uint64_t>() > std::numeric_limits<std::uint16_t>::max() ||
                !entry[1].is_number_unsigned()) {
                std::string problem = "\"";
                problem += name;
                problem += "\" holds something other than [vbid, seqno]";
                malformed(kWhat, problem);
            }
            list.push_back({entry[0].get<std::uint16_t>(), entry[1].get<std::uint64_t>()});
        }
        return list;
    };
    ReplicationStatus replication;
    replication.replicaVBuckets = unsignedField(document, "replicaVBuckets", kMax, kWhat);
    replication.streamsOpen = unsignedField(document, "streamsOpen", kMax, kWhat);
    replication.active = seqnos("active");
    replication.replica = seqnos("replica");
    status.replication = std::move(replication);
    return status;
}

std::uint64_t decodeFlushCount(std::string_view text) {
    std::uint64_t count = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), count);
    if (error != std::errc() || end != text.data() + text.size() || text.empty()) {
        malformed("flush count", "not a decimal count: " + std::string(text));
    }
    return count;
}

ClusterView readClusterView(const ClusterKeys& keys, const std::vector<KeyValue>& underRoot) {
    ClusterView view;
    view.membership = readMembership(keys, underRoot);
    for (const KeyValue& kv : underRoot) {
        readKey(keys, kv, view);
    }
    return view;
}

std::vector<std::string> activesDown(const VBucketMap& map,
                                     const std::vector<std::string>& registered) {
    std::set<std::string> down;
    for (const auto& chain : map.chains) {
        const int active = chain.empty() ? kNoNode : chain.front();
        if (active == kNoNode || static_cast<std::size_t>(active) >= map.nodes.size()) {
            continue;
        }
        const std::string& node = map.nodes[static_cast<std::size_t>(active)];
        if (!names(registered, node)) {
            down.insert(node);
        }
    }
    return {down.begin(), down.end()};
}

ClusterState clusterStateOf(const ClusterView& view, std::uint16_t numVBuckets,
                            const std::map<std::string, NodeAddress>& remembered) {
    ClusterState state;
    if (view.map && view.map->chains.size() == numVBuckets) {
        state.map = view.map;
    }
    state.registered = view.membership.nodes;
    state.leader = view.membership.leader;
    state.manifest = view.manifest;
    state.manifestEverywhere = lowestOfRegistered(view, &NodeStatus::manifestUid);
    state.flushes = view.flushes;
    state.flushedEverywhere = lowestOfRegistered(view, &NodeStatus::flushed);
    for (const std::string& node : state.registered) {
        if (const auto found = view.addresses.find(node); found != view.addresses.end()) {
            state.addresses.insert(*found);
        }
    }
    if (state.map) {
        for (const std::string& node : state.map->nodes) {
            const auto found = remembered.find(node);
            if (!names(state.registered, node) && found != remembered.end()) {
                state.addresses.insert(*found);
            }
        }
        state.appliedEverywhere = appliedEverywhere(view, *state.map);
        state.activesDown = activesDown(*state.map, state.registered);
    }
    return state;
}

// What the live nodes hold, from their statuses (refreshed every 500 ms). A
// failed node's status goes with its lease, so a promotion is chosen among
// the survivors, whose seqnos stopped moving when their active did: it
// fenced itself before its lease could expire (node_agent.h), and the
// failover waited for that expiry.
HeldSeqnos heldSeqnos(const ClusterView& view, std::uint16_t numVBuckets) {
    HeldSeqnos held;
    for (const auto& [node, status] : view.statuses) {
        if (!status.replication) {
            continue;
        }
        auto& seqnos = held.byNode[node];
        seqnos.assign(numVBuckets, 0);
        for (const auto* list : {&status.replication->active, &status.replication->replica}) {
            for (const auto& entry : *list) {
                if (entry.vbid < numVBuckets) {
                    seqnos[entry.vbid] = entry.seqno;
                }
            }
        }
    }
    return held;
}

// Where every copy of a vBucket that survives is on a rejoined node (a
// whole chain restarted, or a chain of one), failing them over would hand
// the vBucket to nodes that hold nothing and make the real copies roll back
// to zero: those chains keep their rejoined members, in their order, and
// fill what is left from the balanced chain `next` has.
void keepChainsWithNoOtherCopy(VBucketMap& next, const VBucketMap& old,
                               const std::vector<std::string>& failedOver) {
    const std::size_t slots = std::min<std::size_t>(1 + next.numReplicas, next.nodes.size());
    for (std::size_t vb = 0; vb < next.chains.size() && vb < old.chains.size(); ++vb) {
        std::vector<int> rejoined;
        bool otherCopy = false;
        for (const int member : old.chains[vb]) {
            if (member == kNoNode) {
                continue;
            }
            const std::string& name = old.nodes[static_cast<std::size_t>(member)];
            const int index = indexOf(next, name);
            const bool wasRejoined =
                std::find(failedOver.begin(), failedOver.end(), name) != failedOver.end();
            otherCopy = otherCopy || (index != kNoNode && !wasRejoined);
            if (index != kNoNode && wasRejoined) {
                rejoined.push_back(index);
            }
        }
        if (otherCopy || rejoined.empty()) {
            continue;
        }
        std::vector<int> chain = rejoined;
        for (const int balanced : next.chains[vb]) {
            if (chain.size() < slots && balanced != kNoNode &&
                std::find(chain.begin(), chain.end(), balanced) == chain.end()) {
                chain.push_back(balanced);
            }
        }
        chain.resize(1 + next.numReplicas, kNoNode);
        next.chains[vb] = std::move(chain);
    }
}

std::vector<std::string> mappableNodes(const ClusterView& view) {
    std::vector<std::string> nodes;
    std::copy_if(view.membership.nodes.begin(), view.membership.nodes.end(),
                 std::back_inserter(nodes),
                 [&](const std::string& node) { return !view.ejected.contains(node); });
    return nodes;
}

std::vector<std::string> rejoinedNodes(const ClusterView& view) {
    std::vector<std::string> rejoined;
    if (!view.map) {
        return rejoined;
    }
    for (const std::string& node : view.map->nodes) {
        const std::int64_t recorded = leaseOf(*view.map, node);
        const auto current = view.leases.find(node);
        if (recorded != 0 && current != view.leases.end() && current->second != recorded) {
            rejoined.push_back(node);
        }
    }
    return rejoined;
}

std::string membershipDigest(const ClusterView& view) {
    // FNV-1a over "name=lease;" of each registered node, in name order.
    std::uint64_t hash = 14695981039346656037ull;
    const auto mix = [&hash](std::string_view text) {
        for (const char c : text) {
            hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
        }
    };
    for (const std::string& node : view.membership.nodes) {
        const auto lease = view.leases.find(node);
        mix(node);
        mix("=");
        mix(std::to_string(lease == view.leases.end() ? 0 : lease->second));
        mix(";");
    }
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
    return hex;
}

bool statusesFresh(const ClusterView& view) {
    const std::string digest = membershipDigest(view);
    for (const std::string& node : mappableNodes(view)) {
        const auto status = view.statuses.find(node);
        if (status == view.statuses.end() || status->second.membership != digest) {
            return false;
        }
    }
    return true;
}

bool changesActives(const VBucketMap& previous, const VBucketMap& next) {
    return previous.chains.size() != next.chains.size() ||
           rebalanceDistance(previous, next).activeMoves != 0;
}

std::optional<VBucketMap> mapToPublish(const ClusterView& view, std::uint16_t numVBuckets,
                                       std::uint32_t numReplicas,
                                       std::uint64_t highestRevisionSeen) {
    const std::vector<std::string> nodes = mappableNodes(view);
    if (nodes.empty()) {
        return std::nullopt;
    }
    const std::vector<std::string> failedOver = rejoinedNodes(view);
    std::optional<VBucketMap> previous;
    if (view.map) {
        previous = withoutNodes(*view.map, failedOver);
    }
    const HeldSeqnos held = heldSeqnos(view, numVBuckets);
    VBucketMap next =
        computeMap(nodes, numVBuckets, numReplicas, previous ? &*previous : nullptr, &held);
    if (view.map && !failedOver.empty()) {
        keepChainsWithNoOtherCopy(next, *view.map, failedOver);
    }
    next.leases.clear();
    for (const std::string& node : next.nodes) {
        const auto current = view.leases.find(node);
        next.leases.push_back(current == view.leases.end() ? 0 : current->second);
    }
    if (std::find(next.leases.begin(), next.leases.end(), 0) != next.leases.end()) {
        next.leases.clear();  // a node key without a lease: nothing to fence on
    }
    if (view.map && next == *view.map) {
        return std::nullopt;
    }
    next.revision = std::max(next.revision, highestRevisionSeen + 1);
    return next;
}

VBucketMap mapForLease(const VBucketMap& map, const std::string& node, std::int64_t lease) {
    const std::int64_t recorded = leaseOf(map, node);
    if (recorded == 0 || recorded == lease) {
        return map;
    }
    return withoutNodes(map, {node});
}

std::string_view to_string(VBucketRole role) {
    switch (role) {
        case VBucketRole::Active:
            return "active";
        case VBucketRole::Replica:
            return "replica";
        case VBucketRole::Dead:
            return "dead";
    }
    return "unknown";
}

std::vector<VBucketChange> vbucketChanges(const VBucketMap& map, std::string_view node) {
    const int self = indexOf(map, node);
    std::vector<VBucketChange> changes;
    changes.reserve(map.chains.size());
    for (std::size_t vb = 0; vb < map.chains.size(); ++vb) {
        VBucketChange change;
        change.vbid = static_cast<std::uint16_t>(vb);
        const auto& chain = map.chains[vb];
        for (const int index : chain) {
            change.chain.push_back(nodeName(map, index));
        }
        const auto position = std::find(chain.begin(), chain.end(), self);
        const bool incoming = isIncoming(map, vb, self);
        if (self != kNoNode && position == chain.begin()) {
            change.role = VBucketRole::Active;
            change.handingOver = vb < map.takeoverSince.size() && map.takeoverSince[vb] != 0;
        } else if (self != kNoNode && (position != chain.end() || incoming)) {
            change.role = VBucketRole::Replica;
        } else {
            change.role = VBucketRole::Dead;
        }
        changes.push_back(std::move(change));
    }
    return changes;
}

}  // namespace kvexec::cluster
