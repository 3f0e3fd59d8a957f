#include "engine/durability_monitor.h"

#include <algorithm>
#include <unordered_set>

namespace kvexec::engine {

std::string_view to_string(VBucketState state) {
    switch (state) {
        case VBucketState::Active:
            return "active";
        case VBucketState::Replica:
            return "replica";
        case VBucketState::Pending:
            return "pending";
        case VBucketState::Dead:
            return "dead";
    }
    return "unknown";
}

std::size_t Topology::nodes() const {
    return static_cast<std::size_t>(
        std::count_if(chain.begin(), chain.end(), [](const auto& n) { return !n.empty(); }));
}

bool activePersists(DurabilityLevel level) {
    return level == DurabilityLevel::MajorityAndPersistToActive ||
           level == DurabilityLevel::PersistToMajority;
}

bool replicaPersists(DurabilityLevel level) {
    return level == DurabilityLevel::PersistToMajority;
}

DurabilityMonitor::DurabilityMonitor(std::string localNode)
    : localNode_(std::move(localNode)), topology_{{localNode_}} {}

bool DurabilityMonitor::validTopology(const Topology& topology, std::string_view localNode) {
    if (topology.chain.empty() || topology.chain.front() != localNode) {
        return false;
    }
    std::unordered_set<std::string_view> seen;
    for (const auto& node : topology.chain) {
        if (!node.empty() && !seen.insert(node).second) {
            return false;
        }
    }
    return true;
}

Status DurabilityMonitor::setTopology(Topology topology) {
    if (!validTopology(topology, localNode_)) {
        return Status::Invalid;
    }
    std::erase_if(acks_, [&](const auto& ack) {
        return std::find(topology.chain.begin(), topology.chain.end(), ack.first) ==
               topology.chain.end();
    });
    topology_ = std::move(topology);
    commitSatisfied();
    return Status::Success;
}

Status DurabilityMonitor::checkPossible() const {
    return topology_.nodes() >= topology_.majority() ? Status::Success
                                                     : Status::DurabilityImpossible;
}

void DurabilityMonitor::addPrepare(Seqno seqno, DurabilityLevel level, Clock::time_point deadline) {
    prepares_.emplace(seqno, Prepare{level, deadline});
}

void DurabilityMonitor::localProgress(Seqno queued, Seqno persisted) {
    queued_ = std::max(queued_, queued);
    persisted_ = std::max(persisted_, persisted);
    commitSatisfied();
}

bool DurabilityMonitor::acknowledge(std::string_view node, Seqno preparedSeqno) {
    const auto& chain = topology_.chain;
    if (node.empty() || node == localNode_ ||
        std::find(chain.begin(), chain.end(), node) == chain.end()) {
        return false;
    }
    auto& position = acks_[std::string(node)];
    position = std::max(position, preparedSeqno);
    commitSatisfied();
    return true;
}

void DurabilityMonitor::expire(Clock::time_point now) {
    bool aborted = false;
    for (auto it = prepares_.begin(); it != prepares_.end();) {
        if (it->second.deadline > now) {
            ++it;
            continue;
        }
        decisions_.push_back({it->first, DurabilityDecision::Outcome::Abort});
        highCompleted_ = std::max(highCompleted_, it->first);
        it = prepares_.erase(it);
        aborted = true;
    }
    if (aborted) {
        commitSatisfied();  // the aborted prepares no longer hold back the rest
    }
}

void DurabilityMonitor::forget(Seqno seqno) {
    if (prepares_.erase(seqno) != 0) {
        commitSatisfied();
    }
}

std::vector<DurabilityDecision> DurabilityMonitor::takeDecisions() {
    std::vector<DurabilityDecision> out;
    out.swap(decisions_);
    return out;
}

std::optional<Clock::time_point> DurabilityMonitor::nextDeadline() const {
    std::optional<Clock::time_point> earliest;
    for (const auto& [seqno, prepare] : prepares_) {
        if (!earliest || prepare.deadline < *earliest) {
            earliest = prepare.deadline;
        }
    }
    return earliest;
}

Seqno DurabilityMonitor::localHighPrepared() const {
    return highPrepared(prepares_, queued_, persisted_, activePersists, localHighPrepared_);
}

Seqno DurabilityMonitor::acknowledged(std::string_view node) const {
    const auto it = acks_.find(node);
    return it == acks_.end() ? 0 : it->second;
}

bool DurabilityMonitor::heldByMajority(Seqno seqno, Seqno local) const {
    std::size_t holders = 0;
    for (const auto& node : topology_.chain) {
        if (node.empty()) {
            continue;
        }
        const Seqno position = node == localNode_ ? local : acknowledged(node);
        holders += position >= seqno ? 1 : 0;
    }
    return holders >= topology_.majority();
}

// Commits from the front while the active and a majority hold the first
// undecided prepare; positions stop at a node's first unsatisfied prepare,
// so the first one that is not held ends the pass.
void DurabilityMonitor::commitSatisfied() {
    const Seqno local = localHighPrepared_ = localHighPrepared();
    while (!prepares_.empty()) {
        const Seqno seqno = prepares_.begin()->first;
        if (local < seqno || !heldByMajority(seqno, local)) {
            return;
        }
        decisions_.push_back({seqno, DurabilityDecision::Outcome::Commit});
        highCompleted_ = std::max(highCompleted_, seqno);
        prepares_.erase(prepares_.begin());
    }
}

}  // namespace kvexec::engine
