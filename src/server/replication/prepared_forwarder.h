// replication/prepared_forwarder.h: carries the bucket's
// onReplicaPrepared (wired when the bucket opens) to the replication
// client, which exists only while the node is in a cluster.
//
// Thread safety: any thread; once set(nullptr) has returned, nothing more
// is forwarded (the client may then be destroyed).
#pragma once

#include "executor/thread_annotations.h"
#include "kvexec/engine/item.h"

namespace kvexec::server {

class ReplicationClient;

class PreparedForwarder {
  public:
    void set(ReplicationClient* client) EXCLUDES(mutex_);
    void forward(engine::Vbid vbid, engine::Seqno seqno) EXCLUDES(mutex_);

  private:
    kvexec::detail::Mutex mutex_;
    ReplicationClient* client_ GUARDED_BY(mutex_) = nullptr;
};

}  // namespace kvexec::server
