#include "cluster/rebalance.h"

#include <algorithm>
#include <optional>
#include <string>

namespace kvexec::cluster {
namespace {

// What a node published, for the decisions below.
class Published {
  public:
    Published(const VBucketMap& map, const std::map<std::string, NodeStatus>& statuses)
        : map_(map), statuses_(statuses) {}

    // The revision of the map the node has applied; 0 when unknown.
    std::uint64_t appliedRevision(int node) const {
        const NodeStatus* status = of(node);
        return status == nullptr ? 0 : status->mapRevision;
    }
    // Its high seqno of vb; nullopt where it lists none (a replica before
    // its stream opened, or a node not holding vb): unknown, so wait.
    std::optional<std::uint64_t> seqno(int node, std::size_t vb, bool asActive = false) const {
        const NodeStatus* status = of(node);
        if (status == nullptr || !status->replication) {
            return std::nullopt;
        }
        const auto& replication = *status->replication;
        for (const auto* list : {&replication.active, &replication.replica}) {
            if (asActive && list != &replication.active) {
                continue;
            }
            for (const VBucketSeqno& entry : *list) {
                if (entry.vbid == vb) {
                    return entry.seqno;
                }
            }
        }
        return std::nullopt;
    }

  private:
    const NodeStatus* of(int node) const {
        if (node == kNoNode || node >= static_cast<int>(map_.nodes.size())) {
            return nullptr;
        }
        const auto found = statuses_.find(map_.nodes[static_cast<std::size_t>(node)]);
        return found == statuses_.end() ? nullptr : &found->second;
    }

    const VBucketMap& map_;
    const std::map<std::string, NodeStatus>& statuses_;
};

bool contains(const std::vector<int>& nodes, int node) {
    return std::find(nodes.begin(), nodes.end(), node) != nodes.end();
}

std::string shapeProblem(const VBucketMap& current, const VBucketMap& target) {
    if (current.nodes != target.nodes) {
        return "the nodes changed since the rebalance began";
    }
    if (current.chains.size() != target.chains.size() ||
        current.numReplicas != target.numReplicas) {
        return "the target is of another shape than the map";
    }
    return {};
}

// One vBucket's move, advanced as far as what the nodes published allows.
class Mover {
  public:
    Mover(VBucketMap& next, const VBucketMap& target, const Published& published)
        : next_(next), target_(target), published_(published) {}

    // True if the vBucket is where the target wants it.
    bool inPlace(std::size_t vb) const {
        return next_.chains[vb] == target_.chains[vb] && !moving(vb);
    }
    bool moving(std::size_t vb) const { return isMoving(next_, vb); }

    // Starts the move; false if there was nothing to start.
    bool start(std::size_t vb) {
        std::vector<int> copies;
        for (const int node : target_.chains[vb]) {
            if (node != kNoNode && !contains(next_.chains[vb], node)) {
                copies.push_back(node);
            }
        }
        if (!copies.empty()) {
            next_.incoming[vb] = std::move(copies);
        } else {
            takeOver(vb);
        }
        return true;
    }

    // Advances a move in flight; true if the map changed.
    bool advance(std::size_t vb) {
        if (next_.takeoverSince[vb] != 0) {
            return finishTakeover(vb);
        }
        // Near enough to pause the writes: the copies reached what the
        // active published (up to a status interval old).
        const auto activeSeqno = published_.seqno(next_.chains[vb].front(), vb, true);
        if (!activeSeqno || !reached(next_.incoming[vb], vb, *activeSeqno)) {
            return false;
        }
        takeOver(vb);
        return true;
    }

  private:
    // Every chain change pauses the active's writes first: a chain that
    // dropped an old copy before a new one held every write acknowledged
    // (by the old chain) would lose it with one more failure.
    void takeOver(std::size_t vb) { next_.takeoverSince[vb] = next_.revision; }

    // Each of `nodes` published at least `seqno` of vb.
    bool reached(const std::vector<int>& nodes, std::size_t vb, std::uint64_t seqno) const {
        return std::all_of(nodes.begin(), nodes.end(), [&](int node) {
            const auto held = published_.seqno(node, vb);
            return node == kNoNode || (held && *held >= seqno);
        });
    }

    // The active applied the pause (so the seqno its status lists is its
    // last), and every node of the target chain holds all of it.
    bool finishTakeover(std::size_t vb) {
        const int active = next_.chains[vb].front();
        const auto last = published_.seqno(active, vb, true);
        if (published_.appliedRevision(active) < next_.takeoverSince[vb] || !last ||
            !reached(target_.chains[vb], vb, *last)) {
            return false;
        }
        place(vb);
        return true;
    }

    void place(std::size_t vb) {
        next_.chains[vb] = target_.chains[vb];
        next_.incoming[vb].clear();
        next_.takeoverSince[vb] = 0;
    }

    VBucketMap& next_;
    const VBucketMap& target_;
    const Published& published_;
};

}  // namespace

std::string TakeoverWatch::overdue(const VBucketMap& map, Clock::time_point now) {
    std::map<std::size_t, Seen> seen;
    std::string why;
    for (std::size_t vb = 0; vb < map.takeoverSince.size(); ++vb) {
        const std::uint64_t since = map.takeoverSince[vb];
        if (since == 0) {
            continue;
        }
        const auto found = seen_.find(vb);
        const Seen entry =
            found != seen_.end() && found->second.since == since ? found->second : Seen{since, now};
        seen[vb] = entry;
        if (why.empty() && now - entry.at >= timeout_) {
            why = "the takeover of vb:";
            why += std::to_string(vb);
            why += " did not finish within ";
            why += std::to_string(timeout_.count());
            why += " ms";
        }
    }
    seen_ = std::move(seen);
    return why;
}

std::optional<TakeoverWatch::Clock::time_point> TakeoverWatch::nextDeadline() const {
    std::optional<Clock::time_point> next;
    for (const auto& [vb, entry] : seen_) {
        next = std::min(next.value_or(entry.at + timeout_), entry.at + timeout_);
    }
    return next;
}

std::size_t chainsInPlace(const VBucketMap& current, const VBucketMap& target) {
    std::size_t same = 0;
    for (std::size_t vb = 0; vb < current.chains.size() && vb < target.chains.size(); ++vb) {
        same += current.chains[vb] == target.chains[vb] && !isMoving(current, vb) ? 1 : 0;
    }
    return same;
}

RebalanceStep rebalanceStep(const VBucketMap& current, const VBucketMap& target,
                            const std::map<std::string, NodeStatus>& statuses,
                            std::size_t movesInFlight) {
    RebalanceStep step;
    step.cancelled = shapeProblem(current, target);
    if (!step.cancelled.empty()) {
        return step;
    }
    VBucketMap next = current;
    next.revision = current.revision + 1;
    next.incoming.resize(next.chains.size());
    next.takeoverSince.resize(next.chains.size(), 0);
    const Published published(current, statuses);
    Mover mover(next, target, published);
    bool changed = false;
    std::size_t inFlight = 0;
    for (std::size_t vb = 0; vb < next.chains.size(); ++vb) {
        if (mover.moving(vb)) {
            changed = mover.advance(vb) || changed;
            inFlight += mover.moving(vb) ? 1 : 0;
        }
    }
    for (std::size_t vb = 0; vb < next.chains.size() && inFlight < movesInFlight; ++vb) {
        if (!mover.inPlace(vb) && !mover.moving(vb)) {
            changed = mover.start(vb) || changed;
            inFlight += mover.moving(vb) ? 1 : 0;
        }
    }
    normalizeMoves(next);
    step.finished = chainsInPlace(next, target) == next.chains.size();
    if (changed) {
        step.next = std::move(next);
    }
    return step;
}

}  // namespace kvexec::cluster
