// pillowfight/report.h: a RunResult for people (the seed's histograms,
// percentiles, errors) and for tools (JSON: tools/persist-latency reads
// it).
//
// JSON shape: {"options": {...}, "vbuckets": N, "interrupted": bool,
//  "population"/"load": {"ops", "seconds", "opsPerSecond", "getMisses",
//     "errorCount", "errors": {what: count}, "retryCount",
//     "retries": {answer: count}, "histograms": {"SET"/"GET": H}},
//  "server": {"stats": {name: value}, "histograms": {name: H}, "error": ""}}
// where H = {"count", "mean", "p50", "p90", "p99", "p999", "max" (ns),
//            "buckets": [[upper ns, count], ...]}.
//
// Pure functions; safe from any thread.
#pragma once

#include <string>

#include "pillowfight/options.h"
#include "pillowfight/run.h"

namespace kvexec::pillowfight {

std::string formatReport(const Options& options, const RunResult& result);
std::string formatJson(const Options& options, const RunResult& result);

}  // namespace kvexec::pillowfight
