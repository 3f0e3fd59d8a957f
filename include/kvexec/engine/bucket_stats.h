// kvexec/engine/bucket_stats.h: what a bucket has measured, and its text
// (cbstats-style) and JSON forms.
//
// Histograms (kvexec/histogram.h, nanoseconds):
//   sync_write_commit_majority, sync_write_commit_majority_and_persist_on_master,
//   sync_write_commit_persist_to_majority: from the moment a SyncWrite is
//       accepted to the moment it is committed;
//   disk_commit: one KVStore::saveDocs;
//   storage_age: from a mutation being queued to it being persisted;
//   flusher_batch_size: items per saveDocs (a count, not a duration);
//   stream_delivery: from a mutation being queued to a stream's callback.
//
// Thread safety: BucketStats is a snapshot value; the format functions are
// pure.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kvexec/histogram.h"

namespace kvexec::engine {

// One histogram as cbstats prints it: its name, the non-empty buckets
// (upper bound, count) and the summary.
struct HistogramSnapshot {
    std::string name;
    bool isDuration = true;  // false: values are counts (batch sizes)
    HistogramSummary summary;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> buckets;  // (upper bound, count)
};

struct BucketStats {
    std::string name;
    bool warmupComplete = false;
    std::uint64_t currItems = 0;  // live documents (not tombstones)
    std::uint64_t tombstones = 0;
    std::uint64_t memUsed = 0;  // bytes the engine accounts for
    std::uint64_t memoryQuota = 0;
    std::uint64_t dirtyItems = 0;  // queued, not yet persisted
    std::uint64_t flusherBatches = 0;
    std::uint64_t flushFailures = 0;
    std::uint64_t tempFailures = 0;  // operations refused for memory or warmup
    std::uint64_t expired = 0;       // documents removed because they expired
    std::uint64_t syncWritesPending = 0;
    std::uint64_t syncWritesCommitted = 0;
    std::uint64_t syncWritesAborted = 0;  // timeouts, flush failures, shutdown
    std::uint64_t streamsOpen = 0;
    std::uint64_t rangeScansOpen = 0;  // range_scan.h: created, not yet closed
    // Compactions done (compact() and automatic; not those given up
    // because the vBucket changed under them), the automatic ones among
    // them, and the file bytes they gave back.
    std::uint64_t compactions = 0;
    std::uint64_t autoCompactions = 0;
    std::uint64_t compactionBytesReclaimed = 0;
    // Only with BucketConfig::measureStreamNotify (0 otherwise): wakes of
    // stream tasks from the write path, and the nanoseconds spent in them.
    std::uint64_t streamNotifies = 0;
    std::uint64_t streamNotifyNs = 0;
    std::vector<HistogramSnapshot> histograms;
};

// cbstats-style text: one "name value" line per counter, then each
// histogram as
//   name (N total)
//      low - high : (cumulative%) count ████
//      Avg : (mean)
std::string formatBucketStatsText(const BucketStats& stats);
// One JSON object: counters by name, "histograms": {name: {count, unit
// ("ns" or "items"), mean, p50, p90, p99, max, buckets: [[upper, count],
// ...]}}.
std::string formatBucketStatsJson(const BucketStats& stats);

}  // namespace kvexec::engine
