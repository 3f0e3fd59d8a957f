// pillowfight/histogram_text.h: a histogram as the seed prints it
// (cbc-pillowfight / cbstats timings): a title with the total, one row per
// bucket with its range, the cumulative percentage, the count and a bar,
// then the mean; and a percentile line.
//
//   sync_write_commit_persist_to_majority (100000 total)
//        0us -   22ms   : (  0.0030%)     3
//       22ms -  753ms   : ( 10.2650%) 10262 ███████▋
//       Avg             : ( 3590ms)
//
// Pure functions; safe from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "kvexec/engine/bucket_stats.h"

namespace kvexec::pillowfight {

// "0us", "850us", "22ms", "23068ms": microseconds below 10 ms, else
// milliseconds, as the seed does.
std::string seedDuration(std::chrono::nanoseconds d);

// Rows from h.buckets ((upper bound, count), ascending); bars scale to the
// fullest row (kBarWidth characters, in eighths of a block).
std::string formatSeedHistogram(const engine::HistogramSnapshot& h);

// "p50 1.2ms  p90 ...  p99 ...  p99.9 ...  max ..."
std::string formatPercentiles(const HistogramSummary& s);

inline constexpr std::size_t kBarWidth = 40;

}  // namespace kvexec::pillowfight
