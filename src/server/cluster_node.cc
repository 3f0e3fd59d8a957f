#include "server/cluster_node.h"

#include <algorithm>
#include <iostream>
#include <map>

#include "server/front_end.h"

namespace kvexec::server {
namespace {

engine::VBucketState engineState(cluster::VBucketRole role) {
    switch (role) {
        case cluster::VBucketRole::Active:
            return engine::VBucketState::Active;
        case cluster::VBucketRole::Replica:
            return engine::VBucketState::Replica;
        case cluster::VBucketRole::Dead:
            break;
    }
    return engine::VBucketState::Dead;
}

// Whether the bucket already holds the vBucket as the map asks (for an
// active, with the same chain: its durability counts that chain).
bool alreadyHeld(const engine::Bucket& bucket, const engine::VBucketStateChange& wanted) {
    const auto held = bucket.vbucketAssignment(wanted.vbid);
    if (!held || held->state != wanted.state || held->handingOver != wanted.handingOver) {
        return false;
    }
    return wanted.state != engine::VBucketState::Active ||
           held->topology.chain == wanted.topology.chain;
}

cluster::NodeAgentConfig agentConfig(const ServerConfig& config, const std::string& bucket,
                                     cluster::NodeAddress address) {
    cluster::NodeAgentConfig agent;
    agent.etcd = etcdEndpoint(config);
    agent.root = clusterRoot(bucket);
    agent.name = config.node;
    agent.address = std::move(address);
    agent.numVBuckets = static_cast<std::uint16_t>(config.vbuckets);
    agent.numReplicas = config.replicas;
    agent.leaseTtl = config.failoverTimeout;
    return agent;
}

}  // namespace

std::shared_ptr<const ClusterTopology> topologyOf(const cluster::ClusterState& state,
                                                  const std::string& self,
                                                  const cluster::NodeAddress& selfAddress) {
    auto topology = std::make_shared<ClusterTopology>();
    if (!state.map) {
        topology->nodes.push_back({selfAddress.host, selfAddress.kvPort, selfAddress.mgmtPort,
                                   /*thisNode=*/true, selfAddress.tlsPort,
                                   selfAddress.mgmtTlsPort});
        return topology;
    }
    const cluster::VBucketMap& map = *state.map;
    std::vector<int> listed(map.nodes.size(), cluster::kNoNode);  // map index -> serverList
    for (std::size_t i = 0; i < map.nodes.size(); ++i) {
        const auto found = state.addresses.find(map.nodes[i]);
        if (found == state.addresses.end()) {
            continue;
        }
        const cluster::NodeAddress& address = found->second;
        listed[i] = static_cast<int>(topology->nodes.size());
        topology->nodes.push_back({address.host, address.kvPort, address.mgmtPort,
                                   map.nodes[i] == self, address.tlsPort, address.mgmtTlsPort});
    }
    topology->chains.reserve(map.chains.size());
    for (const auto& chain : map.chains) {
        std::vector<int> indexes;
        for (const int node : chain) {
            indexes.push_back(node == cluster::kNoNode ? cluster::kNoNode : listed[node]);
        }
        topology->chains.push_back(std::move(indexes));
    }
    topology->numReplicas = map.numReplicas;
    topology->revision = map.revision;
    return topology;
}

ClusterNode::ClusterNode(ServerContext& context, const ServedBucket& served,
                         const TlsClientContext* peerTls)
    : context_(context), served_(served) {
    // Until the first state, clients get this node alone, at revision 0.
    bucketCluster().config.set(topologyOf({}, context_.config.node, address()));
    ReplicationSettings replication;
    replication.nodeName = context_.config.node;
    replication.bucket = served_.name;
    replication.tls = peerTls;
    if (context_.config.nodePassword) {
        replication.user = std::string(kNodeUser);
        replication.password = context_.config.nodePassword;
    }
    replication_ = std::make_unique<ReplicationClient>(context_, bucket(), std::move(replication));
    bucketCluster().replicaPrepared.set(replication_.get());
    agent_ = std::make_unique<cluster::NodeAgent>(
        agentConfig(context_.config, served_.name, address()),
        [this](const cluster::ClusterState& state) { return apply(state); },
        [this](const std::string& why) { stopActing(why); },
        [this] {
            return cluster::NodeAgent::NodeReport{replicationStatus(), bucket().manifestUid(),
                                                  flushed_};
        });
}

ClusterNode::~ClusterNode() {
    agent_.reset();  // no more cluster states
    if (bucketCluster().admin != nullptr) {
        bucketCluster().admin->close();
    }
    bucketCluster().replicaPrepared.set(nullptr);
    replication_.reset();
}

cluster::NodeAddress ClusterNode::address() const {
    return cluster::NodeAddress{context_.config.host,
                                context_.boundPort.load(std::memory_order_relaxed),
                                context_.boundMgmtPort.load(std::memory_order_relaxed),
                                context_.boundTlsPort.load(std::memory_order_relaxed),
                                context_.boundMgmtTlsPort.load(std::memory_order_relaxed)};
}

bool ClusterNode::apply(const cluster::ClusterState& state) {
    if (bucketCluster().admin != nullptr) {
        bucketCluster().admin->observe(state);
    }
    if (!adoptManifest(state)) {
        return false;
    }
    if (state.map) {
        const auto changes = cluster::vbucketChanges(*state.map, context_.config.node);
        // The bucket first, the config after: a client that learns the new
        // map finds the vBuckets active where it says.
        if (!applyStates(changes)) {
            return false;
        }
        updateReplication(changes, state);
    }
    carryOutFlushes(state);
    std::shared_ptr<const ClusterTopology> topology =
        topologyOf(state, context_.config.node, address());
    bucketCluster().config.set(topology);
    pushAppliedMap(std::move(topology), state.appliedEverywhere);
    return true;
}

// The cluster's manifest before the vBuckets' states: a vBucket that
// becomes active here knows the collections its writers use. A manifest
// that does not decode is reported and left (the map still applies); one
// the bucket cannot take yet is tried again with the whole state.
bool ClusterNode::adoptManifest(const cluster::ClusterState& state) {
    if (!state.manifest) {
        return true;
    }
    engine::ManifestState wanted;
    try {
        wanted = engine::decodeManifestState(*state.manifest);
    } catch (const std::invalid_argument& error) {
        reportManifestOnce(*state.manifest, std::string("it does not decode: ") + error.what());
        return true;
    }
    const auto adopted = bucket().adoptManifest(wanted);
    if (adopted.outcome == engine::ManifestOutcome::Success) {
        return true;
    }
    reportManifestOnce(*state.manifest, adopted.message);
    // One that conflicts with this node's would not be taken later either:
    // the map still applies (collections stay as they are here).
    return adopted.outcome == engine::ManifestOutcome::NotAllowed;
}

// Logs why the cluster's manifest `manifest` was not adopted, once until
// the manifest changes (every state delivers it again).
void ClusterNode::reportManifestOnce(const std::string& manifest, const std::string& why) {
    if (manifest != reportedManifest_) {
        std::cerr << "kvexec-server: cannot adopt the cluster's manifest: " << why << "\n";
        reportedManifest_ = manifest;
    }
}

// The flushes asked since this node last looked empty the vBuckets it
// leads under the map just applied; their replicas take the deletions from
// their streams, so each flush is carried out by the actives alone. The
// count in the first state after a start is taken as done: the node then
// leads nothing it held before (a node back under a new lease is failed
// over and mapped anew, node_agent.h), so it holds only what it streams
// from actives that did flush. A flush the bucket refuses in part (a
// takeover in the way) is not tried again, which would delete the writes
// taken since: the node does not say it flushed, so the request answers
// 503, and a flush asked again flushes again.
void ClusterNode::carryOutFlushes(const cluster::ClusterState& state) {
    if (!flushesSeen_) {
        flushesSeen_ = true;
        flushed_ = flushTried_ = state.flushes;
        return;
    }
    if (state.flushes <= flushTried_) {
        return;
    }
    flushTried_ = state.flushes;
    auto outcome = engine::Status::TempFail;
    bucket().flush([&outcome](engine::Status status) { outcome = status; });  // inline
    if (outcome != engine::Status::Success) {
        std::cerr << "kvexec-server: the cluster's flush " << state.flushes
                  << " is not done in full here: " << engine::to_string(outcome) << "\n";
        return;
    }
    flushed_ = state.flushes;
}

// Clients that asked for pushes learn a map at once, not at their next
// config poll: a failover's promoted replicas get the writes. Not before
// every node has applied it (a client would meet NOT_MY_VBUCKET from a
// node still on the map before), and while maps follow each other faster
// than the nodes' statuses (a rebalance), the newest applied everywhere.
void ClusterNode::pushAppliedMap(std::shared_ptr<const ClusterTopology> topology,
                                 std::uint64_t appliedEverywhere) {
    if (topology->revision > pushedRevision_) {
        unpushed_[topology->revision] = std::move(topology);
        if (unpushed_.size() > kMaxUnpushed) {
            unpushed_.erase(unpushed_.begin());
        }
    }
    auto newest = unpushed_.upper_bound(appliedEverywhere);
    if (newest == unpushed_.begin()) {
        return;  // none applied everywhere yet
    }
    --newest;
    const auto push = newest->second;
    pushedRevision_ = push->revision;
    unpushed_.erase(unpushed_.begin(), std::next(newest));
    for (FrontEnd* frontEnd : context_.frontEnds) {
        frontEnd->pushClusterMap(served_, push);
    }
}

bool ClusterNode::applyStates(const std::vector<cluster::VBucketChange>& changes) {
    std::vector<engine::VBucketStateChange> differing;
    for (const cluster::VBucketChange& change : changes) {
        engine::VBucketStateChange wanted{change.vbid, engineState(change.role),
                                          engine::Topology{change.chain}, change.handingOver};
        if (!alreadyHeld(bucket(), wanted)) {
            differing.push_back(std::move(wanted));
        }
    }
    if (differing.empty()) {
        return true;
    }
    const engine::Status status = bucket().setVBucketStates(differing);
    if (status != engine::Status::Success) {
        std::cerr << "kvexec-server: could not apply the cluster map's vBucket states: "
                  << engine::to_string(status) << "\n";
        return false;
    }
    return true;
}

void ClusterNode::updateReplication(const std::vector<cluster::VBucketChange>& changes,
                                    const cluster::ClusterState& state) {
    std::map<std::string, ReplicationPeer> peers;
    replicaVBuckets_ = static_cast<std::size_t>(
        std::count_if(changes.begin(), changes.end(), [](const cluster::VBucketChange& change) {
            return change.role == cluster::VBucketRole::Replica;
        }));
    activeOf_.clear();
    for (const cluster::VBucketChange& change : changes) {
        if (change.role == cluster::VBucketRole::Replica && !change.chain.empty()) {
            activeOf_[change.vbid] = change.chain.front();
        }
    }
    std::erase_if(streamedFrom_, [&](const auto& entry) {
        const auto active = activeOf_.find(entry.first);
        return active == activeOf_.end() || active->second != entry.second;
    });
    for (const cluster::VBucketChange& change : changes) {
        if (change.role != cluster::VBucketRole::Replica || change.chain.empty() ||
            change.chain.front().empty()) {
            continue;
        }
        const std::string& active = change.chain.front();
        const auto address = state.addresses.find(active);
        if (address == state.addresses.end()) {
            continue;  // its active has no known address: nothing to stream from yet
        }
        auto& peer = peers[active];
        peer.node = active;
        peer.host = address->second.host;
        peer.port = address->second.kvPort;
        peer.tlsPort = address->second.tlsPort;
        peer.vbuckets.push_back(change.vbid);
    }
    std::vector<ReplicationPeer> list;
    for (auto& [name, peer] : peers) {
        list.push_back(std::move(peer));
    }
    replication_->setPeers(std::move(list));
}

void ClusterNode::stopActing(const std::string& why) {
    // Another node may be given these vBuckets once etcd lets the lease
    // go: serve none of them meanwhile. The next map, after joining again,
    // gives them back.
    std::cerr << "kvexec-server: left the cluster (" << why << "): serving no vBucket until "
              << "it joins again\n";
    replication_->setPeers({});
    replicaVBuckets_ = 0;
    activeOf_.clear();
    streamedFrom_.clear();
    std::vector<engine::VBucketStateChange> dead;
    for (std::size_t vb = 0; vb < context_.config.vbuckets; ++vb) {
        const auto vbid = static_cast<engine::Vbid>(vb);
        const auto held = bucket().vbucketAssignment(vbid);
        if (held && held->state != engine::VBucketState::Dead) {
            dead.push_back({vbid, engine::VBucketState::Dead, {}});
        }
    }
    if (!dead.empty() && bucket().setVBucketStates(dead) != engine::Status::Success) {
        std::cerr << "kvexec-server: could not set the vBuckets dead\n";
    }
}

// A replica inside a snapshot its active read from disk is ranked on the
// last seqno at which its copy is whole (Bucket::replicaResumePoint): a
// copy promoted there may lack older versions the snapshot left out.
std::optional<engine::Seqno> ClusterNode::publishedSeqno(engine::Vbid vbid, bool active) const {
    if (!active) {
        const auto point = bucket().replicaResumePoint(vbid);
        return point ? std::optional(point->snapStart) : std::nullopt;
    }
    const engine::ObserveSeqnoResult seqnos = bucket().observeSeqno(vbid);
    if (seqnos.status != engine::Status::Success) {
        return std::nullopt;
    }
    return seqnos.currentSeqno;
}

// The agent asks every status interval: a walk over the vBuckets, each
// under its own lock for a moment, so the front ends never wait on it.
// Every active vBucket is listed (at 0 too: a rebalance reads a missing
// one as unknown), a replica only once its stream from its active opened.
std::optional<cluster::ReplicationStatus> ClusterNode::replicationStatus() {
    cluster::ReplicationStatus status;
    status.replicaVBuckets = replicaVBuckets_;
    status.streamsOpen = replication_->openStreams();
    for (const engine::Vbid vb : replication_->openStreamVBuckets()) {
        if (const auto active = activeOf_.find(vb); active != activeOf_.end()) {
            streamedFrom_[vb] = active->second;
        }
    }
    for (std::size_t vb = 0; vb < context_.config.vbuckets; ++vb) {
        const auto vbid = static_cast<engine::Vbid>(vb);
        const auto held = bucket().vbucketAssignment(vbid);
        const bool active = held && held->state == engine::VBucketState::Active;
        const bool replica =
            held && held->state == engine::VBucketState::Replica && streamedFrom_.contains(vbid);
        if (!active && !replica) {
            continue;
        }
        const auto seqno = publishedSeqno(vbid, active);
        if (!seqno) {
            continue;
        }
        auto& list = active ? status.active : status.replica;
        list.push_back({static_cast<std::uint16_t>(vbid), *seqno});
    }
    return status;
}

}  // namespace kvexec::server
