// engine_bench: the engine's own numbers, on Wheel and on Classic in one run.
//
// Rows (Google Benchmark names):
//   EngineSet/<Backend>/real_time/threads:<1|2|4>
//       non-durable sets from that many front-end threads (in memory; the
//       flushers persist behind them, sync none). items_per_second: sets/s;
//       wall_items_per_second: the same over the whole run's wall span.
//   EngineGet/Keys:<N>/real_time
//       gets of random keys from one thread, over N documents (64-byte keys,
//       1 KiB values, as memcaslap's) in 1024 vBuckets, as kvexec-server
//       holds them: the engine's share of a server get, mostly cache misses.
//       items_per_second: gets/s.
//   EngineDurable/<Backend>/Sync:<none|fdatasync>/Cache:<0|1>/real_time
//       PersistToMajority sets from one front-end thread keeping kInFlight
//       pending over 64 vBuckets. items_per_second: commits/s; p50_us,
//       p99_us: accept -> completion callback; saves_per_item: the
//       flushers' saves (KVStore::saveDocs calls) per durable write;
//       compactions_per_kitem: compactions (all automatic) per 1,000 of them.
//   StreamLatency/<Backend>/real_time
//       one set, then wait for the change stream's callback to see it;
//       one iteration is that round trip. p50_us, p99_us of it.
//   EngineSetWithStreams/<Backend>/Streams:<0|1|3>[/Notify:WakeAndWait]/real_time
//       seed 000: EngineSet's sets (one thread) while each vBucket feeds
//       that many replication streams, their tasks woken by wake() (no
//       suffix) or wakeAndWait(). items_per_second: sets/s;
//       cpu_ns_per_item: the process's CPU per set; notify_share: the share
//       of the sets' time spent waking stream tasks; notifies_per_set,
//       notify_ns; stream_events: events the consumers got.
//   Floor/Append4KiBFdatasync/real_time
//       one 4 KiB pwrite appended to a file + fdatasync, in the same
//       directory: what one durable flush costs at least on this disk.
// --smoke: a few iterations of each (CI: proves they run, no numbers).
// Files go to $KVEXEC_BENCH_DIR (default /var/tmp), removed afterwards.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "bench_dir.h"
#include "executor/parallel_run.h"
#include "kvexec/engine/bucket.h"
#include "kvexec/executor_pool.h"
#include "kvexec/histogram.h"

namespace {

using namespace kvexec;
using namespace kvexec::engine;
using kvexec::bench::BenchDir;
using kvexec::bench::ParallelRun;

constexpr std::size_t kInFlight = 64;
constexpr std::size_t kValueSize = 512;

std::string keyOf(std::uint64_t n) {
    std::string key = "key-";
    key += std::to_string(n);
    return key;
}

// A pool, a warmed-up bucket over a fresh directory.
struct Env {
    // `adjust`: changes to the bucket's configuration (null: none).
    Env(Backend backend, storage::SyncMode sync, bool cache,
        const std::function<void(BucketConfig&)>& adjust = {}) {
        pool = ExecutorPool::create(backend);
        BucketConfig config;
        config.name = "bench";
        config.dataDir = dir.path();
        config.numVBuckets = 64;
        config.numShards = 4;
        config.syncMode = sync;
        config.fileCacheEnabled = cache;
        config.memoryQuota = std::size_t{2} << 30;
        if (adjust) {
            adjust(config);
        }
        bucket = Bucket::open(*pool, config);
        while (bucket->warmupProgress().state == WarmupState::Running) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        if (bucket->warmupProgress().state != WarmupState::Complete) {
            throw std::runtime_error("warmup failed: " + bucket->warmupProgress().error);
        }
        prime();
    }
    // One persisted document per vBucket before timing: the vBucket files
    // exist (and are cached, when the cache is on), as on a running node.
    void prime() {
        for (Vbid vb = 0; vb < 64; ++vb) {
            StoreRequest r;
            r.vbid = vb;
            r.key = keyOf(0);
            r.value = keyOf(1);
            bucket->store(r, [](const MutationResult&) {});
        }
        for (Vbid vb = 0; vb < 64; ++vb) {
            while (bucket->observeSeqno(vb).persistedSeqno == 0) {
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            }
        }
    }
    ~Env() {
        bucket.reset();
        pool.reset();
    }
    BenchDir dir{"kvexec-engine"};
    std::unique_ptr<ExecutorPool> pool;
    std::unique_ptr<Bucket> bucket;
};

StoreRequest setOf(std::uint64_t n, const std::string& value, DurabilityLevel level) {
    StoreRequest r;
    r.vbid = static_cast<Vbid>(n % 64);
    r.key = keyOf(n % 10'000);
    r.value = value;
    r.durability.level = level;
    return r;
}

void reportPercentiles(benchmark::State& state, const Histogram& h) {
    const auto s = h.summary();
    state.counters["p50_us"] = static_cast<double>(s.p50.count()) / 1e3;
    state.counters["p99_us"] = static_cast<double>(s.p99.count()) / 1e3;
}

// --- EngineSet -----------------------------------------------------------
// Shared by the threads of one EngineSet run: thread 0 builds it before the
// loop and drops it after (Google Benchmark starts and ends the threads'
// loops together).
std::unique_ptr<Env> setEnv;

void engineSet(benchmark::State& state, Backend backend) {
    if (state.thread_index() == 0) {
        setEnv = std::make_unique<Env>(backend, storage::SyncMode::None, true);
    }
    const std::string value(kValueSize, 'v');
    std::uint64_t n = static_cast<std::uint64_t>(state.thread_index()) * 1'000'003;
    ParallelRun run(state);  // the rate over the whole run, not the threads' average
    for (auto _ : run.loop()) {
        setEnv->bucket->store(setOf(n++, value, DurabilityLevel::None),
                              [&](const MutationResult& r) {
                                  if (r.status != Status::Success) {
                                      state.SkipWithError("set failed");
                                  }
                              });
    }
    run.record();
    state.SetItemsProcessed(state.iterations());
    if (state.thread_index() == 0) {
        setEnv.reset();
    }
}

// --- EngineGet -------------------------------------------------------------
std::string paddedKeyOf(std::uint64_t n) {
    std::string key = keyOf(n);
    key.resize(64, '-');
    return key;
}

void engineGet(benchmark::State& state) {
    constexpr Vbid kVBuckets = 1024;
    const auto keys = static_cast<std::uint64_t>(state.range(0));
    Env env(Backend::Wheel, storage::SyncMode::None, true,
            [](BucketConfig& config) { config.numVBuckets = kVBuckets; });
    std::vector<std::string> names(keys);
    const std::string value(1024, 'v');
    for (std::uint64_t n = 0; n < keys; ++n) {
        names[n] = paddedKeyOf(n);
        StoreRequest r;
        r.vbid = static_cast<Vbid>(n % kVBuckets);
        r.key = names[n];
        r.value = value;
        env.bucket->store(r, [](const MutationResult&) {});
    }
    for (Vbid vb = 0; vb < kVBuckets; ++vb) {  // no flusher I/O while timing
        for (auto s = env.bucket->observeSeqno(vb); s.persistedSeqno < s.currentSeqno;
             s = env.bucket->observeSeqno(vb)) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    }
    // A fixed random order, built before timing.
    std::vector<std::uint64_t> order(keys);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), std::mt19937_64(42));
    std::size_t i = 0;
    for (auto _ : state) {
        const std::uint64_t n = order[i];
        i = i + 1 == keys ? 0 : i + 1;
        env.bucket->get(static_cast<Vbid>(n % kVBuckets), DocKey(names[n]),
                        [&](const GetResult& r) {
                            if (r.status != Status::Success) {
                                state.SkipWithError("get failed");
                            }
                            benchmark::DoNotOptimize(r.item.value.data());
                        });
    }
    state.SetItemsProcessed(state.iterations());
}

// --- EngineDurable ---------------------------------------------------------
void engineDurable(benchmark::State& state, Backend backend, storage::SyncMode sync, bool cache) {
    Env env(backend, sync, cache);
    const std::string value(kValueSize, 'd');
    auto latency = std::make_shared<Histogram>();
    auto inFlight = std::make_shared<std::atomic<std::size_t>>(0);
    auto failures = std::make_shared<std::atomic<std::size_t>>(0);
    std::uint64_t n = 0;
    const auto before = env.bucket->stats();
    for (auto _ : state) {
        while (inFlight->load(std::memory_order_acquire) >= kInFlight) {
            std::this_thread::yield();
        }
        inFlight->fetch_add(1);
        const auto start = Clock::now();
        env.bucket->store(setOf(n++, value, DurabilityLevel::PersistToMajority),
                          [latency, inFlight, failures, start](const MutationResult& r) {
                              latency->record(Clock::now() - start);
                              if (r.status != Status::Success) {
                                  failures->fetch_add(1);
                              }
                              inFlight->fetch_sub(1, std::memory_order_release);
                          });
    }
    while (inFlight->load() != 0) {  // the last ones count: they were started
        std::this_thread::yield();
    }
    if (failures->load() != 0) {
        state.SkipWithError("durable writes failed");
    }
    state.SetItemsProcessed(state.iterations());
    const auto after = env.bucket->stats();
    const auto perItem = [&](std::uint64_t count) {
        return static_cast<double>(count) /
               static_cast<double>(std::max<benchmark::IterationCount>(state.iterations(), 1));
    };
    state.counters["saves_per_item"] = perItem(after.flusherBatches - before.flusherBatches);
    state.counters["compactions_per_kitem"] =
        1000 * perItem(after.compactions - before.compactions);
    reportPercentiles(state, *latency);
}

// --- StreamLatency -----------------------------------------------------------
void streamLatency(benchmark::State& state, Backend backend) {
    Env env(backend, storage::SyncMode::None, true);
    std::atomic<Seqno> seen{0};
    auto stream = env.bucket->openStream(
        {0, 0}, [&](const Item& item) { seen.store(item.meta.seqno, std::memory_order_release); });
    Histogram latency;
    const std::string value(64, 's');
    std::uint64_t n = 0;
    for (auto _ : state) {
        const auto start = Clock::now();
        Seqno seqno = 0;
        auto request = setOf(n++, value, DurabilityLevel::None);
        request.vbid = 0;
        env.bucket->store(request, [&](const MutationResult& r) { seqno = r.token.seqno; });
        while (seen.load(std::memory_order_acquire) < seqno) {
        }
        latency.record(Clock::now() - start);
    }
    stream->close();
    reportPercentiles(state, latency);
}

// --- EngineSetWithStreams ----------------------------------------------------
// Seed 000: front-end sets (one thread, in memory, sync none) while each
// vBucket feeds `streamsPerVBucket` replication streams (DCP producers'
// engine streams), their tasks woken from the write path by `notify`
// (BucketConfig::streamNotify: wake() or wakeAndWait()). The consumers
// only count what they get.
//
// notify_share: the share of a set's time spent notifying streams. The
// bucket runs with measureStreamNotify, which times each wake of a stream
// task from the write path (two steady-clock reads around the pool call)
// and adds the nanoseconds up; notify_share = those nanoseconds over the
// timed loop's wall time, which is time in store() calls (the loop does
// nothing else; one front-end thread). A stream task is woken only when
// its buffer goes from empty to non-empty, so not every set notifies
// every stream: notifies_per_set says how many it did, notify_ns the mean
// of one. The measuring itself adds two clock reads per notify to the
// sets' time (about half of them inside the measured intervals): rows
// with streams pay it, Streams:0 does not (it notifies nothing: share 0).
// cpu_ns_per_item: the whole process's CPU per set (the front end, and
// the stream and flusher tasks on the pool's threads).
void engineSetWithStreams(benchmark::State& state, Backend backend, int streamsPerVBucket,
                          StreamNotify notify) {
    Env env(backend, storage::SyncMode::None, true, [notify](BucketConfig& config) {
        config.streamNotify = notify;
        config.measureStreamNotify = true;
    });
    auto delivered = std::make_shared<std::atomic<std::uint64_t>>(0);
    std::vector<std::shared_ptr<ChangeStream>> streams;
    for (Vbid vb = 0; vb < 64; ++vb) {
        for (int s = 0; s < streamsPerVBucket; ++s) {
            streams.push_back(
                env.bucket->openReplicationStream({vb, 0}, [delivered](const StreamEvent&) {
                    delivered->fetch_add(1, std::memory_order_relaxed);
                }));
        }
    }
    // Each stream starts with a backfill of the primed document, and a
    // backfilling stream is not woken by sets: time the steady state, with
    // every backfill delivered.
    for (const auto& stream : streams) {
        while (stream->lastDelivered() < env.bucket->observeSeqno(stream->vbid()).currentSeqno) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    }
    const std::string value(kValueSize, 'v');
    std::uint64_t n = 0;
    const auto before = env.bucket->stats();
    ParallelRun run(state);
    const auto loopStart = Clock::now();
    for (auto _ : run.loop()) {
        env.bucket->store(setOf(n++, value, DurabilityLevel::None), [&](const MutationResult& r) {
            if (r.status != Status::Success) {
                state.SkipWithError("set failed");
            }
        });
    }
    const auto loopEnd = Clock::now();
    run.record();
    const auto after = env.bucket->stats();
    state.SetItemsProcessed(state.iterations());
    const auto loopNs = static_cast<double>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(loopEnd - loopStart).count());
    const auto notifies = static_cast<double>(after.streamNotifies - before.streamNotifies);
    const auto notifyNs = static_cast<double>(after.streamNotifyNs - before.streamNotifyNs);
    state.counters["notify_share"] = loopNs > 0 ? notifyNs / loopNs : 0.0;
    state.counters["notifies_per_set"] =
        state.iterations() > 0 ? notifies / static_cast<double>(state.iterations()) : 0.0;
    state.counters["notify_ns"] = notifies > 0 ? notifyNs / notifies : 0.0;
    state.counters["stream_events"] = static_cast<double>(delivered->load());
    for (auto& stream : streams) {
        stream->close();
    }
}

// --- Floor -------------------------------------------------------------------
void floorAppendFdatasync(benchmark::State& state) {
    BenchDir dir("kvexec-engine");
    const auto path = (dir.path() / "floor").string();
    const int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0) {
        state.SkipWithError("open failed");
        return;
    }
    const std::string block(4096, 'f');
    off_t offset = 0;
    for (auto _ : state) {
        if (::pwrite(fd, block.data(), block.size(), offset) !=
                static_cast<ssize_t>(block.size()) ||
            ::fdatasync(fd) != 0) {
            state.SkipWithError("write failed");
            break;
        }
        offset += static_cast<off_t>(block.size());
    }
    ::close(fd);
    state.SetItemsProcessed(state.iterations());
}

bool takeSmokeFlag(int& argc, char** argv) {
    bool smoke = false;
    int out = 1;
    for (int i = 1; i < argc; ++i) {
        if (std::string_view(argv[i]) == "--smoke") {
            smoke = true;
        } else {
            argv[out++] = argv[i];
        }
    }
    argc = out;
    return smoke;
}

void registerAll(bool smoke) {
    auto finish = [smoke](benchmark::internal::Benchmark* b, int iterations) {
        b->UseRealTime();
        if (smoke) {
            b->Iterations(iterations);
        }
    };
    for (const Backend backend : {Backend::Wheel, Backend::Classic}) {
        const std::string name(to_string(backend));
        auto* set = benchmark::RegisterBenchmark(("EngineSet/" + name).c_str(), engineSet, backend);
        set->Threads(1)->Threads(2)->Threads(4);
        finish(set, 100);
        if (backend == Backend::Wheel) {  // the executor takes no part in a get
            finish(benchmark::RegisterBenchmark("EngineGet", engineGet)
                       ->Arg(1000)
                       ->Arg(100'000)
                       ->ArgName("Keys"),
                   1000);
        }
        for (const auto sync : {storage::SyncMode::None, storage::SyncMode::Fdatasync}) {
            for (const bool cache : {false, true}) {
                const std::string row = "EngineDurable/" + name +
                                        "/Sync:" + std::string(storage::to_string(sync)) +
                                        "/Cache:" + (cache ? "1" : "0");
                finish(
                    benchmark::RegisterBenchmark(row.c_str(), engineDurable, backend, sync, cache),
                    kInFlight * 2);
            }
        }
        finish(
            benchmark::RegisterBenchmark(("StreamLatency/" + name).c_str(), streamLatency, backend),
            100);
        // Notified by wake(): the rows' names as before; by wakeAndWait():
        // the same names with /Notify:WakeAndWait.
        for (const auto notify : {StreamNotify::Wake, StreamNotify::WakeAndWait}) {
            for (const int streams : {0, 1, 3}) {
                std::string row = "EngineSetWithStreams/";
                row += name;
                row += "/Streams:";
                row += std::to_string(streams);
                if (notify != StreamNotify::Wake) {
                    row += "/Notify:";
                    row += to_string(notify);
                }
                finish(benchmark::RegisterBenchmark(row.c_str(), engineSetWithStreams, backend,
                                                    streams, notify),
                       100);
            }
        }
    }
    finish(benchmark::RegisterBenchmark("Floor/Append4KiBFdatasync", floorAppendFdatasync), 10);
}

}  // namespace

int main(int argc, char** argv) {
    registerAll(takeSmokeFlag(argc, argv));
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
        return 1;
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
