// BucketStats as cbstats-style text and as JSON.
#include <cstdio>
#include <sstream>
#include <string>

#include "kvexec/engine/bucket_stats.h"
#include "kvexec/stats_format.h"

namespace kvexec::engine {
namespace {

using Counter = std::pair<const char*, std::uint64_t>;

std::vector<Counter> countersOf(const BucketStats& s) {
    return {{"warmup_complete", s.warmupComplete ? 1 : 0},
            {"curr_items", s.currItems},
            {"tombstones", s.tombstones},
            {"mem_used", s.memUsed},
            {"memory_quota", s.memoryQuota},
            {"dirty_items", s.dirtyItems},
            {"flusher_batches", s.flusherBatches},
            {"flush_failures", s.flushFailures},
            {"temp_failures", s.tempFailures},
            {"expired", s.expired},
            {"sync_writes_pending", s.syncWritesPending},
            {"sync_writes_committed", s.syncWritesCommitted},
            {"sync_writes_aborted", s.syncWritesAborted},
            {"streams_open", s.streamsOpen},
            {"range_scans_open", s.rangeScansOpen},
            {"compactions", s.compactions},
            {"auto_compactions", s.autoCompactions},
            {"compaction_bytes_reclaimed", s.compactionBytesReclaimed},
            {"stream_notifies", s.streamNotifies},
            {"stream_notify_ns", s.streamNotifyNs}};
}

std::string valueText(const HistogramSnapshot& h, std::uint64_t v) {
    return h.isDuration ? formatDuration(std::chrono::nanoseconds(static_cast<std::int64_t>(v)))
                        : std::to_string(v);
}

void appendHistogram(std::ostringstream& out, const HistogramSnapshot& h) {
    out << ' ' << h.name << " (" << h.summary.count << " total)\n";
    std::uint64_t cumulative = 0;
    std::uint64_t low = 0;
    for (const auto& [upper, count] : h.buckets) {
        cumulative += count;
        const double percent = 100.0 * static_cast<double>(cumulative) /
                               static_cast<double>(h.summary.count == 0 ? 1 : h.summary.count);
        const auto bars = static_cast<std::size_t>(
            40.0 * static_cast<double>(count) /
            static_cast<double>(h.summary.count == 0 ? 1 : h.summary.count));
        char row[128];
        std::snprintf(row, sizeof row, "    %-9s - %-9s : (%8.4f%%) %10llu ",
                      valueText(h, low).c_str(), valueText(h, upper).c_str(), percent,
                      static_cast<unsigned long long>(count));
        out << row;
        for (std::size_t i = 0; i < bars; ++i) {
            out << "\u2588";
        }
        out << '\n';
        low = upper + 1;
    }
    out << "    Avg       : (" << valueText(h, static_cast<std::uint64_t>(h.summary.mean.count()))
        << ")\n";
}

}  // namespace

std::string formatBucketStatsText(const BucketStats& stats) {
    std::ostringstream out;
    out << "bucket " << stats.name << '\n';
    for (const auto& [name, value] : countersOf(stats)) {
        char line[96];
        std::snprintf(line, sizeof line, " %-24s %llu\n", name,
                      static_cast<unsigned long long>(value));
        out << line;
    }
    for (const auto& h : stats.histograms) {
        appendHistogram(out, h);
    }
    return out.str();
}

std::string formatBucketStatsJson(const BucketStats& stats) {
    std::ostringstream out;
    out << "{\"name\":\"";
    for (const char c : stats.name) {
        if (c == '"' || c == '\\') {
            out << '\\';
        }
        if (static_cast<unsigned char>(c) >= 0x20) {
            out << c;
        }
    }
    out << '"';
    for (const auto& [name, value] : countersOf(stats)) {
        out << ",\"" << name << "\":" << value;
    }
    out << ",\"histograms\":{";
    bool first = true;
    for (const auto& h : stats.histograms) {
        const auto& s = h.summary;
        out << (first ? "" : ",") << '"' << h.name << "\":{\"count\":" << s.count << ",\"unit\":\""
            << (h.isDuration ? "ns" : "items") << '"' << ",\"mean\":" << s.mean.count()
            << ",\"p50\":" << s.p50.count() << ",\"p90\":" << s.p90.count()
            << ",\"p99\":" << s.p99.count() << ",\"max\":" << s.max.count() << ",\"buckets\":[";
        for (std::size_t i = 0; i < h.buckets.size(); ++i) {
            out << (i == 0 ? "" : ",") << '[' << h.buckets[i].first << ',' << h.buckets[i].second
                << ']';
        }
        out << "]}";
        first = false;
    }
    out << "}}";
    return out.str();
}

}  // namespace kvexec::engine
