#include "cluster/node_agent.h"

#include <algorithm>
#include <iostream>
#include <stdexcept>
#include <utility>

#include "cluster/rebalance.h"

namespace kvexec::cluster {
namespace {

using Clock = std::chrono::steady_clock;

// Three renewals per TTL: one may fail and the lease still lives.
std::chrono::milliseconds keepAliveInterval(const NodeAgentConfig& config) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(config.leaseTtl) / 3;
}

// A renewal that takes longer than this is as good as failed, and one that
// failed is tried again this much later: short, so that the last try before
// the fence deadline ends soon after it.
std::chrono::milliseconds keepAliveTimeout(const NodeAgentConfig& config) {
    return std::min(config.etcdTimeout, keepAliveInterval(config) / 2);
}

// Without a renewal sent this long ago and answered, the node fences
// itself. etcd counts the TTL from when it received the last renewal,
// which is after it was sent: the fence comes at most half a TTL plus one
// renewal timeout (2/3 of the TTL) after that, and the other third is the
// margin for the fence to take effect before another node may be handed
// the node's vBuckets.
std::chrono::milliseconds fenceAfter(const NodeAgentConfig& config) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(config.leaseTtl) / 2;
}

const NodeAgentConfig& checked(const NodeAgentConfig& config) {
    if (config.name.empty()) {
        throw std::invalid_argument("NodeAgent: the node needs a name");
    }
    if (config.numVBuckets == 0 || config.numReplicas > kMaxReplicas) {
        throw std::invalid_argument("NodeAgent: 1 or more vBuckets and 0 to 3 replicas");
    }
    if (config.leaseTtl < std::chrono::seconds(1)) {
        throw std::invalid_argument("NodeAgent: a lease TTL of 1 s or more");
    }
    return config;
}

bool isRegistered(const ClusterView& view, const std::string& name) {
    const auto& nodes = view.membership.nodes;
    return std::binary_search(nodes.begin(), nodes.end(), name);
}

}  // namespace

NodeAgent::NodeAgent(NodeAgentConfig config, OnClusterState onClusterState, OnLeaseLost onLeaseLost,
                     StatusSource statusSource)
    : config_(checked(config)),
      keys_(config_.root),
      onClusterState_(std::move(onClusterState)),
      onLeaseLost_(std::move(onLeaseLost)),
      statusSource_(std::move(statusSource)),
      etcd_(config_.etcd, config_.etcdTimeout),
      keepAliveEtcd_(config_.etcd, keepAliveTimeout(config_)) {
    join();
    try {
        openWatch();
    } catch (const EtcdError&) {
        try {
            etcd_.revoke(sessionLease_);
        } catch (const EtcdError&) {
            // It expires on its own.
        }
        throw;
    }
    {
        detail::MutexLock lock(mutex_);
        pending_.reread = true;  // the first pass delivers the first state
    }
    agentThread_ = std::thread([this] { runAgent(); });
    keepAliveThread_ = std::thread([this] { runKeepAlive(); });
}

NodeAgent::~NodeAgent() {
    stop();
}

void NodeAgent::stop() {
    if (stopped_) {
        return;
    }
    stopped_ = true;
    {
        detail::MutexLock lock(mutex_);
        stopping_ = true;
        pending_.stop = true;
    }
    workReady_.notify_all();
    keepAliveWake_.notify_all();
    if (agentThread_.joinable()) {
        agentThread_.join();
    }
    if (keepAliveThread_.joinable()) {
        keepAliveThread_.join();
    }
    watch_.reset();
    if (sessionLease_ == 0) {
        return;
    }
    try {
        etcd_.revoke(std::exchange(sessionLease_, 0));
    } catch (const EtcdError& error) {
        std::cerr << "kvexec cluster agent " << config_.name
                  << ": could not revoke the lease (it expires on its own): " << error.what()
                  << '\n';
    }
}

// A new lease and the node key under it. Until both are in place the
// agent has no session: a failure leaves nothing behind but a lease that
// expires.
void NodeAgent::join() {
    const auto grantSent = Clock::now();
    const std::int64_t lease = etcd_.grantLease(config_.leaseTtl);
    auto member = std::make_unique<ClusterMember>(etcd_, keys_, config_.name, lease);
    try {
        member->registerNode(encodeNodeAddress(config_.address));
    } catch (const EtcdError&) {
        try {
            etcd_.revoke(lease);
        } catch (const EtcdError&) {
            // It expires on its own.
        }
        throw;
    }
    sessionLease_ = lease;
    member_ = std::move(member);
    detail::MutexLock lock(mutex_);
    renewedLease_ = lease;
    leaseGrantSent_ = grantSent;
    keepAliveWake_.notify_all();
}

// Every change under the root only asks for a pass: the pass reads what
// etcd holds then, so it never acts on a stale event.
void NodeAgent::openWatch() {
    watch_.reset();
    watch_ = etcd_.watchPrefix(
        keys_.all(), 0, [this](const WatchEvent&) { markReread(); },
        [this](const std::string&) {
            detail::MutexLock lock(mutex_);
            pending_.watchEnded = true;
            workReady_.notify_all();
        });
}

void NodeAgent::runAgent() {
    for (;;) {
        const Pending work = waitForWork();
        if (work.stop) {
            return;
        }
        handle(work);
    }
}

NodeAgent::Pending NodeAgent::waitForWork() {
    // Without a status source the status changes only with a pass: no timer.
    const bool timed = static_cast<bool>(statusSource_);
    detail::UniqueLock lock(mutex_);
    for (;;) {
        const Pending& p = pending_;
        const auto now = Clock::now();
        if (p.stop || p.reread || p.watchEnded || p.leaseLost || (p.retryAt && now >= *p.retryAt)) {
            break;
        }
        if (timed && now >= nextStatusAt_) {
            // Only the status is due: a later retry stays pending.
            nextStatusAt_ = now + config_.statusInterval;
            Pending work;
            work.refreshStatus = true;
            return work;
        }
        auto until = timed ? nextStatusAt_ : Clock::time_point::max();
        if (p.retryAt) {
            until = std::min(until, *p.retryAt);
        }
        if (until == Clock::time_point::max()) {
            workReady_.wait(lock.native());
        } else {
            workReady_.wait_until(lock.native(), until);
        }
    }
    Pending work = std::exchange(pending_, Pending{});
    pending_.stop = work.stop;  // stays asked
    return work;
}

// One pass: whatever was asked, it ends with the whole root read and acted
// on, so a retry is just another pass.
void NodeAgent::handle(const Pending& work) {
    if (work.refreshStatus) {
        try {
            refreshStatus();
        } catch (const std::exception& error) {
            retryLater(error.what());  // a whole pass, later
        }
        return;
    }
    try {
        if (work.leaseLost) {
            leaveAfterLeaseLoss(*work.leaseLost);
        }
        if (sessionLease_ == 0) {
            join();
        }
        if (!watch_ || work.watchEnded) {
            openWatch();
        }
        reconcile();
        lastError_.clear();
    } catch (const std::exception& error) {
        retryLater(error.what());
    }
}

// The owner was told already (fence()): leave the old session behind.
void NodeAgent::leaveAfterLeaseLoss(const std::string& why) {
    std::cerr << "kvexec cluster agent " << config_.name << ": lease lost (" << why
              << "); joining again\n";
    member_.reset();
    delivered_.reset();      // the owner dropped its state: deliver again
    statusWritten_.clear();  // written again under the new lease
    // The old lease is not revoked: the node key it held would go at once,
    // and the leader could fail the node over on its replicas' statuses
    // from before the fence. Joining again moves the node key to the new
    // lease, which the leader sees as a rejoin and fails over only once the
    // statuses are fresh (statusesSettled); a leader key left under the
    // old lease is ended by endEarlierTerm.
    sessionLease_ = 0;
}

void NodeAgent::reconcile() {
    const ClusterView view = readClusterView(keys_, etcd_.getPrefix(keys_.all()));
    if (view.map) {
        highestRevisionSeen_ = std::max(highestRevisionSeen_, view.map->revision);
    }
    for (const auto& [name, address] : view.addresses) {
        remembered_[name] = address;
    }
    if (!isRegistered(view, config_.name)) {
        // The key went while the lease lives (deleted by hand): put it back.
        member_->registerNode(encodeNodeAddress(config_.address));
        return markReread();
    }
    if (roleOf(view.membership, config_.name) == Role::Leader && !leads(view)) {
        return endEarlierTerm(view.leaderLease);
    }
    if (roleOf(view.membership, config_.name) == Role::Candidate) {
        member_->campaign();
        return markReread();  // won or lost, the next pass reads who leads
    }
    if (leads(view)) {
        publishMap(view);
    }
    deliver(view);
}

// The leader key names this node under a lease of an earlier life (it
// restarted, or fenced itself and joined again): that term is over, and no
// node could be elected until the lease expired. Revoking it ends the term
// now, and the old status with it.
void NodeAgent::endEarlierTerm(std::int64_t earlierLease) {
    try {
        etcd_.revoke(earlierLease);
    } catch (const EtcdError&) {
        // Expired meanwhile: the next pass reads a root without it.
    }
    markReread();
}

// The leader key names this node under its current lease: a key of its
// own from an earlier lease is not its term (it goes when that lease does).
bool NodeAgent::leads(const ClusterView& view) const {
    return roleOf(view.membership, config_.name) == Role::Leader &&
           view.leaderLease == sessionLease_;
}

// Before the first map, the registered nodes must have stood still for the
// formation window; a pass is due when it ends.
bool NodeAgent::formed(const ClusterView& view) {
    const auto now = Clock::now();
    if (view.membership.nodes != formingNodes_) {
        formingNodes_ = view.membership.nodes;
        formingSince_ = now;
    }
    const auto formedAt = formingSince_ + config_.formationWindow;
    if (now >= formedAt) {
        return true;
    }
    passNoLaterThan(formedAt);
    return false;
}

void NodeAgent::publishMap(const ClusterView& view) {
    const bool firstMap = !view.map && view.mapModRevision == 0;
    if (firstMap && !formed(view)) {
        return;
    }
    if (auto next =
            mapToPublish(view, config_.numVBuckets, config_.numReplicas, highestRevisionSeen_)) {
        // While it waits, no rebalance step either: a move may count on
        // what a rejoined node published under its old lease.
        if (!view.map || !changesActives(*view.map, *next) || statusesSettled(view)) {
            publish(view, *next);
        }
        return;
    }
    if (view.rebalanceTarget && view.map) {
        stepRebalance(view);
    }
}

// A map that changes actives ranks the survivors on their statuses: it
// waits until each was written under the view's membership (sampled after
// the lost node stopped: it left, or joined again after its fence or
// restart), or until freshStatusWait has passed since this membership was
// first seen (an agent stuck in etcd; the ranking may then be stale).
bool NodeAgent::statusesSettled(const ClusterView& view) {
    if (statusesFresh(view)) {
        return true;
    }
    const auto now = Clock::now();
    const std::string digest = membershipDigest(view);
    if (digest != freshWaitDigest_) {
        freshWaitDigest_ = digest;
        freshWaitSince_ = now;
    }
    const auto deadline = freshWaitSince_ + config_.freshStatusWait;
    if (now >= deadline) {
        retryLater(
            "publishing a failover on statuses not all written since the membership changed");
        return true;
    }
    passNoLaterThan(deadline);
    return false;
}

// Fenced twice: by this term (a leader that lost its lease and was
// replaced writes nothing) and by the map it computed from.
bool NodeAgent::publish(const ClusterView& view, VBucketMap next) {
    next.revision = std::max(next.revision, highestRevisionSeen_ + 1);
    const CasResult result = etcd_.putIfUnchanged(
        keys_.map(), encodeVBucketMap(next),
        {{keys_.leader(), view.membership.leaderRevision}, {keys_.map(), view.mapModRevision}});
    if (!result.succeeded) {
        markReread();  // someone came first: decide again on what etcd holds
    }
    return result.succeeded;
}

// The next map of a rebalance; the request goes once the map is its
// target, or once it cannot go on (undoing the moves in flight).
void NodeAgent::stepRebalance(const ClusterView& view) {
    RebalanceStep step;
    step.cancelled = takeovers_.overdue(*view.map, Clock::now());
    if (step.cancelled.empty()) {
        step = rebalanceStep(*view.map, *view.rebalanceTarget, view.statuses);
    }
    if (const auto deadline = takeovers_.nextDeadline()) {
        passNoLaterThan(*deadline);  // looked at again then, even if nothing changes
    }
    std::optional<VBucketMap> next = step.next;
    if (!step.cancelled.empty()) {
        std::cerr << "kvexec cluster agent " << config_.name
                  << ": rebalance cancelled: " << step.cancelled << '\n';
        if (hasMoves(*view.map)) {
            next = *view.map;
            next->incoming.clear();
            next->takeoverSince.clear();
        }
    }
    if (next && !publish(view, *next)) {
        return;
    }
    if (step.finished || !step.cancelled.empty()) {
        etcd_.del(keys_.rebalance());
    }
}

void NodeAgent::deliver(const ClusterView& view) {
    // Prune what no one needs: nodes neither registered nor in the map.
    std::erase_if(remembered_, [&](const auto& entry) {
        const bool inMap = view.map && std::find(view.map->nodes.begin(), view.map->nodes.end(),
                                                 entry.first) != view.map->nodes.end();
        return !inMap && !isRegistered(view, entry.first);
    });
    membershipSeen_ = membershipDigest(view);
    ClusterState state = clusterStateOf(view, config_.numVBuckets, remembered_);
    if (state.map) {
        state.map = mapForLease(*state.map, config_.name, sessionLease_);
    }
    if (!delivered_ || *delivered_ != state) {
        if (!actOn(state)) {
            detail::MutexLock lock(mutex_);
            pending_.retryAt = Clock::now() + config_.retryInterval;
            return;
        }
        delivered_ = std::move(state);
    }
    writeStatus(delivered_->map ? delivered_->map->revision : 0);
}

// A state read under a lease that has been fenced since is not acted on:
// the pass that handles the loss joins again and reads afresh.
bool NodeAgent::actOn(const ClusterState& state) {
    detail::MutexLock callbacks(callbackMutex_);
    if (fencedLease_ == sessionLease_) {
        return false;
    }
    return onClusterState_(state);
}

void NodeAgent::writeStatus(std::uint64_t mapRevision) {
    NodeStatus status{mapRevision, std::nullopt};
    status.membership = membershipSeen_;
    {
        detail::MutexLock callbacks(callbackMutex_);
        if (fencedLease_ == sessionLease_) {
            return;  // it serves nothing now: the pass that joins again writes afresh
        }
        if (statusSource_) {
            NodeReport report = statusSource_();
            status.replication = std::move(report.replication);
            status.manifestUid = report.manifestUid;
            status.flushed = report.flushed;
        }
    }
    // Read back on the next pass (the write is a change under the root), so
    // comparing with the last pass's view would write twice; keep it here.
    std::string encoded = encodeNodeStatus(status);
    if (encoded == statusWritten_) {
        return;
    }
    etcd_.put(keys_.status(config_.name), encoded, sessionLease_);
    statusWritten_ = std::move(encoded);
}

// Only once a state was acted on and its status written: before that the
// node has nothing to say, and after a lost lease the pass writes it.
void NodeAgent::refreshStatus() {
    if (delivered_ && sessionLease_ != 0 && !statusWritten_.empty()) {
        writeStatus(delivered_->map ? delivered_->map->revision : 0);
    }
}

void NodeAgent::retryLater(const std::string& why) {
    if (why != lastError_) {
        std::cerr << "kvexec cluster agent " << config_.name << ": " << why << " (retrying every "
                  << config_.retryInterval.count() << " ms)\n";
        lastError_ = why;
    }
    detail::MutexLock lock(mutex_);
    pending_.retryAt = Clock::now() + config_.retryInterval;
}

// A pass is due by `at` even if nothing under the root changes (an earlier
// one already due stays).
void NodeAgent::passNoLaterThan(Clock::time_point at) {
    detail::MutexLock lock(mutex_);
    pending_.retryAt = std::min(pending_.retryAt.value_or(at), at);
}

void NodeAgent::markReread() {
    detail::MutexLock lock(mutex_);
    pending_.reread = true;
    workReady_.notify_all();
}

void NodeAgent::runKeepAlive() {
    std::int64_t lease = 0;
    Clock::time_point lastRenewalSent;  // of the last renewal etcd answered
    bool failing = false;
    detail::UniqueLock lock(mutex_);
    while (!stopping_) {
        const auto wait = failing ? keepAliveTimeout(config_) : keepAliveInterval(config_);
        const bool changed = keepAliveWake_.wait_for(lock.native(), wait, [&]() {
            mutex_.assertHeld();
            return stopping_ || renewedLease_ != lease;
        });
        if (stopping_) {
            return;
        }
        if (changed) {  // a new lease (just granted), or none: nothing to renew yet
            lease = renewedLease_;
            lastRenewalSent = leaseGrantSent_;
            failing = false;
            continue;
        }
        if (lease == 0) {
            continue;
        }
        lock.unlock();
        failing = !renew(lease, lastRenewalSent);
        lock.lock();
    }
}

bool NodeAgent::renew(std::int64_t lease, Clock::time_point& lastRenewalSent) {
    const auto sent = Clock::now();
    std::int64_t ttl = -1;  // no answer
    std::string why = "the fence deadline passed before this try";
    // A try begun after the deadline could end a renewal timeout later:
    // none is begun, so the fence comes at most that long after it.
    if (sent - lastRenewalSent < fenceAfter(config_)) {
        try {
            ttl = keepAliveEtcd_.keepAlive(lease);
        } catch (const EtcdError& error) {
            why = error.what();
        }
    }
    if (ttl > 0) {
        lastRenewalSent = sent;
        return true;
    }
    const auto now = Clock::now();
    if (ttl == 0) {
        why = "etcd says it has expired";
    } else if (now - lastRenewalSent < fenceAfter(config_)) {
        return false;  // the lease lives on; try again soon
    } else {
        const auto silent =
            std::chrono::duration_cast<std::chrono::milliseconds>(now - lastRenewalSent);
        std::string because = "no renewal for ";
        because += std::to_string(silent.count());
        because += " ms: ";
        because += why;
        why = std::move(because);
    }
    fence(lease, why);
    return false;
}

// On the keep-alive thread, not the agent's: that one may be waiting on an
// etcd call that cannot get through either, for longer than the lease has.
void NodeAgent::fence(std::int64_t lease, const std::string& why) {
    detail::MutexLock callbacks(callbackMutex_);
    {
        detail::MutexLock lock(mutex_);
        if (renewedLease_ != lease) {
            return;  // stopping, or a session since
        }
        renewedLease_ = 0;
        pending_.leaseLost = why;
        workReady_.notify_all();
    }
    fencedLease_ = lease;
    if (onLeaseLost_) {
        onLeaseLost_(why);
    }
}

}  // namespace kvexec::cluster
