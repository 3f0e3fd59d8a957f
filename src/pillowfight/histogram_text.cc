#include "pillowfight/histogram_text.h"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <vector>

namespace kvexec::pillowfight {
namespace {

// U+2588 FULL BLOCK and the left eighths U+258F (one) to U+2589 (seven).
const char* const kEighths[] = {"",       "\u258f", "\u258e", "\u258d",
                                "\u258c", "\u258b", "\u258a", "\u2589"};

std::string bar(std::uint64_t count, std::uint64_t fullest) {
    if (fullest == 0) {
        return {};
    }
    const auto eighths = static_cast<std::size_t>(static_cast<double>(count) * kBarWidth * 8 /
                                                  static_cast<double>(fullest));
    std::string out;
    for (std::size_t i = 0; i < eighths / 8; ++i) {
        out += "\u2588";
    }
    return out + kEighths[eighths % 8];
}

}  // namespace

std::string seedDuration(std::chrono::nanoseconds d) {
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(d).count();
    if (us < 10'000) {
        return std::to_string(us) + "us";
    }
    return std::to_string(us / 1000) + "ms";
}

std::string formatSeedHistogram(const engine::HistogramSnapshot& h) {
    const auto text = [&](std::uint64_t v) {
        return h.isDuration ? seedDuration(std::chrono::nanoseconds(static_cast<std::int64_t>(v)))
                            : std::to_string(v);
    };
    struct Row {
        std::string low, high;
        std::uint64_t count;
        double cumulative;
    };
    std::vector<Row> rows;
    std::uint64_t total = 0;
    for (const auto& b : h.buckets) {
        total += b.second;
    }
    std::uint64_t low = 0, seen = 0, fullest = 0;
    std::size_t lowWidth = 0, highWidth = 0, countWidth = 1;
    for (const auto& [upper, count] : h.buckets) {
        seen += count;
        rows.push_back({text(low), text(upper), count,
                        100.0 * static_cast<double>(seen) / static_cast<double>(total)});
        lowWidth = std::max(lowWidth, rows.back().low.size());
        highWidth = std::max(highWidth, rows.back().high.size());
        countWidth = std::max(countWidth, std::to_string(count).size());
        fullest = std::max(fullest, count);
        low = upper;
    }
    std::ostringstream out;
    out << "  " << h.name << " (" << h.summary.count << " total)\n";
    char line[256];
    for (const auto& r : rows) {
        std::snprintf(line, sizeof line, "    %*s - %-*s : (%9.4f%%) %*llu ",
                      static_cast<int>(lowWidth), r.low.c_str(), static_cast<int>(highWidth),
                      r.high.c_str(), r.cumulative, static_cast<int>(countWidth),
                      static_cast<unsigned long long>(r.count));
        out << line << bar(r.count, fullest) << '\n';
    }
    const std::string avg = text(static_cast<std::uint64_t>(h.summary.mean.count()));
    std::snprintf(line, sizeof line, "    %-*s : (%s)\n",
                  static_cast<int>(lowWidth + highWidth + 3), "Avg", avg.c_str());
    out << line;
    return out.str();
}

std::string formatPercentiles(const HistogramSummary& s) {
    return "p50 " + seedDuration(s.p50) + "  p90 " + seedDuration(s.p90) + "  p99 " +
           seedDuration(s.p99) + "  p99.9 " + seedDuration(s.p999) + "  max " + seedDuration(s.max);
}

}  // namespace kvexec::pillowfight
