// engine/vbucket_state_file.h: every vBucket's state, topology and failover
// log, kept in the data directory (`vbuckets.json`, replaced whole:
// durable_file.h), with whether the bucket that wrote it shut down cleanly.
//
// The bucket writes it when warmup completes (marked "running"), whenever a
// vBucket's state or topology changes or it starts a new history branch,
// and last at a clean shutdown (marked "clean"). Warmup reads it back: a
// file still marked running means the bucket crashed, and every vBucket
// then starts a new branch at its persisted seqno.
//
// Thread safety: plain functions; the caller serialises writes.
#pragma once

#include <filesystem>
#include <optional>
#include <vector>

#include "kvexec/engine/failover_log.h"
#include "kvexec/engine/vbucket_state.h"

namespace kvexec::engine {

struct PersistedVBucket {
    VBucketState state = VBucketState::Active;
    Topology topology;
    FailoverLog failover{1};
    // Tombstones below it may have been purged by compaction (0: none).
    Seqno purgeSeqno = 0;
};

struct PersistedVBuckets {
    bool cleanShutdown = false;
    std::vector<PersistedVBucket> vbuckets;  // indexed by vbid
};

inline constexpr const char* kVBucketStateFileName = "vbuckets.json";

// The persisted states, or nullopt if `dir` has none (a new bucket, or one
// written before vBucket states were kept). Throws std::runtime_error
// naming the file if it is unreadable, damaged, or holds another number
// of vBuckets than `numVBuckets`.
std::optional<PersistedVBuckets> loadVBucketStates(const std::filesystem::path& dir,
                                                   std::size_t numVBuckets);
// Throws std::system_error if any step fails (the old file then stands).
void saveVBucketStates(const std::filesystem::path& dir, const PersistedVBuckets& states);

}  // namespace kvexec::engine
