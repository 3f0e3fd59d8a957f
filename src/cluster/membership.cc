#include "cluster/membership.h"

#include <algorithm>

namespace kvexec::cluster {

std::string ClusterKeys::all() const {
    std::string prefix = root_;
    prefix += '/';
    return prefix;
}

std::string ClusterKeys::under(std::string_view name) const {
    std::string key = all();
    key += name;
    return key;
}

std::string ClusterKeys::nodesPrefix() const {
    return under("nodes/");
}

std::string ClusterKeys::node(std::string_view name) const {
    std::string key = nodesPrefix();
    key += name;
    return key;
}

std::string ClusterKeys::leader() const {
    return under("leader");
}

std::string ClusterKeys::map() const {
    return under("map");
}

std::string ClusterKeys::rebalance() const {
    return under("rebalance");
}

std::string ClusterKeys::manifest() const {
    return under("manifest");
}

std::string ClusterKeys::flush() const {
    return under("flush");
}

std::string ClusterKeys::statusPrefix() const {
    return under("status/");
}

std::string ClusterKeys::status(std::string_view name) const {
    std::string key = statusPrefix();
    key += name;
    return key;
}

std::string ClusterKeys::ejectedPrefix() const {
    return under("ejected/");
}

std::string ClusterKeys::ejected(std::string_view name) const {
    std::string key = ejectedPrefix();
    key += name;
    return key;
}

Membership readMembership(const ClusterKeys& keys, const std::vector<KeyValue>& underRoot) {
    Membership membership;
    const std::string nodesPrefix = keys.nodesPrefix();
    const std::string leaderKey = keys.leader();
    for (const KeyValue& kv : underRoot) {
        if (kv.key == leaderKey) {
            membership.leader = kv.value;
            membership.leaderRevision = kv.modRevision;
        } else if (kv.key.size() > nodesPrefix.size() && kv.key.starts_with(nodesPrefix)) {
            membership.nodes.push_back(kv.key.substr(nodesPrefix.size()));
        }
    }
    std::sort(membership.nodes.begin(), membership.nodes.end());
    return membership;
}

Role roleOf(const Membership& membership, std::string_view self) {
    if (!membership.leader) {
        return Role::Candidate;
    }
    return *membership.leader == self ? Role::Leader : Role::Follower;
}

}  // namespace kvexec::cluster
