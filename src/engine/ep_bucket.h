// engine/ep_bucket.h: BucketImpl, the Bucket of bucket.h.
//
// Where things live:
//   ep_bucket.cc    open, reads, observe-seqno, stats, shutdown
//   mutations.cc    store / remove / arithmetic / touch / flush: one
//                   mutate() path that checks, queues and (for a SyncWrite)
//                   hands over to the durability monitor
//   locks.cc        getLocked / unlock
//   durability.cc   applying the durability monitor's decisions
//                   (durability_monitor.h) to SyncWrites, the completion
//                   task, the timeout tasks, aborts
//   vbucket_states.cc  vBucket states and topologies, replica acks
//   replica.cc      a replica applying its active's stream
//   flusher.cc      per-shard ready queues and the Writer flusher tasks
//   stream.cc       change streams and their backfill
//   warmup.cc       loading an existing data directory on Reader tasks
//   bucket_collections.cc  the manifest: changes, persisting them, applying
//                   them to every vBucket
//
// Ground rules: vBucket state is guarded by each VBucket's mutex (vbucket.h);
// a shard's ready queue by its own mutex; everything else here is atomic or
// set before the bucket is shared (the constructor, the warmup task before
// warmupState_ becomes Complete with release ordering). Lock order: a
// vBucket's mutex, then a stream's or a ready queue's; never two vBuckets.
// Callbacks run with no lock held.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "engine/engine_histogram.h"
#include "engine/manifest_file.h"
#include "engine/range_scans.h"
#include "engine/stream.h"
#include "engine/vbucket.h"
#include "engine/vbucket_state_file.h"
#include "kvexec/engine/bucket.h"
#include "kvexec/storage/kv_store.h"

namespace kvexec::engine {

class BucketImpl final : public Bucket {
  public:
    BucketImpl(ExecutorPool& pool, BucketConfig config);
    ~BucketImpl() override;

    // Taskable
    const std::string& name() const override { return config_.name; }

    // Bucket
    WarmupProgress warmupProgress() const override;
    void get(Vbid vbid, DocKey key, GetCallback done) override;
    void getMeta(Vbid vbid, DocKey key, GetCallback done) override;
    void getIncludingDeleted(Vbid vbid, DocKey key, GetCallback done) override;
    void getReplica(Vbid vbid, DocKey key, GetCallback done) override;
    void getReplicaIncludingDeleted(Vbid vbid, DocKey key, GetCallback done) override;
    std::vector<KeySummary> listKeys(Vbid vbid, std::size_t limit) const override;
    RangeScanCreateResult createRangeScan(const RangeScanRequest& request) override;
    void createRangeScan(const RangeScanRequest& request, RangeScanCreateCallback done) override;
    RangeScanBatch continueRangeScan(Vbid vbid, const RangeScanId& id,
                                     const RangeScanLimits& limits) override;
    Status cancelRangeScan(Vbid vbid, const RangeScanId& id) override;
    void store(StoreRequest request, MutationCallback done) override;
    void remove(RemoveRequest request, MutationCallback done) override;
    void arithmetic(ArithmeticRequest request, ArithmeticCallback done) override;
    void touch(Vbid vbid, DocKey key, std::uint32_t expiry, GetCallback done) override;
    void getLocked(Vbid vbid, DocKey key, std::chrono::seconds lockTime, GetCallback done) override;
    void unlock(Vbid vbid, DocKey key, std::uint64_t cas, StatusCallback done) override;
    void flush(StatusCallback done) override;
    void compact(Vbid vbid, StatusCallback done) override;
    ObserveSeqnoResult observeSeqno(Vbid vbid) const override;
    std::shared_ptr<ChangeStream> openStream(StreamRequest request, StreamItemCallback onItem,
                                             Status* status) override;
    std::shared_ptr<ChangeStream> openReplicationStream(StreamRequest request,
                                                        StreamEventCallback onEvent,
                                                        Status* status) override;
    Status applyReplicated(Vbid vbid, const StreamEvent& event) override;
    Seqno replicaHighPrepared(Vbid vbid) const override;
    std::optional<StreamStart> replicaResumePoint(Vbid vbid) const override;
    Status adoptFailoverLog(Vbid vbid, const FailoverLog& log) override;
    Status rollbackReplica(Vbid vbid, Seqno to, StatusCallback done) override;
    BucketStats stats() const override;
    const BucketConfig& config() const override { return config_; }
    Manifest manifest() const override;
    ManifestState manifestState() const override EXCLUDES(manifestMutex_);
    std::uint64_t manifestUid() const override EXCLUDES(manifestMutex_);
    ManifestChange changeManifest(const ManifestEdit& edit) override;
    ManifestChange adoptManifest(const ManifestState& state) override;
    ManifestChange createScope(const std::string& name) override;
    ManifestChange dropScope(const std::string& name) override;
    ManifestChange createCollection(const std::string& scope, const std::string& name,
                                    std::uint32_t maxTtl) override;
    ManifestChange dropCollection(const std::string& scope, const std::string& name) override;
    Status setVBucketState(Vbid vbid, VBucketState state, Topology topology) override;
    Status setVBucketStates(const std::vector<VBucketStateChange>& changes) override;
    std::optional<VBucketAssignment> vbucketAssignment(Vbid vbid) const override;
    Status seqnoAcknowledged(Vbid vbid, const std::string& node, Seqno preparedSeqno) override;
    std::optional<FailoverLog> failoverLog(Vbid vbid) const override;

    // --- for the engine's own tasks and streams ---
    ExecutorPool& pool() { return pool_; }
    std::uint32_t unixNow() const { return config_.unixTime(); }
    Clock::time_point steadyNow() const { return config_.steadyTime(); }

    // flusher.cc
    bool runFlusher(std::size_t shard);
    // durability.cc
    bool runCompletion();
    bool runTimeout(Vbid vbid);
    // expiry (mutations.cc)
    bool runExpiryPager();
    // warmup.cc
    bool runWarmup();
    bool runWarmupShard(std::size_t shard);
    // stream.cc
    void closeStream(StreamImpl& stream);
    // Wakes a stream's task as config().streamNotify says; `fromWritePath`
    // (a mutation gave it work): timed when config().measureStreamNotify.
    void notifyStream(TaskId task, bool fromWritePath);
    void recordStreamDelivery(Clock::duration d) { streamDelivery_.record(d); }

  private:
    // How soon a change needs its flusher: durable writes wait on it.
    enum class FlushUrgency : std::uint8_t { Batched, Now };
    // The strongest nudge sent to a shard's flusher since it last took its
    // ready queue: later nudges that are no stronger are not sent again.
    enum class FlusherNudge : std::uint8_t { None, Deferred, Woken };
    // A shard's flusher and its work (flusher.cc). The flusher task is
    // snoozed and woken under `mutex`, so that the order of the nudges is
    // the order the pool sees them in (a deferral sent after a wake would
    // otherwise put the wake off).
    struct Shard {
        explicit Shard(std::size_t vbuckets) : urgent(vbuckets, false) {}
        kvexec::detail::Mutex mutex;
        std::deque<Vbid> ready GUARDED_BY(mutex);
        // By vbid: a change of the queued vBucket waits for its save (a
        // durable write); the others wait for the deferred run.
        std::vector<bool> urgent GUARDED_BY(mutex);
        FlusherNudge nudge GUARDED_BY(mutex) = FlusherNudge::None;
        // The end of the batch window that the first nudge since the last
        // run that took every queued vBucket opened.
        Clock::time_point deferredUntil GUARDED_BY(mutex);
        TaskId flusher = 0;
    };

    // A decision of mutate(): the value to store, or why not.
    struct Proposal {
        Status status = Status::Success;
        StoredValue value;
        VBucket::Stamp stamp;  // StoreRequest::beforeQueue
    };
    using Decide = std::function<Proposal(const StoredValue* current)>;

    // Checks shared by every operation; Success or the error to return.
    // On Success the key fits a StoredKey.
    Status admit(Vbid vbid, const DocKey& key);
    // admit's checks of the vBucket alone: it exists, warmup is complete
    // and the bucket is not shutting down.
    Status admitVBucket(Vbid vbid);
    // The same; on Success, `stored` is the key as the vBucket keeps it.
    Status admit(Vbid vbid, const DocKey& key, std::string& stored);
    // The checks made under the vBucket's lock: the vBucket is active here
    // (NotMyVbucket; TempFail while pending) and holds the key's collection
    // (UnknownCollection).
    static Status admitLocked(const VBucket& vb, const DocKey& key) REQUIRES(vb.mutex);
    static Status admitLocked(const VBucket& vb, CollectionId collection) REQUIRES(vb.mutex);

    // Range scans (range_scans.cc): whether the vBucket meets a create's
    // snapshot requirements; the live keys of its collection in range.
    Status snapshotMetLocked(const VBucket& vb,
                             const std::optional<SnapshotRequirements>& snapshot) const
        REQUIRES(vb.mutex);
    void listScanKeysLocked(const VBucket& vb, const RangeScanRequest& request,
                            std::vector<std::string>& keys) const REQUIRES(vb.mutex);
    static Status stillScannableLocked(const VBucket& vb, const OpenRangeScan& scan)
        REQUIRES(vb.mutex);
    // Which committed value a read or a mutation's `decide` sees: a live
    // one only, or a tombstone too (getIncludingDeleted,
    // StoreRequest::accessDeleted).
    enum class Sees : std::uint8_t { Live, LiveOrTombstone };
    // `cas`: the request's CAS (0: none), which must be the lock's when the
    // document is locked; `decide` then sees the lock's CAS as the
    // document's. A mutation that succeeds releases the lock.
    void mutate(Vbid vbid, const DocKey& key, std::uint64_t cas, Durability durability,
                const Decide& decide, SyncWriteDone done, Sees sees = Sees::Live);
    // get and getIncludingDeleted.
    void read(Vbid vbid, const DocKey& key, Sees sees, GetCallback done);
    // getReplica and getReplicaIncludingDeleted.
    void readReplica(Vbid vbid, const DocKey& key, Sees sees, GetCallback done);
    // The collection's maxTtl applied to a value about to be stored.
    void applyMaxTtlLocked(const VBucket& vb, CollectionId collection, StoredValue& value) const
        REQUIRES(vb.mutex);
    // The value `decide` sees for key: null, the committed value, or a
    // copy of it in `asLocked` carrying the lock's CAS. Locked when `cas`
    // is not the lock's.
    Status currentForWriteLocked(VBucket& vb, const std::string& key, std::uint64_t cas, Sees sees,
                                 StoredValue& asLocked, const StoredValue*& current)
        REQUIRES(vb.mutex);
    Status checkDurability(const Durability& durability) const;
    // Queues a tombstone for an expired key, marked as its expiry's (it
    // streams as an Expiration). The only way an expiry deletes: both a
    // read that finds the key expired (get) and the expiry pager call it.
    void expireLocked(VBucket& vb, const std::string& key) REQUIRES(vb.mutex);

    // flusher.cc
    void notifyFlusher(VBucket& vb, FlushUrgency urgency = FlushUrgency::Now);
    void nudgeLocked(Shard& shard, FlusherNudge wanted) REQUIRES(shard.mutex);
    std::vector<Vbid> takeFlushWork(Shard& shard, bool shutdown) EXCLUDES(shard.mutex);
    bool flushVBucket(VBucket& vb) EXCLUDES(vb.mutex);
    // Returns whether items queued before the call were left for a later
    // batch.
    bool takeBatchLocked(VBucket& vb, std::vector<storage::Document>& items) REQUIRES(vb.mutex);
    bool savePurgeSeqno(VBucket& vb) EXCLUDES(vb.mutex);
    // Queues an automatic compaction of the vBucket's file if enough of it
    // is stale (BucketConfig::compactionFragmentationPercent).
    void maybeCompact(VBucket& vb);
    // The compaction task; `purgeTombstones`: those below the persisted
    // seqno go (compact()), else every tombstone stays (automatic).
    void scheduleCompaction(Vbid vbid, bool purgeTombstones, StatusCallback done);
    void countCompaction(const storage::CompactionResult& result, bool automatic);
    // durability.cc
    void trackSyncWriteLocked(VBucket& vb, Seqno seqno, SyncWrite write) REQUIRES(vb.mutex);
    void resolveLocked(VBucket& vb, SyncWrite& write) REQUIRES(vb.mutex);
    // Tells the monitor how far the vBucket has queued and persisted, and
    // applies what it decided.
    void localProgressLocked(VBucket& vb) REQUIRES(vb.mutex);
    // Applies the monitor's decisions: a commit marks its write resolved
    // for the completion task; an abort (only expire() makes them) ends
    // the write into `aborted`.
    void applyDecisionsLocked(VBucket& vb, std::vector<FinishedSyncWrite>& aborted)
        REQUIRES(vb.mutex);
    // Aborts every pending SyncWrite of the vBucket with `status`.
    void abortAllLocked(VBucket& vb, Status status, std::vector<FinishedSyncWrite>& aborted)
        REQUIRES(vb.mutex);
    // Aborts those a client waits for (not the inherited ones).
    void abortClientWritesLocked(VBucket& vb, Status status,
                                 std::vector<FinishedSyncWrite>& aborted) REQUIRES(vb.mutex);
    // Removes a pending SyncWrite and queues the value it hid back, so that
    // the disk converges to the committed state.
    FinishedSyncWrite abortLocked(VBucket& vb, Seqno seqno, Status status) REQUIRES(vb.mutex);
    std::vector<FinishedSyncWrite> commitResolvedLocked(VBucket& vb) REQUIRES(vb.mutex);
    void finish(std::vector<FinishedSyncWrite>& done);
    void wakeCompletion();
    // Snoozes the vBucket's timeout task to the monitor's next deadline.
    void armTimeoutLocked(VBucket& vb) REQUIRES(vb.mutex);
    // warmup.cc
    void loadVBucket(VBucket& vb);
    void loadVBucketLocked(VBucket& vb) REQUIRES(vb.mutex);
    void keepPendingPreparesLocked(VBucket& vb, std::vector<storage::Document>& prepares)
        REQUIRES(vb.mutex);
    void trackWarmedUpPreparesLocked(VBucket& vb) REQUIRES(vb.mutex);
    // After warmup: wakes the flushers of vBuckets that warmup left dirty.
    void nudgeFlushersOfDirtyVBuckets();
    // replica.cc
    Status applyReplicatedLocked(VBucket& vb, const StreamEvent& event) REQUIRES(vb.mutex);
    void beginReplicaSnapshotLocked(VBucket& vb, const StreamEvent& marker) REQUIRES(vb.mutex);
    void endReplicaPreparesLocked(VBucket& vb, const std::string& key) REQUIRES(vb.mutex);
    // The replica's new high prepared seqno if it moved since last
    // reported (nullopt otherwise, and for an active vBucket).
    std::optional<Seqno> replicaProgressLocked(VBucket& vb) REQUIRES(vb.mutex);
    // Calls onReplicaPrepared, with no lock held.
    void reportReplicaProgress(Vbid vbid, std::optional<Seqno> moved);
    // The flusher's part of rollbackReplica, before the vBucket's next
    // save; false if the store failed (retried with the flush).
    bool finishPendingRollback(VBucket& vb);
    // Empties the vBucket's memory (documents, queue, prepares, locks).
    void forgetContentsLocked(VBucket& vb) REQUIRES(vb.mutex);
    // vbucket_states.cc
    // Writes every vBucket's state, topology and failover log to the data
    // directory (vbucket_state_file.h); throws on failure.
    void persistVBucketStates(bool cleanShutdown) EXCLUDES(vbucketStateFileMutex_);
    // Has a Writer task persist them soon; changes made before that task
    // runs share its one write. For what may be lost in a crash (a replica's
    // adopted history: the stream it resumes then asks for a rollback).
    void persistVBucketStatesSoon();
    // Gives the vBucket what the previous run persisted (warmup), starting
    // a new branch if that run crashed. Throws if its chain is not led by
    // this node.
    void restoreVBucketStateLocked(VBucket& vb) REQUIRES(vb.mutex);
    void restorePersistedStateLocked(VBucket& vb) REQUIRES(vb.mutex);
    std::uint64_t newVBucketUuid() EXCLUDES(uuidMutex_);
    void adoptReplicaPreparesLocked(VBucket& vb) REQUIRES(vb.mutex);
    // One checked change, in memory; its aborted SyncWrites into `aborted`.
    // True if the flusher has work: deletions it queued (of collections
    // dropped while the vBucket could not write them), or a promoted
    // replica's items an unfinished disk snapshot held back.
    bool changeStateLocked(VBucket& vb, const VBucketStateChange& change,
                           std::vector<FinishedSyncWrite>& aborted) REQUIRES(vb.mutex);
    // An active that stops being one ends its replication streams after
    // what it had queued (StreamImpl::endLocked): the aborts it makes
    // next are its own, not the history its consumers follow.
    void endReplicationStreamsLocked(VBucket& vb) REQUIRES(vb.mutex);
    // bucket_collections.cc
    // `decide` changes a copy of the current state (or refuses); the
    // result is persisted, made current and applied.
    ManifestChange replaceManifest(const std::function<ManifestChange(ManifestState&)>& decide)
        EXCLUDES(manifestChangeMutex_);
    // Makes every vBucket hold `next`'s collections: adds the new ones,
    // drops (dropCollectionLocked) those `next` no longer has.
    void applyManifest(const Manifest& next);
    // Deletes the collection's documents, locks and pending SyncWrites
    // (returned, to be finished outside the lock); true if it queued any
    // tombstone.
    // Deletes the documents of vb.droppedPending once vb is an active not
    // handing over; true if that queued deletions for the flusher.
    bool deleteDroppedCollectionsLocked(VBucket& vb, std::vector<FinishedSyncWrite>& aborted)
        REQUIRES(vb.mutex);
    bool dropCollectionLocked(VBucket& vb, CollectionId collection,
                              std::vector<FinishedSyncWrite>& aborted) REQUIRES(vb.mutex);
    void loadManifestState();
    // Records the first warmup error and marks warmup Failed.
    void failWarmup(const std::string& why) EXCLUDES(warmupErrorMutex_);
    // stream.cc
    void scheduleBackfill(const std::shared_ptr<StreamImpl>& stream, Seqno registeredAt);
    std::shared_ptr<ChangeStream> openStreamOf(StreamRequest request, bool replication,
                                               StreamEventCallback onEvent, Status* status);
    // Under the vBucket lock: lists the stream and gives it what memory
    // holds above its start; `backfillEnd`: the persisted seqno it
    // registered at. False (nothing done) for a replication stream of a
    // vBucket that is no longer active.
    bool registerStream(VBucket& vb, const std::shared_ptr<StreamImpl>& stream, Seqno& backfillEnd)
        EXCLUDES(vb.mutex);
    // A prepare a backfill read: its key and seqno.
    struct PrepareOnDisk {
        std::string key;
        Seqno seqno;
    };
    // Drops from a backfill's entries the prepares a later version of their
    // document, saved at or below `end`, ended.
    void dropCompletedPrepares(Vbid vbid, const std::vector<PrepareOnDisk>& prepares, Seqno end,
                               std::vector<StreamEntry>& entries) const;

    void accountMemory(std::int64_t delta) { memUsed_.fetch_add(delta, std::memory_order_relaxed); }
    bool overQuota(std::size_t more) const {
        return memUsed_.load(std::memory_order_relaxed) + static_cast<std::int64_t>(more) >
               static_cast<std::int64_t>(config_.memoryQuota);
    }
    VBucket& vbucket(Vbid vbid) const { return *vbuckets_[vbid]; }
    Shard& shardOf(Vbid vbid) { return *shards_[vbid % shards_.size()]; }
    EngineHistogram& commitHistogram(DurabilityLevel level);

    ExecutorPool& pool_;
    BucketConfig config_;
    std::unique_ptr<storage::KVStore> store_;  // set by the warmup task
    std::vector<std::unique_ptr<VBucket>> vbuckets_;
    RangeScans rangeScans_{config_.maxRangeScans, config_.rangeScanIdleTimeout};
    std::vector<std::unique_ptr<Shard>> shards_;
    std::atomic<bool> shuttingDown_{false};

    std::atomic<WarmupState> warmupState_{WarmupState::Running};
    std::atomic<std::size_t> vbucketsLoaded_{0}, shardsLoading_{0};
    std::atomic<std::uint64_t> itemsLoaded_{0};
    mutable kvexec::detail::Mutex warmupErrorMutex_;
    std::string warmupError_ GUARDED_BY(warmupErrorMutex_);

    // Completion task: vBuckets with resolved SyncWrites, and the flag that
    // makes the task be woken once per batch.
    TaskId completionTask_ = 0;
    std::atomic<bool> completionPending_{false};
    kvexec::detail::Mutex completionMutex_;
    std::vector<Vbid> completionQueue_ GUARDED_BY(completionMutex_);
    // SyncWrites a failed flush aborted; their clients are told by the
    // completion task, so that every SyncWrite completes on NonIO.
    std::vector<FinishedSyncWrite> failedWrites_ GUARDED_BY(completionMutex_);
    TaskId expiryPager_ = 0;

    // The manifest: changes are serialised by manifestChangeMutex_ (held
    // across the file write), the state read under manifestMutex_ (held
    // for a copy). Order: change mutex, state mutex, a vBucket's mutex.
    kvexec::detail::Mutex manifestChangeMutex_;
    mutable kvexec::detail::Mutex manifestMutex_;
    ManifestState manifestState_ GUARDED_BY(manifestMutex_);

    // What the previous run persisted of the vBuckets' states (set by the
    // warmup task before the shard tasks read it; nullopt: nothing).
    std::optional<PersistedVBuckets> persistedVBuckets_;
    kvexec::detail::Mutex vbucketStateFileMutex_;
    std::atomic<bool> vbucketStatesWriteScheduled_{false};
    kvexec::detail::Mutex uuidMutex_;
    std::mt19937_64 uuidSource_ GUARDED_BY(uuidMutex_){std::random_device{}()};

    std::atomic<std::int64_t> memUsed_{0};
    std::atomic<std::uint64_t> flusherBatches_{0}, flushFailures_{0}, tempFailures_{0};
    std::atomic<std::uint64_t> expired_{0}, syncWritesCommitted_{0}, syncWritesAborted_{0};
    std::atomic<std::uint64_t> streamsOpen_{0};
    std::atomic<std::uint64_t> compactions_{0}, autoCompactions_{0}, compactionBytesReclaimed_{0};
    // Only with config_.measureStreamNotify (notifyStream).
    std::atomic<std::uint64_t> streamNotifies_{0}, streamNotifyNs_{0};

    EngineHistogram commitMajority_{"sync_write_commit_majority", true};
    EngineHistogram commitMajorityPersistActive_{"sync_write_commit_majority_and_persist_on_master",
                                                 true};
    EngineHistogram commitPersistMajority_{"sync_write_commit_persist_to_majority", true};
    EngineHistogram diskCommit_{"disk_commit", true};
    EngineHistogram storageAge_{"storage_age", true};
    EngineHistogram batchSize_{"flusher_batch_size", false};
    EngineHistogram streamDelivery_{"stream_delivery", true};
};

}  // namespace kvexec::engine
