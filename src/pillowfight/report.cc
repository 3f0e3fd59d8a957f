#include "pillowfight/report.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "pillowfight/histogram_text.h"

namespace kvexec::pillowfight {
namespace {

std::string rate(const PhaseResult& p) {
    char text[64];
    std::snprintf(text, sizeof text, "%.0f ops/s",
                  p.seconds > 0 ? static_cast<double>(p.ops) / p.seconds : 0.0);
    return text;
}

void appendErrors(std::ostringstream& out, const PhaseResult& p) {
    if (p.errors.empty()) {
        out << "  errors: none\n";
        return;
    }
    out << "  errors: " << p.errorCount() << "\n";
    for (const auto& [what, count] : p.errors) {
        out << "    " << count << "  " << what << "\n";
    }
}

// Shown once an op has been retried (a cluster's map changing): the one
// node report stays as it was.
void appendRetries(std::ostringstream& out, const PhaseResult& p) {
    if (p.retries.empty()) {
        return;
    }
    out << "  retried: " << p.retryCount() << " (sent again, by the answer that caused it)\n";
    for (const auto& [what, count] : p.retries) {
        out << "    " << count << "  " << what << "\n";
    }
}

// Connections that dropped: reconnected (a cluster's links) or failing
// their client.
void appendConnections(std::ostringstream& out, const PhaseResult& p) {
    if (p.linksLost > 0) {
        out << "  connections lost: " << p.linksLost << ", reconnected: " << p.reconnects << "\n";
    }
    if (p.clientsFailed > 0) {
        out << "  clients failed: " << p.clientsFailed << "\n";
    }
    if (p.mapsPushed > 0) {
        out << "  cluster maps pushed and taken: " << p.mapsPushed << "\n";
    }
}

void appendLatency(std::ostringstream& out, const engine::HistogramSnapshot& h) {
    if (h.summary.count == 0) {
        return;
    }
    out << formatSeedHistogram(h) << "    " << formatPercentiles(h.summary) << "\n";
}

nlohmann::json histogramJson(const engine::HistogramSnapshot& h) {
    nlohmann::json buckets = nlohmann::json::array();
    for (const auto& [upper, count] : h.buckets) {
        buckets.push_back({upper, count});
    }
    const auto& s = h.summary;
    return {{"count", s.count},     {"mean", s.mean.count()}, {"p50", s.p50.count()},
            {"p90", s.p90.count()}, {"p99", s.p99.count()},   {"p999", s.p999.count()},
            {"max", s.max.count()}, {"buckets", buckets}};
}

nlohmann::json phaseJson(const PhaseResult& p) {
    return {{"ran", p.ran},
            {"ops", p.ops},
            {"seconds", p.seconds},
            {"setupSeconds", p.setupSeconds},
            {"opsPerSecond", p.seconds > 0 ? static_cast<double>(p.ops) / p.seconds : 0.0},
            {"getMisses", p.getMisses},
            {"errorCount", p.errorCount()},
            {"errors", p.errors},
            {"retryCount", p.retryCount()},
            {"retries", p.retries},
            {"clientsFailed", p.clientsFailed},
            {"linksLost", p.linksLost},
            {"reconnects", p.reconnects},
            {"mapsPushed", p.mapsPushed},
            {"histograms", {{"SET", histogramJson(p.sets)}, {"GET", histogramJson(p.gets)}}}};
}

// ", sub-document ops of 1 path" (gets are lookups, sets upserts).
std::string subdocText(const Options& o) {
    if (!o.subdoc) {
        return "";
    }
    return ", sub-document ops of " + std::to_string(o.subdocPaths) +
           (o.subdocPaths == 1 ? " path" : " paths");
}

}  // namespace

std::string formatReport(const Options& o, const RunResult& r) {
    std::ostringstream out;
    out << "== kvexec-pillowfight: " << o.clientCount() << " clients on " << o.threads
        << " thread(s), batch " << o.batchSize << ", " << o.minSize << ".." << o.maxSize << " bytes"
        << (o.randomBody ? " random" : "") << (o.jsonValues ? " JSON" : "") << subdocText(o)
        << ", set " << o.setPercent << "%, " << (o.sequential ? "sequential" : "random")
        << " keys over " << o.numItems << ", durability " << durabilityName(o.durability)
        << ", protocol " << (o.protocol == Protocol::Couchbase ? "couchbase" : "memcached");
    if (r.vbucketCount != 0) {
        out << ", " << r.vbucketCount << " vBuckets";
    }
    out << (r.interrupted ? " (interrupted)" : "") << "\n";
    if (r.population.ran) {
        out << "Populate: " << r.population.ops << " items in " << r.population.seconds << " s ("
            << rate(r.population) << ")\n";
        appendErrors(out, r.population);
        appendRetries(out, r.population);
        appendConnections(out, r.population);
    }
    if (r.load.ran) {
        out << "Load: " << r.load.ops << " ops in " << r.load.seconds << " s (" << rate(r.load)
            << ", after " << r.load.setupSeconds << " s to connect the clients); sets "
            << r.load.sets.summary.count << ", gets " << r.load.gets.summary.count << " (misses "
            << r.load.getMisses << ")\n";
        appendErrors(out, r.load);
        appendRetries(out, r.load);
        appendConnections(out, r.load);
        out << "Client latency (send to answer):\n";
        appendLatency(out, r.load.sets);
        appendLatency(out, r.load.gets);
    }
    if (!r.serverStatsError.empty()) {
        out << "Server stats: " << r.serverStatsError << "\n";
    }
    bool header = false;
    for (const auto& h : r.serverHistograms) {
        if (h.summary.count == 0) {
            continue;
        }
        if (!header) {
            out << "Server (STAT timings: accepted to committed):\n";
            header = true;
        }
        appendLatency(out, h);
    }
    return out.str();
}

std::string formatJson(const Options& o, const RunResult& r) {
    nlohmann::json options = {
        {"host", o.host},
        {"port", o.port},
        {"bucket", o.bucket},
        {"collection", o.collection.empty() ? "_default._default" : o.collection},
        {"threads", o.threads},
        {"clients", o.clientCount()},
        {"batchSize", o.batchSize},
        {"numItems", o.numItems},
        {"minSize", o.minSize},
        {"maxSize", o.maxSize},
        {"randomBody", o.randomBody},
        {"jsonValues", o.jsonValues},
        {"subdoc", o.subdoc},
        {"subdocPaths", o.subdocPaths},
        {"setPercent", o.setPercent},
        {"numCycles", o.numCycles},
        {"sequential", o.sequential},
        {"durability", durabilityName(o.durability)},
        {"protocol", o.protocol == Protocol::Couchbase ? "couchbase" : "memcached"}};
    nlohmann::json stats = nlohmann::json::object();
    for (const auto& [name, value] : r.serverStats) {
        if (name.find("_histogram") == std::string::npos) {
            stats[name] = value;
        }
    }
    nlohmann::json histograms = nlohmann::json::object();
    for (const auto& h : r.serverHistograms) {
        histograms[h.name] = histogramJson(h);
    }
    nlohmann::json out = {
        {"options", options},
        {"vbuckets", r.vbucketCount},
        {"interrupted", r.interrupted},
        {"population", phaseJson(r.population)},
        {"load", phaseJson(r.load)},
        {"server", {{"stats", stats}, {"histograms", histograms}, {"error", r.serverStatsError}}}};
    return out.dump(1);
}

}  // namespace kvexec::pillowfight
