#include "cluster/rebalance_plan.h"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <utility>

namespace kvexec::cluster {
namespace {

// `total` places over `nodeCount` nodes: total / n each, and one more for
// the `total % n` nodes that `rank` puts first.
std::vector<int> quotas(int total, int nodeCount, const std::vector<int>& rank) {
    std::vector<int> quota(static_cast<std::size_t>(nodeCount), total / nodeCount);
    for (int i = 0; i < total % nodeCount; ++i) {
        ++quota[static_cast<std::size_t>(rank[static_cast<std::size_t>(i)])];
    }
    return quota;
}

// Node indexes ordered by how much of something they hold now, most first
// (then by index): the extra quota goes where it moves nothing.
std::vector<int> byHolding(const std::vector<int>& held) {
    std::vector<int> order(held.size());
    for (std::size_t i = 0; i < order.size(); ++i) {
        order[i] = static_cast<int>(i);
    }
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        return held[static_cast<std::size_t>(a)] > held[static_cast<std::size_t>(b)];
    });
    return order;
}

// The current chains by index into the new node list (kNoNode for a node
// that is not in it).
std::vector<std::vector<int>> translate(const VBucketMap& current,
                                        const std::vector<std::string>& nodes) {
    std::vector<std::vector<int>> chains;
    for (const auto& chain : current.chains) {
        std::vector<int> translated;
        for (const int old : chain) {
            int index = kNoNode;
            if (old != kNoNode && old < static_cast<int>(current.nodes.size())) {
                const auto it = std::find(nodes.begin(), nodes.end(),
                                          current.nodes[static_cast<std::size_t>(old)]);
                index = it == nodes.end() ? kNoNode : static_cast<int>(it - nodes.begin());
            }
            translated.push_back(index);
        }
        chains.push_back(std::move(translated));
    }
    return chains;
}

bool contains(const std::vector<int>& chain, int node) {
    return std::find(chain.begin(), chain.end(), node) != chain.end();
}

// The node with the most quota left among those `allowed`; kNoNode if none
// has any left.
template <typename Allowed>
int mostQuotaLeft(const std::vector<int>& left, Allowed allowed) {
    int best = kNoNode;
    for (int node = 0; node < static_cast<int>(left.size()); ++node) {
        if (allowed(node) && left[static_cast<std::size_t>(node)] > 0 &&
            (best == kNoNode ||
             left[static_cast<std::size_t>(node)] > left[static_cast<std::size_t>(best)])) {
            best = node;
        }
    }
    return best;
}

// Actives: kept within quota, then given to a copy holder with quota left,
// then to whoever has the most quota left.
std::vector<int> placeActives(const std::vector<std::vector<int>>& old, int nodeCount) {
    std::vector<int> held(static_cast<std::size_t>(nodeCount), 0);
    for (const auto& chain : old) {
        if (!chain.empty() && chain.front() != kNoNode) {
            ++held[static_cast<std::size_t>(chain.front())];
        }
    }
    std::vector<int> left = quotas(static_cast<int>(old.size()), nodeCount, byHolding(held));
    std::vector<int> active(old.size(), kNoNode);
    for (std::size_t vb = 0; vb < old.size(); ++vb) {
        const int now = old[vb].empty() ? kNoNode : old[vb].front();
        if (now != kNoNode && left[static_cast<std::size_t>(now)] > 0) {
            active[vb] = now;
            --left[static_cast<std::size_t>(now)];
        }
    }
    for (std::size_t vb = 0; vb < old.size(); ++vb) {
        if (active[vb] != kNoNode) {
            continue;
        }
        int node = mostQuotaLeft(left, [&](int n) { return contains(old[vb], n); });
        if (node == kNoNode) {
            node = mostQuotaLeft(left, [](int) { return true; });
        }
        active[vb] = node;
        --left[static_cast<std::size_t>(node)];
    }
    return active;
}

// Replicas: the nodes that hold a copy now are kept within quota, then the
// rest by quota left, and where no node with quota fits the chain, the
// least loaded that does. Chains whose active moved keep their copies
// first: they cannot take the new active as a replica, while the others
// can take whoever joined.
void placeReplicas(std::vector<std::vector<int>>& chains, const std::vector<std::vector<int>>& old,
                   int nodeCount, int replicas) {
    std::vector<int> held(static_cast<std::size_t>(nodeCount), 0);
    for (const auto& chain : old) {
        for (std::size_t slot = 1; slot < chain.size(); ++slot) {
            if (chain[slot] != kNoNode) {
                ++held[static_cast<std::size_t>(chain[slot])];
            }
        }
    }
    const int total = static_cast<int>(chains.size()) * replicas;
    std::vector<int> left = quotas(total, nodeCount, byHolding(held));
    const auto keepCopies = [&](std::size_t vb) {
        for (const int node : old[vb]) {
            if (node != kNoNode && static_cast<int>(chains[vb].size()) < 1 + replicas &&
                !contains(chains[vb], node) && left[static_cast<std::size_t>(node)] > 0) {
                chains[vb].push_back(node);
                --left[static_cast<std::size_t>(node)];
            }
        }
    };
    for (const bool activeMoved : {true, false}) {
        for (std::size_t vb = 0; vb < chains.size(); ++vb) {
            if ((old[vb].empty() || old[vb].front() != chains[vb].front()) == activeMoved) {
                keepCopies(vb);
            }
        }
    }
    for (auto& chain : chains) {
        while (static_cast<int>(chain.size()) < 1 + replicas) {
            int node = mostQuotaLeft(left, [&](int n) { return !contains(chain, n); });
            if (node == kNoNode) {  // every node with quota left is in the chain
                for (int n = 0; n < nodeCount; ++n) {
                    if (!contains(chain, n) &&
                        (node == kNoNode || left[static_cast<std::size_t>(n)] >
                                                left[static_cast<std::size_t>(node)])) {
                        node = n;
                    }
                }
            }
            chain.push_back(node);
            --left[static_cast<std::size_t>(node)];
        }
    }
}

// Greedy placement can leave replica counts uneven where chains ran out of
// nodes they could take: move replicas from the most loaded node to the
// least loaded, in chains that do not hold the latter, preferring copies
// that are new anyway (no backfill is lost by moving them).
void evenOutReplicas(std::vector<std::vector<int>>& chains,
                     const std::vector<std::vector<int>>& old, int nodeCount) {
    std::vector<int> count(static_cast<std::size_t>(nodeCount), 0);
    for (const auto& chain : chains) {
        for (std::size_t slot = 1; slot < chain.size(); ++slot) {
            ++count[static_cast<std::size_t>(chain[slot])];
        }
    }
    for (;;) {
        const auto [least, most] = std::minmax_element(count.begin(), count.end());
        if (*most - *least <= 1) {
            return;
        }
        const int from = static_cast<int>(most - count.begin());
        const int to = static_cast<int>(least - count.begin());
        // (vb, slot) of a replica on `from` that may go to `to`; nullopt if none.
        const auto find =
            [&](bool newCopiesOnly) -> std::optional<std::pair<std::size_t, std::size_t>> {
            for (std::size_t vb = 0; vb < chains.size(); ++vb) {
                if (contains(chains[vb], to) || (newCopiesOnly && contains(old[vb], from))) {
                    continue;
                }
                for (std::size_t slot = 1; slot < chains[vb].size(); ++slot) {
                    if (chains[vb][slot] == from) {
                        return std::make_pair(vb, slot);
                    }
                }
            }
            return std::nullopt;
        };
        auto move = find(true);
        if (!move) {
            move = find(false);
        }
        if (!move) {
            return;  // no chain can take the move: as even as it gets
        }
        const auto [chosenVb, chosenSlot] = *move;
        chains[chosenVb][chosenSlot] = to;
        --count[static_cast<std::size_t>(from)];
        ++count[static_cast<std::size_t>(to)];
    }
}

}  // namespace

VBucketMap rebalanceTarget(const VBucketMap& current, std::vector<std::string> nodes) {
    // computeMap checks the node list and the counts, and gives the shape.
    VBucketMap target =
        computeMap(nodes, static_cast<std::uint16_t>(current.chains.size()), current.numReplicas);
    const int nodeCount = static_cast<int>(target.nodes.size());
    const int replicas = static_cast<int>(
        std::min<std::uint32_t>(current.numReplicas, static_cast<std::uint32_t>(nodeCount - 1)));
    const auto old = translate(current, target.nodes);
    const std::vector<int> actives = placeActives(old, nodeCount);
    std::vector<std::vector<int>> chains;
    chains.reserve(actives.size());
    for (const int active : actives) {
        chains.push_back({active});
    }
    placeReplicas(chains, old, nodeCount, replicas);
    evenOutReplicas(chains, old, nodeCount);
    for (auto& chain : chains) {
        chain.resize(1 + current.numReplicas, kNoNode);
    }
    target.chains = std::move(chains);
    target.revision = current.revision + 1;
    return target;
}

VBucketMap removalTarget(const VBucketMap& current, const std::string& leaving) {
    std::vector<std::string> staying;
    for (const std::string& node : current.nodes) {
        if (node != leaving) {
            staying.push_back(node);
        }
    }
    if (staying.size() == current.nodes.size()) {
        std::string message = "removalTarget: the map does not name ";
        message += leaving;
        throw std::invalid_argument(message);
    }
    if (staying.empty()) {
        throw std::invalid_argument("removalTarget: the last node cannot leave");
    }
    VBucketMap target = rebalanceTarget(current, staying);
    for (auto& chain : target.chains) {
        for (int& node : chain) {
            if (node != kNoNode) {
                const auto& name = target.nodes[static_cast<std::size_t>(node)];
                node =
                    static_cast<int>(std::find(current.nodes.begin(), current.nodes.end(), name) -
                                     current.nodes.begin());
            }
        }
    }
    target.nodes = current.nodes;
    return target;
}

RebalanceDistance rebalanceDistance(const VBucketMap& from, const VBucketMap& to) {
    if (from.chains.size() != to.chains.size()) {
        throw std::invalid_argument("rebalanceDistance: maps of different vBucket counts");
    }
    RebalanceDistance distance;
    for (std::size_t vb = 0; vb < from.chains.size(); ++vb) {
        const auto& before = from.chains[vb];
        const auto& after = to.chains[vb];
        if (nodeName(from, before.empty() ? kNoNode : before.front()) !=
            nodeName(to, after.empty() ? kNoNode : after.front())) {
            ++distance.activeMoves;
        }
        for (const int node : after) {
            const bool held =
                node != kNoNode && std::any_of(before.begin(), before.end(), [&](int b) {
                    return nodeName(from, b) == nodeName(to, node);
                });
            distance.replicaCopies += node != kNoNode && !held ? 1 : 0;
        }
    }
    return distance;
}

}  // namespace kvexec::cluster
