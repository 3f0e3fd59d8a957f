// bench/executor_bench.cc: the seeds' executor benchmarks, with peers in
// the same binary.
//
// Rows, in the order they run (see bench/executor/*.h for each one):
//   Footprint<B>/...                 idle CPU and bytes per snoozed task
//   ExecutorPoolFixture<B>/...       OneShot, LongLived, TimeoutAddCancel for
//                                    every backend ExecutorPool::create can
//                                    build (probed at startup: Wheel shows up
//                                    without editing this file)
//   Peer<Asio|TBB|Condvar|Libevent>/ the same scenarios on other libraries
//   PingPong, Baseline/...           the floor and the fixed costs
//
// Flags: every Google Benchmark flag, plus --smoke (one iteration each; CI).
// tools/report runs this binary and turns its JSON into tables and plots.
#include <benchmark/benchmark.h>

#include <string>

#include "executor/floor.h"
#include "executor/footprint.h"
#include "executor/options.h"
#include "executor/pool_harness.h"
#include "executor/pool_targets.h"
#include "executor/scenarios.h"
#include "peers/asio_peer.h"
#include "peers/condvar_pool.h"
#include "peers/libevent_peer.h"
#include "peers/tbb_peer.h"

int main(int argc, char** argv) {
    using namespace kvexec::bench;
    const Options options = parseOptions(argc, argv);
    const auto backends = availableBackends();

    registerFootprint(backends, options);
    for (auto b : backends)
        registerScenarios(poolImplementation(b), options);
    for (const auto& peer : {asioPeer(), tbbPeer(), condvarPeer(), libeventPeer()}) {
        registerScenarios(peer, options);
    }
    registerFloor(options);

    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv))
        return 1;
    std::string names;
    for (auto b : backends) {
        if (!names.empty())
            names += ',';
        names += to_string(b);
    }
    benchmark::AddCustomContext("kvexec_backends", names);
    benchmark::RunSpecifiedBenchmarks();
    releaseCachedTimeouts();
    benchmark::Shutdown();
    return 0;
}
