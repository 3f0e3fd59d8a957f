// replication/prepared_forwarder.h: carries the bucket's
// onReplicaPrepared (wired when the bucket opens) to the replication
// client, which exists only while the node is in a cluster, and asks it
// for its report (`stats replication`).
//
// Thread safety: any thread; once set(nullptr) has returned, nothing more
// is forwarded (the client may then be destroyed).
#pragma once

#include <optional>

#include "executor/thread_annotations.h"
#include "kvexec/engine/item.h"
#include "server/replication/replication_report.h"

namespace kvexec::server {

class ReplicationClient;

class PreparedForwarder {
  public:
    void set(ReplicationClient* client) EXCLUDES(mutex_);
    void forward(engine::Vbid vbid, engine::Seqno seqno) EXCLUDES(mutex_);
    // The client's report; none outside a cluster.
    std::optional<ReplicationReport> report() const EXCLUDES(mutex_);

  private:
    mutable kvexec::detail::Mutex mutex_;
    ReplicationClient* client_ GUARDED_BY(mutex_) = nullptr;
};

}  // namespace kvexec::server
