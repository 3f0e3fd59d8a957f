// kvexec/engine/bucket.h: the node-level key-value engine: a bucket of
// vBuckets with flushers, durable writes (SyncWrites), timeouts, change
// streams and warmup, running its background work on an ExecutorPool and
// persisting through one storage::KVStore.
//
// Model (Couchbase KV-Engine's ep-engine):
// - numVBuckets vBuckets in numShards shards (vBucket v is in
//   shard v % numShards). Each vBucket holds its whole data set in memory
//   (hash table: key -> value, metadata, a pending SyncWrite beside the
//   committed value), a dirty queue of unpersisted mutations, its high and
//   persisted seqnos and a CAS generator.
// - A front-end mutation updates the hash table, queues the item and, when
//   its shard's ready queue goes from empty to non-empty, wakes the shard's
//   flusher (a Writer task) with the pool's wake(), which never waits for
//   another thread.
// - Each vBucket has a state (vbucket_state.h): only an active one serves
//   clients (others answer NotMyVbucket; a pending one TempFail). All start
//   active with the chain [nodeName], a single node; a cluster sets states
//   and topologies from its map (setVBucketState).
// - The flusher saves each ready vBucket's batch (latest version per key)
//   with KVStore::saveDocs, advances the persisted seqno and tells the
//   durability monitor, which decides SyncWrites over the vBucket's
//   topology (the active's own progress plus the replicas'
//   acknowledgements, seqnoAcknowledged); a DurabilityCompletion
//   task (NonIO) completes them. A per-vBucket SyncWrite timeout task
//   (NonIO) aborts writes whose deadline passed.
// - Opening a bucket over an existing directory warms it up on Reader
//   tasks; until then every data operation returns TempFail.
// - Documents live in collections (collections.h). Every operation names
//   its document's collection (DocKey, or a request's `collection`; the
//   default collection when it does not); one the manifest does not hold
//   gets UnknownCollection. Each vBucket knows the manifest's collections
//   and checks them under its own lock, so the check costs no shared
//   state. Keys are kept in memory and on disk with their collection id.
//
// Threads and callbacks (the contract the server relies on):
// - Every member may be called from any thread, including from inside a
//   completion callback or a stream callback. No call but the manifest
//   changes blocks on I/O or on another thread's progress: operations take
//   a per-vBucket lock for the time of an in-memory update only.
// - A completion callback is called exactly once. When the outcome is known
//   at once (every read, every non-durable mutation, every error found
//   before queueing), it runs inline on the caller's thread before the call
//   returns. A SyncWrite completes later on a NonIO worker of the pool
//   (the DurabilityCompletion task: commits and failed flushes; or the
//   vBucket's SyncWrite timeout task), or, for SyncWrites a whole-bucket
//   flush() or setVBucketState() aborts, inline in that call, or in the
//   bucket's destructor. Callbacks never run under an
//   engine lock and must not block; a server hops back to its own event loop itself.
// - Destroying the bucket (must not race with other calls on it) flushes
//   what is dirty (best effort), completes pending SyncWrites with
//   SyncWriteAmbiguous, closes streams and unregisters from the pool.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvexec/engine/bucket_stats.h"
#include "kvexec/engine/change_stream.h"
#include "kvexec/engine/collections.h"
#include "kvexec/engine/failover_log.h"
#include "kvexec/engine/item.h"
#include "kvexec/engine/manifest_state.h"
#include "kvexec/engine/operations.h"
#include "kvexec/engine/range_scan.h"
#include "kvexec/engine/vbucket_state.h"
#include "kvexec/executor_pool.h"
#include "kvexec/storage/file_ops.h"
#include "kvexec/storage/types.h"
#include "kvexec/taskable.h"

namespace kvexec::engine {

// How the engine wakes a change stream's task (a DCP producer's, in
// KV-Engine) when a mutation gives the stream work (on the front end's
// write path, under the vBucket's lock) or its backfill completes.
//
// Why it exists: seed 000 (/work/shared/seeds/000_*). KV-Engine's
// DcpProducer::scheduleNotify/notifyNewSeqno woke the producer's task on
// every store with a wake() that, on FollyExecutorPool, waited for the
// executor's thread (runInEventBaseThreadAndWait): ~30% of storeItem().
// KV-Engine then made wake() asynchronous and kept the waiting form as
// wakeAndWait(). engine_bench's EngineSetWithStreams rows compare the two
// here (executor_pool.h: on our backends neither waits for another
// thread; wakeAndWait also says whether the task was found, which the
// engine does not need and ignores).
//   Wake         ExecutorPool::wake (the default).
//   WakeAndWait  ExecutorPool::wakeAndWait.
enum class StreamNotify : std::uint8_t { Wake, WakeAndWait };
std::string_view to_string(StreamNotify);

struct BucketConfig {
    std::string name = "default";
    std::filesystem::path dataDir;  // created if missing
    std::size_t numVBuckets = 1024;
    std::size_t numShards = 4;
    storage::SyncMode syncMode = storage::SyncMode::Fdatasync;
    bool fileCacheEnabled = true;
    std::shared_ptr<storage::FileOps> fileOps;  // null: POSIX (tests inject faults here)
    // Bytes of keys, values and per-item overhead the bucket may hold
    // (resident data plus unpersisted copies). A mutation that would exceed
    // it gets TempFail (NoMemory if it could never fit).
    std::size_t memoryQuota = std::size_t{256} << 20;
    std::size_t maxItemSize = std::size_t{20} << 20;  // bigger values: TooBig
    std::chrono::milliseconds defaultSyncWriteTimeout{30'000};
    std::chrono::milliseconds expiryPagerInterval{60'000};
    // How long a flusher waits before retrying after a failed save.
    std::chrono::milliseconds flushRetryDelay{100};
    // How long the first non-durable mutation of an idle shard lets its
    // flusher wait, so that the mutations of that window share one save
    // instead of each waking a writer thread. A durable write (or an
    // abort) wakes it at once, and that run saves only the vBuckets such
    // writes wait on; a SyncWrite's commit keeps the window, and is saved
    // with its vBucket's next save. Zero: every mutation wakes it at once.
    std::chrono::microseconds flushBatchDelay{1'000};
    // getLocked: a lock time of 0 or above the maximum gets the default.
    std::chrono::seconds defaultLockTime{15};
    std::chrono::seconds maxLockTime{30};
    // Range scans (range_scan.h): at most this many open at once (a create
    // beyond gets Busy); one not continued for the timeout is closed.
    std::size_t maxRangeScans = 128;
    std::chrono::milliseconds rangeScanIdleTimeout{60'000};
    // Automatic compaction, as Couchbase's auto-compaction: after a save,
    // a vBucket file of at least compactionMinFileBytes whose stale part
    // (older versions of keys, commit records) is at least this percent of
    // it is compacted on an AuxIO task, one at a time per vBucket. It
    // keeps every tombstone: only compact() purges them, since a replica
    // or DCP client behind the purge must then start again from 0. 0: off.
    std::uint32_t compactionFragmentationPercent = 30;
    std::uint64_t compactionMinFileBytes = std::uint64_t{1} << 20;
    // Seconds since the Unix epoch, for expiry and locks; null: the system
    // clock. Tests substitute their own.
    std::function<std::uint32_t()> unixTime;
    // The steady clock SyncWrite deadlines are measured on; null:
    // Clock::now. Tests on the Manual pool substitute a virtual one.
    std::function<Clock::time_point()> steadyTime;
    // This node's name in vBucket topologies (vbucket_state.h). Every
    // vBucket starts active with the chain [nodeName].
    std::string nodeName = std::string(kLocalNode);
    // A cluster's node: every vBucket starts dead after warmup (its history
    // kept) and serves only once a map assigns it (setVBucketStates). What
    // the node led before it stopped may have been taken over meanwhile.
    bool awaitAssignment = false;
    // Called when a replica vBucket's high prepared seqno moves (after an
    // applyReplicated, or after its flusher persisted a PersistToMajority
    // prepare), with no engine lock held, on the thread that moved it. A
    // consumer acknowledges the seqno to the active. Null: not reported.
    std::function<void(Vbid, Seqno highPrepared)> onReplicaPrepared;
    // How stream tasks are woken (see StreamNotify).
    StreamNotify streamNotify = StreamNotify::Wake;
    // Times each wake of a stream task from the write path (a mutation
    // queued for a stream whose buffer was empty): two steady-clock reads
    // around the pool's call, added up per bucket in
    // BucketStats::streamNotifies and streamNotifyNs. For benchmarks
    // (engine_bench's notify_share); off (the default), neither is counted
    // and the write path pays one branch on this flag.
    bool measureStreamNotify = false;
};

enum class WarmupState : std::uint8_t { Running, Complete, Failed };

struct WarmupProgress {
    WarmupState state = WarmupState::Running;
    std::size_t vbucketsLoaded = 0, vbucketsTotal = 0;
    std::uint64_t itemsLoaded = 0;
    std::string error;  // when Failed: why (e.g. a storage error naming the file)
};

class Bucket : public Taskable {
  public:
    // Registers the bucket with `pool` and starts warmup on Reader tasks;
    // returns at once. Throws std::invalid_argument for a bad config
    // (0 vBuckets or shards, empty dataDir, zero quota).
    static std::unique_ptr<Bucket> open(ExecutorPool& pool, BucketConfig config);
    ~Bucket() override = default;

    virtual WarmupProgress warmupProgress() const = 0;

    // Reads: complete inline (kvexec-server answers a get from its stack on
    // this promise). get of an expired document removes it (KeyNotFound).
    // getMeta also reports tombstones (meta.deleted).
    virtual void get(Vbid vbid, DocKey key, GetCallback done) = 0;
    virtual void getMeta(Vbid vbid, DocKey key, GetCallback done) = 0;
    // get, or when the document is deleted its tombstone (meta.deleted),
    // whose value holds only the xattrs it kept (Couchbase's sub-document
    // AccessDeleted: transactions stage inserts in tombstones' xattrs).
    virtual void getIncludingDeleted(Vbid vbid, DocKey key, GetCallback done) = 0;
    // A read of this node's replica copy (Couchbase's GET_REPLICA): only a
    // replica vBucket answers (NotMyVbucket otherwise); what its active
    // last sent, which may be behind. Inline.
    virtual void getReplica(Vbid vbid, DocKey key, GetCallback done) = 0;
    // getReplica, or the replica's tombstone of the key (meta.deleted) with
    // the xattrs it kept, as getIncludingDeleted (sub-document's
    // ReplicaRead with AccessDeleted).
    virtual void getReplicaIncludingDeleted(Vbid vbid, DocKey key, GetCallback done) = 0;

    // Up to `limit` live documents of the vBucket (not deleted, not
    // expired; a SyncWrite still pending is not listed), in no particular
    // order; empty for a bad vbid. A snapshot taken under the vBucket's lock
    // and copied out, for listing tools (memcached's "stats cachedump");
    // cost: one pass over the vBucket's hash table.
    virtual std::vector<KeySummary> listKeys(Vbid vbid, std::size_t limit) const = 0;

    // Range scans (range_scan.h); each completes inline, under the
    // vBucket's lock for a pass over its hash table (create) or for
    // reading a batch's documents (continue, a bounded stretch of keys per
    // lock hold).
    // Never waits: a snapshot seqno not yet persisted gets TempFail.
    virtual RangeScanCreateResult createRangeScan(const RangeScanRequest& request) = 0;
    // Waits up to the snapshot's timeout for its seqno to be persisted, as
    // Couchbase's create does; `done` runs inline unless it waits, then on
    // the Writer thread of the flusher that persisted it, or the vBucket's
    // NonIO timeout task (TempFail), or in the bucket's destructor
    // (TempFail).
    virtual void createRangeScan(const RangeScanRequest& request, RangeScanCreateCallback done) = 0;
    virtual RangeScanBatch continueRangeScan(Vbid vbid, const RangeScanId& id,
                                             const RangeScanLimits& limits) = 0;
    // Success, or KeyNotFound for a scan that is not open.
    virtual Status cancelRangeScan(Vbid vbid, const RangeScanId& id) = 0;

    // Mutations: inline unless durable (see the file comment).
    virtual void store(StoreRequest request, MutationCallback done) = 0;
    virtual void remove(RemoveRequest request, MutationCallback done) = 0;
    virtual void arithmetic(ArithmeticRequest request, ArithmeticCallback done) = 0;
    // Sets the expiry and returns the document (get-and-touch).
    virtual void touch(Vbid vbid, DocKey key, std::uint32_t expiry, GetCallback done) = 0;
    // Pessimistic locking (Couchbase's GET_LOCKED / UNLOCK_KEY); inline.
    // getLocked returns the document with a new CAS, the lock's: until the
    // lock is released (unlock with that CAS, a mutation carrying it, or
    // `lockTime` passing; see BucketConfig) other mutations get Locked, a
    // second getLocked gets Locked, and reads report kLockedCas. Locks live
    // in memory only: a restart releases them.
    virtual void getLocked(Vbid vbid, DocKey key, std::chrono::seconds lockTime,
                           GetCallback done) = 0;
    // Success; KeyNotFound; NotLocked (no lock held); Locked (`cas` is not
    // the lock's).
    virtual void unlock(Vbid vbid, DocKey key, std::uint64_t cas, StatusCallback done) = 0;
    // Deletes every document of every active vBucket; their pending
    // SyncWrites are aborted (SyncWriteAmbiguous). A replica takes the
    // deletions from its active's stream, never at seqnos of its own. An
    // active handing over (a rebalance's takeover) takes no write, so that
    // the new active misses none: flush() deletes in the others and then
    // answers TempFail; flushing again once the takeover is done finishes
    // it. Completes inline.
    virtual void flush(StatusCallback done) = 0;

    // Compacts the vBucket's file on an AuxIO task (never on a Writer
    // thread), dropping tombstones below its persisted seqno; `done` runs
    // on that AuxIO worker (inline for a bad vbid or before warmup).
    virtual void compact(Vbid vbid, StatusCallback done) = 0;

    // Current and persisted seqno; inline.
    virtual ObserveSeqnoResult observeSeqno(Vbid vbid) const = 0;

    // Opens a change stream (see change_stream.h). Returns null and sets
    // `status` (if given) for a bad vbid (NotMyVbucket) or before warmup
    // completes (TempFail).
    virtual std::shared_ptr<ChangeStream> openStream(StreamRequest request,
                                                     StreamItemCallback onItem,
                                                     Status* status = nullptr) = 0;

    // A replication stream (change_stream.h: StreamEvent): as openStream,
    // plus snapshot markers, prepares, commits and aborts. Only from an
    // active vBucket (NotMyVbucket otherwise).
    virtual std::shared_ptr<ChangeStream> openReplicationStream(StreamRequest request,
                                                                StreamEventCallback onEvent,
                                                                Status* status = nullptr) = 0;
    // On a replica (or pending) vBucket: applies one event of its active's
    // replication stream, in order. Mutations keep the active's seqno and
    // CAS; a prepare is kept until its commit or abort (or a later
    // mutation of its key) ends it. Inline. NotMyVbucket unless replica or
    // pending; Invalid for a seqno not above the vBucket's high seqno, a
    // prepare without a level, or a commit of a prepare it does not hold.
    virtual Status applyReplicated(Vbid vbid, const StreamEvent& event) = 0;
    // A replica vBucket's high prepared seqno: every prepare up to it is
    // held as its level asks of a replica (in memory; persisted for
    // PersistToMajority). What a consumer acknowledges to the active
    // (DCP SEQNO_ACKNOWLEDGED). BucketConfig::onReplicaPrepared reports
    // when it moves.
    virtual Seqno replicaHighPrepared(Vbid vbid) const = 0;
    // Where a replica (or pending) vBucket's stream resumes (a DCP stream
    // request): its newest branch (0 while it holds nothing), its high
    // seqno, and the snapshot that seqno lies in. Inside a snapshot its
    // active read from disk (each key's latest version only) the copy is
    // a state of the active's history only at the snapshot's ends:
    // snapStart is where the snapshot began and snapEnd its end, so that an
    // active whose history left this one inside the snapshot rolls it back
    // to snapStart (decideRollback). Elsewhere snapStart == snapEnd ==
    // start. The replica persists nothing past snapStart until the
    // snapshot ends, so after a restart it resumes from a whole state.
    // nullopt unless replica or pending.
    virtual std::optional<StreamStart> replicaResumePoint(Vbid vbid) const = 0;
    // A replica takes its active's history (the failover log a stream
    // request answered with), so that it resumes on that history after a
    // restart. Persisted soon after, by a Writer task: lost in a crash,
    // the replica resumes from its older history and is rolled back, never
    // resumed wrongly. NotMyVbucket unless replica or pending.
    virtual Status adoptFailoverLog(Vbid vbid, const FailoverLog& log) = 0;
    // A replica whose history diverged from its active's (a stream request
    // answered with ROLLBACK to `to`) goes back to its newest persisted
    // commit at or below `to` (storage::KVStore::rollback; 0 when a
    // compaction folded that history), on disk and then in memory, done by
    // the vBucket's flusher. `done` runs there once both hold the rolled-back
    // copy (observeSeqno then gives the seqno to stream from): Success, or
    // NotMyVbucket if the vBucket stopped being a replica first. A second
    // call before that replaces the first, whose `done` gets TempFail.
    // Returns NotMyVbucket at once (and never calls `done`) unless replica
    // or pending, and TempFail before warmup completes.
    virtual Status rollbackReplica(Vbid vbid, Seqno to, StatusCallback done) = 0;

    virtual BucketStats stats() const = 0;

    // Scopes and collections. manifest() is inline. A change is written
    // and synced to the data directory before it takes effect, so it
    // survives a restart; the call blocks on that write (call it from a
    // management thread, not from a front end's loop) and changes are
    // serialised. Dropping a collection (or a scope, with its collections)
    // deletes its documents: tombstones queued like any deletion (streams
    // see them), a pending SyncWrite in it aborted (SyncWriteAmbiguous).
    // Documents of a dropped collection that a crash left on disk are
    // deleted by the next warmup. NotReady before warmup completes.
    virtual Manifest manifest() const = 0;
    // The manifest with the ids it hands out next (manifest_state.h).
    virtual ManifestState manifestState() const = 0;
    // The current manifest's uid, without copying the manifest (cluster
    // maps and unknown-collection answers carry it).
    virtual std::uint64_t manifestUid() const = 0;
    // Any change (applyManifestEdit's rules); createScope and the three
    // after it are this with one edit.
    virtual ManifestChange changeManifest(const ManifestEdit& edit) = 0;
    // Makes `state` the bucket's manifest, as it is (its uid and next ids
    // too): how a cluster's node takes the manifest all its nodes share.
    // Collections it lacks are dropped as by dropCollection; one it adds
    // starts empty. NotAllowed if an id both hold names another collection
    // here (ids are never reused, so this holds for any manifest of the
    // same cluster; a data directory from elsewhere can break it). Success
    // at once if `state` is the current one.
    virtual ManifestChange adoptManifest(const ManifestState& state) = 0;
    virtual ManifestChange createScope(const std::string& name) = 0;
    virtual ManifestChange dropScope(const std::string& name) = 0;
    // maxTtl (seconds, 0: none) bounds the expiry of the collection's
    // documents: one stored without an expiry, or with a later one, gets
    // now + maxTtl.
    virtual ManifestChange createCollection(const std::string& scope, const std::string& name,
                                            std::uint32_t maxTtl) = 0;
    virtual ManifestChange dropCollection(const std::string& scope, const std::string& name) = 0;

    // Makes this node hold the vBucket in `state`. For Active, `topology`
    // is its chain, which must start with BucketConfig::nodeName (an empty
    // chain means [nodeName]); SyncWrites then need a majority of it. A
    // vBucket that stops being active aborts its pending SyncWrites
    // (SyncWriteAmbiguous; their callbacks run inline, as in flush()) and
    // releases its document locks; one that becomes active starts a new
    // history branch (failoverLog). The change is written to the data
    // directory before the call returns (it blocks on that write: call it
    // from a management thread) and survives a restart. NotMyVbucket for a
    // bad vbid, Invalid for a bad chain, TempFail before warmup completes,
    // Internal if the write failed (the change holds in memory only).
    virtual Status setVBucketState(Vbid vbid, VBucketState state, Topology topology = {}) = 0;
    // Many changes at once (a new cluster map), written to the data
    // directory once. Checked first: a bad vbid or chain changes nothing.
    virtual Status setVBucketStates(const std::vector<VBucketStateChange>& changes) = 0;
    // The vBucket's state and topology; nullopt for a bad vbid.
    virtual std::optional<VBucketAssignment> vbucketAssignment(Vbid vbid) const = 0;
    // A replica's acknowledgement (DCP SEQNO_ACKNOWLEDGED): `node` holds
    // every prepare of the vBucket up to `preparedSeqno` as its level asks.
    // Invalid if `node` is not a replica in the chain; NotMyVbucket unless
    // the vBucket is active here. May commit SyncWrites (completed on the
    // completion task as usual).
    virtual Status seqnoAcknowledged(Vbid vbid, const std::string& node, Seqno preparedSeqno) = 0;
    // The vBucket's history branches (failover_log.h), newest first; its
    // newest uuid is the one mutation tokens carry. A branch starts when
    // the vBucket becomes active (setVBucketState) and at the warmup that
    // follows a crash. Persisted with the states. nullopt for a bad vbid.
    virtual std::optional<FailoverLog> failoverLog(Vbid vbid) const = 0;

    virtual const BucketConfig& config() const = 0;
};

}  // namespace kvexec::engine
