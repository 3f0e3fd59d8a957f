#include "server/cluster_admin.h"

#include <stdexcept>
#include <utility>

namespace kvexec::server {
namespace {

using engine::ManifestChange;
using engine::ManifestOutcome;

// A CAS lost this many times in a row means others change the key as fast
// as this node can read it: give up rather than spin.
constexpr int kMaxRounds = 16;

}  // namespace

ClusterAdmin::ClusterAdmin(cluster::EtcdEndpoint etcd, std::string root, engine::Bucket& bucket)
    : etcd_(std::move(etcd)), keys_(std::move(root)), bucket_(bucket) {}

ManifestChange ClusterAdmin::change(const engine::ManifestEdit& edit) {
    try {
        for (int round = 0; round < kMaxRounds; ++round) {
            if (auto done = tryChange(edit)) {
                if (done->outcome == ManifestOutcome::Success) {
                    manifests_.waitFor(done->uid, kSpreadWait);
                }
                return *std::move(done);
            }
        }
        return {ManifestOutcome::NotReady, bucket_.manifestUid(),
                "the cluster's manifest kept changing under this request; try again"};
    } catch (const cluster::EtcdError& error) {
        return {ManifestOutcome::NotReady, bucket_.manifestUid(),
                std::string("the cluster's manifest cannot be changed now: ") + error.what()};
    }
}

std::optional<ManifestChange> ClusterAdmin::tryChange(const engine::ManifestEdit& edit) {
    const auto held = etcd_.get(keys_.manifest());
    engine::ManifestState state;
    if (held) {
        try {
            state = engine::decodeManifestState(held->value);
        } catch (const std::invalid_argument& error) {
            return ManifestChange{ManifestOutcome::StorageFailure, bucket_.manifestUid(),
                                  keys_.manifest() + " in etcd is damaged: " + error.what()};
        }
    } else {
        state = bucket_.manifestState();  // the first change: seed with this node's
    }
    ManifestChange change = engine::applyManifestEdit(state, edit);
    if (change.outcome != ManifestOutcome::Success) {
        return change;
    }
    const auto cas = etcd_.putIf(keys_.manifest(), engine::encodeManifestState(state),
                                 held ? held->modRevision : 0);
    if (!cas.succeeded) {
        return std::nullopt;
    }
    return change;
}

ClusterAdmin::FlushOutcome ClusterAdmin::flush() {
    try {
        if (etcd_.get(keys_.rebalance())) {
            return {engine::Status::TempFail, "a rebalance is running; flush once it is done"};
        }
        if (const std::string down = downList(); !down.empty()) {
            return {engine::Status::TempFail,
                    "node(s) " + down + " lead vBuckets and are down; flush once they are back " +
                        "or failed over"};
        }
        for (int round = 0; round < kMaxRounds; ++round) {
            if (const auto count = tryRaiseFlushCount()) {
                if (flushes_.waitFor(*count, kFlushWait)) {
                    return {};
                }
                return {engine::Status::TempFail,
                        "not every node has flushed yet (each does when it can)"};
            }
        }
        return {engine::Status::TempFail, "flushes kept being asked under this one; try again"};
    } catch (const std::exception& error) {  // EtcdError, or a damaged count
        return {engine::Status::TempFail,
                std::string("the cluster cannot be flushed now: ") + error.what()};
    }
}

std::optional<std::uint64_t> ClusterAdmin::tryRaiseFlushCount() {
    const auto held = etcd_.get(keys_.flush());
    const std::uint64_t next = (held ? cluster::decodeFlushCount(held->value) : 0) + 1;
    const auto cas = etcd_.putIf(keys_.flush(), std::to_string(next), held ? held->modRevision : 0);
    if (!cas.succeeded) {
        return std::nullopt;
    }
    return next;
}

void ClusterAdmin::observe(const cluster::ClusterState& state) {
    {
        detail::MutexLock lock(mutex_);
        activesDown_ = state.activesDown;
    }
    manifests_.observe(state.manifestEverywhere);
    flushes_.observe(state.flushedEverywhere);
}

std::string ClusterAdmin::downList() {
    detail::MutexLock lock(mutex_);
    std::string list;
    for (const std::string& node : activesDown_) {
        list += (list.empty() ? "" : ", ") + node;
    }
    return list;
}

void ClusterAdmin::close() {
    manifests_.close();
    flushes_.close();
}

}  // namespace kvexec::server
