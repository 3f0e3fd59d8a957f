#include "server/stats.h"

#include <unistd.h>

#include <sys/resource.h>

#include <nlohmann/json.hpp>

#include "kvexec/stats_format.h"
#include "server/front_end.h"

namespace kvexec::server {
namespace {

template <class T>
void add(StatList& out, std::string name, T value) {
    if constexpr (std::is_convertible_v<T, std::string>) {
        out.emplace_back(std::move(name), std::string(value));
    } else {
        out.emplace_back(std::move(name), std::to_string(value));
    }
}

std::uint64_t load(const std::atomic<std::uint64_t>& a) {
    return a.load(std::memory_order_relaxed);
}

// A server-wide counter, summed over the front ends.
std::uint64_t total(const ServerContext& c, FrontEndCounters::Counter FrontEndCounters::*counter) {
    return FrontEnd::sum(c.frontEnds, counter);
}

// One of `served`'s request counters, summed over the front ends.
std::uint64_t total(const ServerContext& c, const ServedBucket& served,
                    RequestCounters::Counter RequestCounters::*counter) {
    return FrontEnd::sum(c.frontEnds, served, counter);
}

double seconds(const timeval& tv) {
    return tv.tv_sec + tv.tv_usec / 1e6;
}

StatList defaults(const ServerContext& c, const ServedBucket& served) {
    StatList out;
    const auto bucket = served.bucket->stats();
    const auto& n = c.counters;
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    const auto uptime = std::chrono::duration_cast<std::chrono::seconds>(
        std::chrono::steady_clock::now() - c.started);
    add(out, "pid", static_cast<long>(getpid()));
    add(out, "uptime", uptime.count());
    add(out, "time", static_cast<long>(time(nullptr)));
    add(out, "version", std::string(kServerVersion));
    add(out, "rusage_user", std::to_string(seconds(usage.ru_utime)));
    add(out, "rusage_system", std::to_string(seconds(usage.ru_stime)));
    add(out, "threads", c.config.frontendThreads);
    add(out, "curr_connections", load(n.currConnections));
    add(out, "total_connections", load(n.totalConnections));
    add(out, "rejected_connections", load(n.rejectedConnections));
    add(out, "listen_disabled_num", load(n.listenDisabled));
    add(out, "idle_timeouts", total(c, &FrontEndCounters::idleTimeouts));
    add(out, "protocol_errors", total(c, &FrontEndCounters::protocolErrors));
    add(out, "cmd_get", total(c, served, &RequestCounters::cmdGet));
    add(out, "cmd_set", total(c, served, &RequestCounters::cmdSet));
    add(out, "cmd_flush", total(c, served, &RequestCounters::cmdFlush));
    add(out, "cmd_touch", total(c, served, &RequestCounters::cmdTouch));
    add(out, "get_hits", total(c, served, &RequestCounters::getHits));
    add(out, "get_misses", total(c, served, &RequestCounters::getMisses));
    add(out, "delete_hits", total(c, served, &RequestCounters::deleteHits));
    add(out, "delete_misses", total(c, served, &RequestCounters::deleteMisses));
    add(out, "durable_writes", total(c, served, &RequestCounters::durableWrites));
    add(out, "curr_items", bucket.currItems);
    add(out, "bytes", bucket.memUsed);
    add(out, "limit_maxbytes", bucket.memoryQuota);
    add(out, "ep_dirty_items", bucket.dirtyItems);
    add(out, "ep_sync_writes_pending", bucket.syncWritesPending);
    add(out, "ep_sync_writes_committed", bucket.syncWritesCommitted);
    add(out, "ep_sync_writes_aborted", bucket.syncWritesAborted);
    add(out, "ep_warmup_complete", bucket.warmupComplete ? 1 : 0);
    return out;
}

StatList timings(const engine::Bucket& b) {
    StatList out;
    for (const auto& h : b.stats().histograms) {
        const auto& s = h.summary;
        const auto ns = [&](std::chrono::nanoseconds d) {
            return h.isDuration ? formatDuration(d) : std::to_string(d.count());
        };
        add(out, h.name + "_count", s.count);
        add(out, h.name + "_mean", ns(s.mean));
        add(out, h.name + "_p50", ns(s.p50));
        add(out, h.name + "_p90", ns(s.p90));
        add(out, h.name + "_p99", ns(s.p99));
        add(out, h.name + "_p999", ns(s.p999));
        add(out, h.name + "_max", ns(s.max));
        // The buckets too, for clients that print the distribution
        // (kvexec-pillowfight): nanoseconds (or counts) as JSON.
        nlohmann::json buckets = nlohmann::json::array();
        for (const auto& [upper, count] : h.buckets) {
            buckets.push_back({upper, count});
        }
        add(out, h.name + "_histogram",
            nlohmann::json{{"count", s.count},
                           {"mean", s.mean.count()},
                           {"p50", s.p50.count()},
                           {"p90", s.p90.count()},
                           {"p99", s.p99.count()},
                           {"p999", s.p999.count()},
                           {"max", s.max.count()},
                           {"buckets", buckets}}
                .dump());
    }
    return out;
}

StatList executor(const ServerContext& c, bool tasks) {
    StatList out;
    const PoolStats stats = c.pool->stats();
    add(out, "backend", std::string(c.pool->backendName()));
    if (tasks) {
        add(out, "tasks", formatStatsJson(stats, -1));
        return out;
    }
    for (std::size_t t = 0; t < kTaskTypeCount; ++t) {
        const std::string type(to_string(static_cast<TaskType>(t)));
        add(out, type + ":threads", c.pool->threadCount(static_cast<TaskType>(t)));
    }
    add(out, "pool", formatStatsJson(stats, -1));
    return out;
}

StatList fileCache(const ServerContext& c, const engine::Bucket& b) {
    StatList out;
    const auto bucket = b.stats();
    add(out, "file_cache_enabled", c.config.fileCache ? "on" : "off");
    add(out, "sync", c.config.sync == storage::SyncMode::None ? "none" : "fdatasync");
    add(out, "flusher_batches", bucket.flusherBatches);
    add(out, "flush_failures", bucket.flushFailures);
    add(out, "compaction_threshold", c.config.compactionThreshold);
    add(out, "compaction_min_file_bytes", c.config.compactionMinFileBytes);
    add(out, "compactions", bucket.compactions);
    add(out, "auto_compactions", bucket.autoCompactions);
    add(out, "compaction_bytes_reclaimed", bucket.compactionBytesReclaimed);
    return out;
}

// memcached's "stats settings", for the settings kvexec has, under
// memcached's names where the meaning is the same.
StatList settings(const ServerContext& c, const engine::Bucket& b) {
    StatList out;
    add(out, "maxbytes", b.config().memoryQuota);
    add(out, "maxconns", c.config.maxConnections);
    add(out, "tcpport", c.boundPort.load(std::memory_order_relaxed));
    add(out, "udpport", 0);  // no UDP
    add(out, "inter", c.config.host);
    add(out, "verbosity", 0);  // "verbosity" is accepted and changes nothing
    // kvexec never evicts: a full quota refuses writes (SERVER_ERROR out
    // of memory) instead, as memcached -M does.
    add(out, "evictions", "off");
    add(out, "num_threads", c.config.frontendThreads);
    add(out, "cas_enabled", "yes");
    add(out, "tcp_backlog", 1024);                   // Server::run's listen backlog
    add(out, "binding_protocol", "auto-negotiate");  // text or binary by the first byte
    add(out, "auth_enabled_sasl", c.users.empty() ? "no" : "yes");
    add(out, "item_size_max", b.config().maxItemSize);
    add(out, "idle_time",
        std::chrono::duration_cast<std::chrono::seconds>(c.config.idleTimeout).count());
    return out;
}

// memcached's "stats items" and "stats slabs" describe slab classes; kvexec
// has none. Every document is counted in class 1 (where stats cachedump
// lists them), and only figures kvexec has are given: like memcached, an
// empty cache reports no class at all.
StatList items(const engine::Bucket& b) {
    StatList out;
    const auto bucket = b.stats();
    if (bucket.currItems == 0) {
        return out;
    }
    add(out, "items:1:number", bucket.currItems);
    // Bytes the engine accounts for its documents (keys, values, overhead).
    add(out, "items:1:mem_requested", bucket.memUsed);
    add(out, "items:1:evicted", 0);  // kvexec never evicts
    add(out, "items:1:evicted_nonzero", 0);
    return out;
}

StatList slabs(const ServerContext& c, const ServedBucket& served) {
    StatList out;
    const auto bucket = served.bucket->stats();
    if (bucket.currItems != 0) {
        add(out, "1:used_chunks", bucket.currItems);  // one "chunk" per document
        add(out, "1:get_hits", total(c, served, &RequestCounters::getHits));
        add(out, "1:cmd_set", total(c, served, &RequestCounters::cmdSet));
        add(out, "1:delete_hits", total(c, served, &RequestCounters::deleteHits));
    }
    add(out, "active_slabs", bucket.currItems != 0 ? 1 : 0);
    add(out, "total_malloced", bucket.memUsed);  // what the engine accounts, not malloc's view
    return out;
}

// kvexec's own group: this node's DCP consumers towards its peers (none
// for a single node).
StatList replication(const ServedBucket& served) {
    StatList out;
    const auto report = served.cluster->replicaPrepared.report();
    if (!report) {
        return out;
    }
    add(out, "replication_peers", report->peers);
    add(out, "replication_tls", report->tls ? "yes" : "no");
    add(out, "replication_streams_open", report->streamsOpen);
    add(out, "replication_connections", report->counters.connections);
    add(out, "replication_breaks", report->counters.breaks);
    add(out, "replication_stream_requests", report->counters.streamRequests);
    add(out, "replication_streams_closed", report->counters.streamsClosed);
    add(out, "replication_last_break", report->lastBreak);
    return out;
}

}  // namespace

std::optional<StatList> collectStats(const ServerContext& context, const ServedBucket& served,
                                     const std::string& group) {
    const engine::Bucket& bucket = *served.bucket;
    if (group.empty()) {
        return defaults(context, served);
    }
    if (group == "timings") {
        return timings(bucket);
    }
    if (group == "tasks" || group == "executor") {
        return executor(context, group == "tasks");
    }
    if (group == "file_cache") {
        return fileCache(context, bucket);
    }
    if (group == "settings") {
        return settings(context, bucket);
    }
    if (group == "items") {
        return items(bucket);
    }
    if (group == "slabs") {
        return slabs(context, served);
    }
    if (group == "replication") {
        return replication(served);
    }
    return std::nullopt;
}

}  // namespace kvexec::server
