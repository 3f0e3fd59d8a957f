#include "server/cluster_manifest.h"

#include <stdexcept>
#include <utility>

namespace kvexec::server {
namespace {

using engine::ManifestChange;
using engine::ManifestOutcome;

// A CAS lost this many times in a row means others change the manifest
// as fast as this node can read it: give up rather than spin.
constexpr int kMaxRounds = 16;

}  // namespace

ClusterManifest::ClusterManifest(cluster::EtcdEndpoint etcd, std::string root,
                                 engine::Bucket& bucket)
    : etcd_(std::move(etcd)), keys_(std::move(root)), bucket_(bucket) {}

ManifestChange ClusterManifest::change(const engine::ManifestEdit& edit) {
    try {
        for (int round = 0; round < kMaxRounds; ++round) {
            if (auto done = tryChange(edit)) {
                if (done->outcome == ManifestOutcome::Success) {
                    waitUntilEverywhere(done->uid);
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

std::optional<ManifestChange> ClusterManifest::tryChange(const engine::ManifestEdit& edit) {
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

void ClusterManifest::waitUntilEverywhere(std::uint64_t uid) {
    detail::UniqueLock lock(mutex_);
    observed_.wait_for(lock.native(), kSpreadWait, [&] {
        mutex_.assertHeld();
        return closed_ || everywhere_ >= uid;
    });
}

void ClusterManifest::observe(std::uint64_t manifestEverywhere) {
    {
        detail::MutexLock lock(mutex_);
        everywhere_ = manifestEverywhere;
    }
    observed_.notify_all();
}

void ClusterManifest::close() {
    {
        detail::MutexLock lock(mutex_);
        closed_ = true;
    }
    observed_.notify_all();
}

}  // namespace kvexec::server
