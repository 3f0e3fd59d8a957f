// engine/vbucket.h: the in-memory state of one vBucket: its hash table
// (committed values and tombstones), the SyncWrites pending beside them, the
// dirty queue of unpersisted mutations, seqnos, CAS generator and the
// change streams following it.
//
// Ground rules: every field below `mutex` is guarded by it; the member
// functions whose names end in Locked require it held (GUARDED_BY /
// REQUIRES: the clang preset checks both). The bucket
// (ep_bucket.h) does everything that involves the pool or callbacks after
// releasing it: a callback never runs under a vBucket lock.
//
// Invariants (kept by the functions here):
// - dirty holds exactly the queued mutations with seqno > persistedSeqno, in
//   seqno order (the flusher removes a batch and advances persistedSeqno in
//   one critical section); change streams rely on it.
// - pendingByKey[k] exists iff syncWrites holds a write to k; while it does,
//   other writes to k are refused (SyncWriteInProgress).
// - durability tracks exactly the writes of syncWrites that are not
//   resolved (durability_monitor.h decides; the bucket applies).
// - Keys are stored keys: the collection id in front (collections.h,
//   encodeCollectionKey); itemOf() turns one back into what callers see.
//   Only dirty holds prepare keys (prepareKeyOf); change streams never see
//   them.
// - Every key in committed, pendingByKey and locks is of a collection in
//   `collections`: dropping a collection removes its keys from all three.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/collection_ttls.h"
#include "engine/durability_monitor.h"
#include "engine/hash_table.h"
#include "engine/stored_key.h"
#include "engine/stored_value.h"
#include "executor/thread_annotations.h"
#include "kvexec/engine/change_stream.h"
#include "kvexec/engine/failover_log.h"
#include "kvexec/engine/item.h"
#include "kvexec/engine/operations.h"
#include "kvexec/engine/vbucket_state.h"
#include "kvexec/storage/types.h"
#include "kvexec/task.h"

namespace kvexec::engine {

class StreamImpl;

// The Item callers see for a stored key: its key without, and its
// collection beside it.
Item itemOf(Vbid vbid, std::string_view storedKey, std::string value, const ItemMeta& meta);
CollectionId collectionOf(std::string_view storedKey);

// SyncWrite prepares (and their aborts) are kept, in the dirty queue and on
// disk, under their own key: the stored key behind Couchbase's
// DurabilityPrepare collection id (2), which the manifest never hands out,
// so a prepare never replaces the committed document a reader sees. A
// commit is a new mutation of the committed key.
inline constexpr char kPrepareNamespace = 0x02;
std::string prepareKeyOf(std::string_view storedKey);
bool isPrepareKey(std::string_view key);
// The stored key a prepare key stands for.
std::string_view committedKeyOf(std::string_view prepareKey);
// Under a prepare key, an abort is a tombstone at level None; a deleted
// document with a level is the prepare of a durable delete, which must
// stream and warm up as a prepare (its replicas acknowledge it).
bool isAbortTombstone(const storage::Document& doc);

// A document read from disk as the engine holds it.
ItemMeta metaOf(const storage::Document& doc);
StoredValue storedValueOf(const storage::Document& doc);

using SyncWriteDone = std::function<void(Status, std::uint64_t cas, MutationToken)>;

struct SyncWrite {
    std::string key;
    StoredValue value;
    DurabilityLevel level = DurabilityLevel::Majority;
    Clock::time_point accepted, deadline;
    bool resolved = false;  // the monitor committed it; the completion task applies it
    SyncWriteDone done;
    // Adopted from an earlier term (a promotion, or warmup): no client
    // waits for it, and it may have been acknowledged before.
    bool inherited = false;
};

// A document's lock (Bucket::getLocked): its CAS and when it lapses.
struct DocumentLock {
    std::uint64_t cas = 0;
    std::uint32_t until = 0;  // seconds since the epoch; locked while now < until
};

struct DirtyItem {
    storage::Document doc;
    Clock::time_point queued;
    Seqno preparedSeqno = 0;  // a commit's or an abort's prepare
};

// The replication-stream event of a queued or persisted document
// (change_stream.h): prepare keys give Prepare (Abort if a tombstone),
// a document with a prepared seqno gives Commit, a tombstone Deletion or,
// if its expiry made it, Expiration.
StreamEvent eventOf(Vbid vbid, const storage::Document& doc, Seqno preparedSeqno);

// An abort is a tombstone of the prepare key whose value holds the
// aborted prepare's seqno (8 bytes, host order: engine-internal), so that
// one read back from disk still names its prepare.
StoredValue abortTombstone(Seqno preparedSeqno);
Seqno abortedPrepareOf(std::string_view tombstoneValue);

// A prepare a replica holds until its commit or abort arrives.
struct ReplicaPrepare {
    std::string key;  // the stored key it would write
    StoredValue value;
    DurabilityLevel level = DurabilityLevel::Majority;
};

// Someone waiting for the vBucket to persist a seqno (a range scan's
// create with snapshot requirements): `done(true)` once persistedSeqno
// reaches it, `done(false)` at the deadline or at shutdown.
struct PersistenceWaiter {
    Seqno seqno = 0;
    Clock::time_point deadline;
    std::function<void(bool persisted)> done;
};

// A SyncWrite that left the vBucket and the status its client gets.
struct FinishedSyncWrite {
    SyncWrite write;
    Status status;
    std::uint64_t vbucketUuid;
};

// Bytes a key/value pair is accounted for (the quota's unit).
inline std::size_t footprint(std::size_t keySize, std::size_t valueSize) {
    constexpr std::size_t kOverhead = 64;  // table node header, metadata, string header
    return keySize + valueSize + kOverhead;
}

class VBucket {
  public:
    VBucket(Vbid id, std::uint64_t uuid, std::string nodeName)
        : id(id), durability(std::move(nodeName)), failover(uuid) {}

    const Vbid id;
    // Set while the vBucket sits in its shard's ready queue (flusher.h).
    std::atomic<bool> inReadyQueue{false};
    // Set while an automatic compaction of its file is queued or runs;
    // after one failed, none starts before this time (steady clock, ns).
    std::atomic<bool> autoCompacting{false};
    std::atomic<std::int64_t> autoCompactionNotBefore{0};
    // Set while the vBucket is queued for the completion task.
    bool inCompletionQueue GUARDED_BY(mutex) = false;

    kvexec::detail::Mutex mutex;
    // Only an Active vBucket serves clients and decides SyncWrites.
    VBucketState state GUARDED_BY(mutex) = VBucketState::Active;
    bool handingOver GUARDED_BY(mutex) = false;  // an Active's takeover: clients get TempFail
    // What every request reads comes next, beside the lock it takes: a
    // vBucket is usually cold in the cache when a request comes.
    // The manifest's collections, each with its maxTtl (0: none).
    CollectionTtls collections GUARDED_BY(mutex) = {{kDefaultCollection, 0}};
    HashTable committed GUARDED_BY(mutex);
    StoredKeyMap<Seqno> pendingByKey GUARDED_BY(mutex);
    // Locks of live documents; a lapsed one is dropped when next looked at
    // (lockCasLocked) or by the expiry pager.
    StoredKeyMap<DocumentLock> locks GUARDED_BY(mutex);
    // The SyncWrites' durability decision over the vBucket's topology; the
    // values themselves wait in syncWrites.
    DurabilityMonitor durability GUARDED_BY(mutex);
    // Its history branches; the newest one's uuid is in mutation tokens.
    FailoverLog failover GUARDED_BY(mutex);
    // Compaction may have purged tombstones below it: a stream that would
    // resume from below it may have missed deletions (rolled back to 0).
    Seqno purgeSeqno GUARDED_BY(mutex) = 0;
    // The purge seqno vbuckets.json holds. A replica takes its active's
    // purge seqno from a disk snapshot, and the flusher writes it before
    // any of that snapshot's items (a crash must not keep the items and
    // lose the purge seqno that says which tombstones they lack).
    Seqno savedPurgeSeqno GUARDED_BY(mutex) = 0;
    // As a replica: the prepares of its active not yet ended, by seqno,
    // and the high prepared seqno last reported (onReplicaPrepared).
    std::map<Seqno, ReplicaPrepare> replicaPrepares GUARDED_BY(mutex);
    Seqno reportedHighPrepared GUARDED_BY(mutex) = 0;
    // As a replica, inside a snapshot its active read from disk: such a
    // snapshot holds only each key's latest version, so the copy is a
    // state of its active's history only at the snapshot's ends. `base` is
    // the copy's high seqno when the snapshot began, `end` the snapshot's
    // end (a snapshot that follows an unfinished one keeps the first one's
    // base and the larger end). Cleared once the high seqno reaches `end`,
    // by a rollback and by a promotion.
    struct DiskSnapshot {
        Seqno base = 0;
        Seqno end = 0;
    };
    std::optional<DiskSnapshot> diskSnapshot GUARDED_BY(mutex);
    // A rollback a stream asked for (rollbackReplica), done by the
    // vBucket's flusher before its next save: the file is cut back to `to`
    // (or below) and the contents reloaded from it; then `done`.
    struct PendingRollback {
        Seqno to = 0;
        StatusCallback done;
    };
    std::optional<PendingRollback> pendingRollback GUARDED_BY(mutex);
    std::map<Seqno, SyncWrite> syncWrites GUARDED_BY(mutex);
    std::vector<PersistenceWaiter> persistenceWaiters GUARDED_BY(mutex);
    std::deque<DirtyItem> dirty GUARDED_BY(mutex);
    // Collections dropped while the vBucket could not write their
    // deletions (a replica, dead, handing over, or before warmup knew its
    // state): their documents stay, hidden from readers, until it is a
    // plain active, which deletes them (a replica usually gets its
    // active's deletions first).
    std::set<CollectionId> droppedPending GUARDED_BY(mutex);
    std::uint64_t liveCount GUARDED_BY(mutex) = 0;
    std::uint64_t tombstoneCount GUARDED_BY(mutex) = 0;
    Seqno highSeqno GUARDED_BY(mutex) = 0;
    Seqno persistedSeqno GUARDED_BY(mutex) = 0;
    std::uint64_t maxCas GUARDED_BY(mutex) = 0;
    // The deadline the timeout task is snoozed to (max: none).
    Clock::time_point armedDeadline GUARDED_BY(mutex) = Clock::time_point::max();
    std::vector<std::shared_ptr<StreamImpl>> streams GUARDED_BY(mutex);
    TaskId timeoutTask = 0;  // set once before the vBucket is used

    // A CAS above every CAS this vBucket has handed out: the wall clock in
    // nanoseconds, or the last CAS + 1 if the clock is behind.
    std::uint64_t nextCasLocked() REQUIRES(mutex);
    // Assigns the next seqno (and, if newCas, a new CAS) to `value`, lets
    // `stamp` (if any) write them into it, queues it for the flusher and
    // the streams. Returns the bytes newly accounted (the dirty copy).
    using Stamp = std::function<void(std::string& value, std::uint64_t cas, Seqno seqno)>;
    // `preparedSeqno`: the prepare a commit (or abort) ends.
    std::size_t queueLocked(const std::string& key, StoredValue& value, bool newCas = true,
                            const Stamp& stamp = {}, Seqno preparedSeqno = 0) REQUIRES(mutex);
    // A replica's queueLocked: value.meta carries the active's seqno and
    // CAS, which the vBucket takes as they are.
    std::size_t queueReplicatedLocked(const std::string& key, StoredValue& value,
                                      Seqno preparedSeqno, DurabilityLevel level) REQUIRES(mutex);
    // queueLocked for a SyncWrite's prepare of `key` (a stored key), kept
    // under its prepare key with its level.
    std::size_t queuePrepareLocked(const std::string& key, StoredValue& value,
                                   DurabilityLevel level, const Stamp& stamp) REQUIRES(mutex);
    // Queues the end of key's prepare without a commit: a tombstone of its
    // prepare key. The committed document is untouched.
    std::size_t queueAbortLocked(const std::string& key, Seqno preparedSeqno) REQUIRES(mutex);
    // Replaces the committed value of key; returns the change in bytes.
    std::int64_t setCommittedLocked(const std::string& key, StoredValue value) REQUIRES(mutex);
    // Removes key's committed value (live or tombstone) from memory;
    // returns the change in bytes (<= 0).
    std::int64_t eraseCommittedLocked(const std::string& key) REQUIRES(mutex);
    // The CAS of key's lock at `now`, or 0 when it holds none.
    std::uint64_t lockCasLocked(std::string_view key, std::uint32_t now) REQUIRES(mutex);
    // The replica's high prepared seqno (durability_monitor.h): a prepare
    // inside an unfinished disk snapshot is not held yet.
    Seqno replicaHighPreparedLocked() const REQUIRES(mutex);
    // The highest seqno at which the copy is a state of its active's
    // history: highSeqno, or inside a disk snapshot its base. A replica
    // persists, acknowledges and resumes from no further.
    Seqno wholeSeqnoLocked() const REQUIRES(mutex);
    // The committed live value of key, or null (absent, tombstone, or
    // expired at `now`, seconds since the epoch).
    const StoredValue* liveLocked(std::string_view key, std::uint32_t now) const REQUIRES(mutex);
    // The live value of key, else its tombstone, or null (absent, or
    // expired and not yet deleted): what a tombstone-aware request sees.
    const StoredValue* liveOrTombstoneLocked(std::string_view key, std::uint32_t now) const
        REQUIRES(mutex);
    // The same test for a value already found: not a tombstone, not expired.
    static bool isLive(const StoredValue& value, std::uint32_t now) {
        return !value.meta.deleted && (value.meta.expiry == 0 || value.meta.expiry > now);
    }
    // What a SyncWrite pending on key means for a request: none (Success);
    // one of this term (SyncWriteInProgress: a write waits, a read sees the
    // committed value); or one inherited from an earlier term
    // (SyncWriteReCommitInProgress: it may have been acknowledged, so even
    // a read waits for its commit, as Couchbase's promoted replicas do).
    Status pendingOnLocked(std::string_view key) const REQUIRES(mutex);
    // The persistence waiters whose seqno is persisted, or whose deadline
    // has passed at `now`, taken out to be completed once the lock is
    // released.
    std::vector<PersistenceWaiter> takePersistedWaitersLocked() REQUIRES(mutex);
    std::vector<PersistenceWaiter> takeExpiredWaitersLocked(Clock::time_point now) REQUIRES(mutex);

  private:
    // Puts an already stamped value in the dirty queue and the streams.
    std::size_t appendLocked(const std::string& key, const StoredValue& value, Seqno preparedSeqno,
                             DurabilityLevel level) REQUIRES(mutex);
};

}  // namespace kvexec::engine
