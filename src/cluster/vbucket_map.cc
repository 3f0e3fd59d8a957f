#include "cluster/vbucket_map.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace kvexec::cluster {
namespace {

void checkNodes(const std::vector<std::string>& sorted) {
    if (sorted.empty()) {
        throw std::invalid_argument("computeMap: no nodes");
    }
    if (std::find(sorted.begin(), sorted.end(), std::string()) != sorted.end()) {
        throw std::invalid_argument("computeMap: a node has an empty name");
    }
    const auto duplicate = std::adjacent_find(sorted.begin(), sorted.end());
    if (duplicate != sorted.end()) {
        std::string message = "computeMap: node named twice: ";
        message += *duplicate;
        throw std::invalid_argument(message);
    }
}

bool sameShape(const VBucketMap& previous, const std::vector<std::string>& nodes,
               std::uint16_t numVBuckets, std::uint32_t numReplicas) {
    return previous.nodes == nodes && previous.numReplicas == numReplicas &&
           previous.chains.size() == numVBuckets;
}

// Actives go round-robin (vb % n), so a "round" of n consecutive vBuckets
// makes every node active once. In a full round, replica k of the vBucket
// whose active is a sits `shift` nodes after it, with a different set of
// shifts each round: every node takes exactly r replicas per round (level
// counts), and over n - 1 rounds every node backs up every other one
// equally (a failed node's vBuckets are promoted on all the others).
int fullRoundReplica(int active, int round, int slot, int nodeCount, int replicas) {
    const int shift = 1 + (round * replicas + slot) % (nodeCount - 1);
    return (active + shift) % nodeCount;
}

// The last, partial round (m < n vBuckets, actives 0..m-1) cannot use
// shifts and stay level, so its m * r replicas are dealt out against
// quotas: every node may take floor(m*r/n), and the remainder goes one each
// to the nodes with no active in this round first (evening the total
// load). Each chain takes the nodes with the most quota left; exhaustively
// checked to fill every quota for n <= 160, r <= 4 (and n <= 64, r <= 8).
class PartialRound {
  public:
    PartialRound(int nodeCount, int vbuckets, int replicas)
        : nodeCount_(nodeCount), quota_(nodeCount, vbuckets * replicas / nodeCount) {
        const int remainder = vbuckets * replicas % nodeCount;
        for (int i = 0; i < remainder; ++i) {
            ++quota_[(vbuckets + i) % nodeCount];
        }
    }

    int place(const std::vector<int>& chain) {
        const int active = chain.front();
        int best = kNoNode;
        std::pair<int, int> bestRank;
        for (int candidate = 0; candidate < nodeCount_; ++candidate) {
            if (std::find(chain.begin(), chain.end(), candidate) != chain.end()) {
                continue;
            }
            // Most quota left first; then ring order after the active.
            const std::pair<int, int> rank{-quota_[candidate],
                                           (candidate - active - 1 + nodeCount_) % nodeCount_};
            if (best == kNoNode || rank < bestRank) {
                best = candidate;
                bestRank = rank;
            }
        }
        --quota_[best];
        return best;
    }

  private:
    int nodeCount_;
    std::vector<int> quota_;
};

std::vector<std::vector<int>> computeChains(int nodeCount, int numVBuckets, int replicas) {
    std::vector<std::vector<int>> chains;
    chains.reserve(numVBuckets);
    const int fullRounds = numVBuckets / nodeCount;
    PartialRound last(nodeCount, numVBuckets % nodeCount, replicas);
    for (int vb = 0; vb < numVBuckets; ++vb) {
        const int active = vb % nodeCount;
        const int round = vb / nodeCount;
        std::vector<int> chain{active};
        for (int slot = 0; slot < replicas; ++slot) {
            chain.push_back(round < fullRounds
                                ? fullRoundReplica(active, round, slot, nodeCount, replicas)
                                : last.place(chain));
        }
        chains.push_back(std::move(chain));
    }
    return chains;
}

// The previous chain's members that are still in the map, as indexes
// into `map.nodes`, in the previous chain's order.
std::vector<int> survivorsOf(const VBucketMap& map, const VBucketMap& previous, std::size_t vb) {
    std::vector<int> survivors;
    for (const int old : previous.chains[vb]) {
        if (old == kNoNode || old >= static_cast<int>(previous.nodes.size())) {
            continue;
        }
        if (const int index = indexOf(map, nodeName(previous, old)); index != kNoNode) {
            survivors.push_back(index);
        }
    }
    return survivors;
}

// The previous chain's surviving members first, led by the previous
// active or, where it was lost, by the survivor holding the most (it
// holds what a majority acknowledged); then the balanced chain's nodes
// for what is left. Even a vBucket every status shows empty stays: the
// statuses are up to 500 ms old, and its active may have taken writes
// since (moving it safely takes a rebalance's takeover).
void keepDataWhereItIs(VBucketMap& map, const VBucketMap& previous, int replicas,
                       const HeldSeqnos* held) {
    for (std::size_t vb = 0; vb < map.chains.size(); ++vb) {
        std::vector<int> chain = survivorsOf(map, previous, vb);
        const int previousActive = previous.chains[vb].empty() ? kNoNode : previous.chains[vb][0];
        const bool activeLost = previousActive == kNoNode || chain.empty() ||
                                map.nodes[static_cast<std::size_t>(chain.front())] !=
                                    previous.nodes[static_cast<std::size_t>(previousActive)];
        if (activeLost && held != nullptr) {
            std::stable_sort(chain.begin(), chain.end(), [&](int left, int right) {
                return held->seqnoOf(map.nodes[static_cast<std::size_t>(left)], vb) >
                       held->seqnoOf(map.nodes[static_cast<std::size_t>(right)], vb);
            });
        }
        if (static_cast<int>(chain.size()) > 1 + replicas) {
            chain.resize(static_cast<std::size_t>(1 + replicas));
        }
        for (const int balanced : map.chains[vb]) {
            if (static_cast<int>(chain.size()) < 1 + replicas &&
                std::find(chain.begin(), chain.end(), balanced) == chain.end()) {
                chain.push_back(balanced);
            }
        }
        map.chains[vb] = std::move(chain);
    }
}

}  // namespace

VBucketMap computeMap(std::vector<std::string> nodes, std::uint16_t numVBuckets,
                      std::uint32_t numReplicas, const VBucketMap* previous,
                      const HeldSeqnos* held) {
    std::sort(nodes.begin(), nodes.end());
    checkNodes(nodes);
    if (numVBuckets == 0) {
        throw std::invalid_argument("computeMap: no vBuckets");
    }
    if (numReplicas > kMaxReplicas) {
        throw std::invalid_argument("computeMap: more than 3 replicas");
    }
    if (previous != nullptr && sameShape(*previous, nodes, numVBuckets, numReplicas)) {
        return *previous;
    }
    const int nodeCount = static_cast<int>(nodes.size());
    const int realReplicas = static_cast<int>(
        std::min<std::uint32_t>(numReplicas, static_cast<std::uint32_t>(nodeCount - 1)));
    VBucketMap map;
    map.revision = previous != nullptr ? previous->revision + 1 : 1;
    map.numReplicas = numReplicas;
    map.nodes = std::move(nodes);
    map.chains = computeChains(nodeCount, numVBuckets, realReplicas);
    if (previous != nullptr && previous->chains.size() == numVBuckets) {
        keepDataWhereItIs(map, *previous, realReplicas, held);
    }
    for (auto& chain : map.chains) {
        chain.resize(1 + numReplicas, kNoNode);
    }
    return map;
}

std::uint64_t HeldSeqnos::seqnoOf(std::string_view node, std::size_t vb) const {
    const auto found = byNode.find(node);
    return found == byNode.end() || vb >= found->second.size() ? 0 : found->second[vb];
}

int indexOf(const VBucketMap& map, std::string_view node) {
    const auto found = std::find(map.nodes.begin(), map.nodes.end(), node);
    return found == map.nodes.end() ? kNoNode : static_cast<int>(found - map.nodes.begin());
}

std::string nodeName(const VBucketMap& map, int index) {
    return index == kNoNode ? std::string() : map.nodes[static_cast<std::size_t>(index)];
}

std::int64_t leaseOf(const VBucketMap& map, std::string_view node) {
    const int index = indexOf(map, node);
    return index == kNoNode || static_cast<std::size_t>(index) >= map.leases.size()
               ? 0
               : map.leases[static_cast<std::size_t>(index)];
}

VBucketMap withoutNodes(const VBucketMap& map, const std::vector<std::string>& gone) {
    VBucketMap kept = map;
    kept.nodes.clear();
    kept.leases.clear();
    std::vector<int> renumbered(map.nodes.size(), kNoNode);
    for (std::size_t i = 0; i < map.nodes.size(); ++i) {
        if (std::find(gone.begin(), gone.end(), map.nodes[i]) != gone.end()) {
            continue;
        }
        renumbered[i] = static_cast<int>(kept.nodes.size());
        kept.nodes.push_back(map.nodes[i]);
        if (i < map.leases.size()) {
            kept.leases.push_back(map.leases[i]);
        }
    }
    const auto renumber = [&](int index) {
        return index == kNoNode ? kNoNode : renumbered[static_cast<std::size_t>(index)];
    };
    for (auto& chain : kept.chains) {
        std::transform(chain.begin(), chain.end(), chain.begin(), renumber);
    }
    for (auto& copies : kept.incoming) {
        std::transform(copies.begin(), copies.end(), copies.begin(), renumber);
        std::erase(copies, kNoNode);
    }
    normalizeMoves(kept);
    return kept;
}

bool isMoving(const VBucketMap& map, std::size_t vb) {
    return (vb < map.incoming.size() && !map.incoming[vb].empty()) ||
           (vb < map.takeoverSince.size() && map.takeoverSince[vb] != 0);
}

bool isIncoming(const VBucketMap& map, std::size_t vb, int node) {
    return vb < map.incoming.size() && std::find(map.incoming[vb].begin(), map.incoming[vb].end(),
                                                 node) != map.incoming[vb].end();
}

bool hasMoves(const VBucketMap& map) {
    for (std::size_t vb = 0; vb < map.chains.size(); ++vb) {
        if (isMoving(map, vb)) {
            return true;
        }
    }
    return false;
}

void normalizeMoves(VBucketMap& map) {
    if (!hasMoves(map)) {
        map.incoming.clear();
        map.takeoverSince.clear();
        return;
    }
    map.incoming.resize(map.chains.size());
    map.takeoverSince.resize(map.chains.size(), 0);
}

NodeVBuckets vbucketsOf(const VBucketMap& map, std::string_view node) {
    NodeVBuckets held;
    const int index = indexOf(map, node);
    if (index == kNoNode) {
        return held;
    }
    for (std::size_t vb = 0; vb < map.chains.size(); ++vb) {
        const auto& chain = map.chains[vb];
        const bool incoming = isIncoming(map, vb, index);
        if (!chain.empty() && chain.front() == index) {
            held.active.push_back(static_cast<std::uint16_t>(vb));
        } else if (incoming || std::find(chain.begin(), chain.end(), index) != chain.end()) {
            held.replica.push_back(static_cast<std::uint16_t>(vb));
        }
    }
    return held;
}

}  // namespace kvexec::cluster
