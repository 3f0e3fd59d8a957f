// The seed's histogram text: ranges, cumulative percentages, counts, bars
// and the mean; and the client histogram's rows add up to what it recorded.
#include <gtest/gtest.h>

#include <sstream>

#include "pillowfight/histogram_text.h"
#include "pillowfight/latency_histogram.h"

namespace kvexec::pillowfight {
namespace {

using namespace std::chrono_literals;

std::vector<std::string> lines(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        out.push_back(line);
    }
    return out;
}

TEST(PillowfightHistogramText, DurationsAreMicrosecondsBelowTenMillisecondsAsInTheSeed) {
    EXPECT_EQ(seedDuration(0ns), "0us");
    EXPECT_EQ(seedDuration(850us), "850us");
    EXPECT_EQ(seedDuration(9999us), "9999us");
    EXPECT_EQ(seedDuration(22ms), "22ms");
    EXPECT_EQ(seedDuration(23068ms), "23068ms");
}

TEST(PillowfightHistogramText, RowsShowRangeCumulativePercentCountAndBar) {
    engine::HistogramSnapshot h;
    h.name = "sync_write_commit_persist_to_majority";
    h.summary.count = 4;
    h.summary.mean = 3590ms;
    h.buckets = {{22'000'000, 1}, {753'000'000, 3}};
    const auto out = lines(formatSeedHistogram(h));
    ASSERT_EQ(out.size(), 4u);
    EXPECT_EQ(out[0], "  sync_write_commit_persist_to_majority (4 total)");
    EXPECT_NE(out[1].find("  0us - 22ms "), std::string::npos) << out[1];
    EXPECT_NE(out[1].find("(  25.0000%) 1 "), std::string::npos) << out[1];
    EXPECT_NE(out[2].find("22ms - 753ms"), std::string::npos) << out[2];
    EXPECT_NE(out[2].find("( 100.0000%) 3 "), std::string::npos) << out[2];
    // The fullest row has the full bar; a third of it is 13 blocks and a
    // quarter block (106 eighths).
    std::string full;
    for (std::size_t i = 0; i < kBarWidth; ++i) {
        full += "\u2588";
    }
    EXPECT_EQ(out[2].substr(out[2].size() - full.size()), full);
    EXPECT_NE(out[1].find("\u258e"), std::string::npos);
    EXPECT_NE(out[3].find("Avg"), std::string::npos);
    EXPECT_NE(out[3].find("(3590ms)"), std::string::npos);
}

TEST(PillowfightHistogramText, AnEmptyHistogramPrintsItsTitleAndMean) {
    engine::HistogramSnapshot h;
    h.name = "SET";
    const auto out = lines(formatSeedHistogram(h));
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0], "  SET (0 total)");
}

TEST(PillowfightLatencyHistogram, RowsAddUpToTheCountAndAscend) {
    LatencyHistogram h("SET");
    for (int i = 1; i <= 1000; ++i) {
        h.record(std::chrono::microseconds(i));
    }
    h.record(5s);  // one far outlier keeps its own row
    const auto snapshot = h.snapshot(10);
    EXPECT_EQ(snapshot.summary.count, 1001u);
    std::uint64_t total = 0, previous = 0;
    for (const auto& [upper, count] : snapshot.buckets) {
        EXPECT_GT(upper, previous);
        previous = upper;
        total += count;
    }
    EXPECT_EQ(total, 1001u);
    EXPECT_EQ(snapshot.buckets.back().second, 1u);
    EXPECT_EQ(snapshot.buckets.back().first, 5'000'000'000u);  // capped at the max
    EXPECT_LE(snapshot.buckets.size(), 10u + 12u);             // about 10 rows, plus the tail
}

TEST(PillowfightHistogramText, PercentilesNameEachQuantile) {
    HistogramSummary s;
    s.p50 = 1ms;
    s.p90 = 2ms;
    s.p99 = 30ms;
    s.p999 = 40ms;
    s.max = 50ms;
    EXPECT_EQ(formatPercentiles(s), "p50 1000us  p90 2000us  p99 30ms  p99.9 40ms  max 50ms");
}

}  // namespace
}  // namespace kvexec::pillowfight
