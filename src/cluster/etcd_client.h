// cluster/etcd_client.h: the node's one door to etcd (3.4, through its
// JSON gateway): keys, compare-and-swap, leases, watches. This is the I/O
// outside the cluster's state machine (vbucket_map.h, election.h decide;
// this carries out), in the way etcd's raft package leaves I/O to its user.
//
// Every call blocks until etcd answers or the timeout given at construction
// passes, and throws EtcdError (naming the URL and etcd's message) when
// there is no answer or the answer is an error. A malformed answer is an
// EtcdError too, never a crash.
//
// Thread safety: any thread may call any method; calls are serialized on
// one connection (a slow call delays the others). Watches run on threads of
// their own (etcd_watch.h) and do not wait for these calls.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/etcd_types.h"
#include "cluster/etcd_watch.h"
#include "executor/thread_annotations.h"

namespace kvexec::cluster {

class EtcdHttp;

class EtcdClient {
  public:
    static constexpr std::chrono::milliseconds kDefaultTimeout{5'000};

    explicit EtcdClient(EtcdEndpoint endpoint, std::chrono::milliseconds timeout = kDefaultTimeout);
    ~EtcdClient();
    EtcdClient(const EtcdClient&) = delete;
    EtcdClient& operator=(const EtcdClient&) = delete;

    const EtcdEndpoint& endpoint() const { return endpoint_; }

    // get returns the key, or nullopt when it is absent.
    std::optional<KeyValue> get(std::string_view key) EXCLUDES(mutex_);
    // getPrefix returns every key starting with `prefix`, in key order.
    std::vector<KeyValue> getPrefix(std::string_view prefix) EXCLUDES(mutex_);
    // put writes the key (attached to `leaseId` unless 0, so that it goes
    // when the lease does) and returns its new mod revision.
    std::int64_t put(std::string_view key, std::string_view value, std::int64_t leaseId = 0)
        EXCLUDES(mutex_);
    // del deletes the key; false if it was absent.
    bool del(std::string_view key) EXCLUDES(mutex_);
    // putIf writes the key only if its mod revision is `expectedModRevision`
    // (0: only if absent), atomically (one etcd txn). Elections and map
    // publication are built on it.
    CasResult putIf(std::string_view key, std::string_view value, std::int64_t expectedModRevision,
                    std::int64_t leaseId = 0) EXCLUDES(mutex_);
    // putIfUnchanged writes the key only if every compare holds (each
    // key's mod revision is the one given), atomically: a leader's write
    // fenced by its term (the leader key's revision) and by the revision of
    // what it read. On failure, `current` is `key` as it is now.
    CasResult putIfUnchanged(std::string_view key, std::string_view value,
                             const std::vector<ModRevisionCompare>& compares,
                             std::int64_t leaseId = 0) EXCLUDES(mutex_);

    // grantLease returns a new lease's id; etcd may round the TTL up to its
    // minimum (about 2 s with default timings).
    std::int64_t grantLease(std::chrono::seconds ttl) EXCLUDES(mutex_);
    // keepAlive renews the lease once and returns the TTL it has now, in
    // seconds; 0 when it has already expired (or was revoked).
    std::int64_t keepAlive(std::int64_t leaseId) EXCLUDES(mutex_);
    // revoke ends the lease now, deleting its keys; false if there was no
    // such lease (expired already).
    bool revoke(std::int64_t leaseId) EXCLUDES(mutex_);

    // watchPrefix streams every change to keys starting with `prefix`,
    // from `startRevision` (0: from now) on, to `onEvent` on the watch's
    // own thread; see EtcdWatch for the rules. Returns once etcd has
    // confirmed the watch.
    std::unique_ptr<EtcdWatch> watchPrefix(std::string_view prefix, std::int64_t startRevision,
                                           EtcdWatch::OnEvent onEvent, EtcdWatch::OnEnd onEnd = {});

  private:
    template <typename Read>
    auto call(std::string_view path, const std::string& body, Read read) EXCLUDES(mutex_);

    const EtcdEndpoint endpoint_;
    const std::chrono::milliseconds timeout_;
    detail::Mutex mutex_;
    std::unique_ptr<EtcdHttp> http_ GUARDED_BY(mutex_);
};

}  // namespace kvexec::cluster
