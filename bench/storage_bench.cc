// storage_bench: KVStore::saveDocs with the file-handle cache on and off
// (seed 002), in one run.
//
// Names: SaveDocs/Cache:<0|1>/VBuckets:<n>/Batch:<items>/Sync:<none|fdatasync>
// One iteration is one saveDocs() of <items> 512-byte documents to the next
// vBucket in round-robin order (as a flusher visits them). Counters:
//   items_per_second  documents persisted per second
//   save_us           wall-clock microseconds per saveDocs() (latency)
//   opens_per_save    files opened per save (1 with the cache off, ~0 on)
// Compact/Live:<n>/Stale:<percent>: one compaction of a vBucket file of n
// live 512-byte documents whose records are that share stale versions
// (the live ones scattered among them); items_per_second: live documents
// copied per wall-clock second (the new file's syncs included).
// Scan/Live:<n>/Stale:<percent>: one scan of such a file from seqno 0;
// items_per_second: documents read per second.
// --smoke runs 2-3 iterations of each (CI: proves they run, no numbers).
// With the cache on, every vBucket's file is open before timing starts (the
// store opens them at start-up). Files go to $KVEXEC_BENCH_DIR (default /var/tmp), one fresh
// directory per run of a benchmark, removed afterwards.
#include <benchmark/benchmark.h>
#include <stdlib.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "bench_dir.h"
#include "kvexec/storage/kv_store.h"

namespace {

using namespace kvexec::storage;
using kvexec::bench::BenchDir;

constexpr std::size_t kValueSize = 512;
constexpr std::size_t kKeysPerVBucket = 1000;

struct Params {
    bool cache;
    std::size_t vbuckets;
    std::size_t batch;
    SyncMode sync;
};

KVStoreConfig configOf(const Params& p, const BenchDir& dir, SyncMode sync) {
    KVStoreConfig config;
    config.dir = dir.path();
    config.numVBuckets = p.vbuckets;
    config.syncMode = sync;
    config.fileCacheEnabled = p.cache;
    config.fileCacheCapacity = p.vbuckets;  // every vBucket fits: no eviction churn
    return config;
}

// The vBuckets are created without syncs (setup, not measured), then the
// store is reopened in the mode under test.
std::unique_ptr<KVStore> openStore(const Params& p, const BenchDir& dir) {
    {
        KVStore setup(configOf(p, dir, SyncMode::None));
        for (Vbid vb = 0; vb < p.vbuckets; ++vb) {
            setup.createVBucket(vb);
        }
    }
    return std::make_unique<KVStore>(configOf(p, dir, p.sync));
}

std::vector<Document> makeBatch(std::size_t items) {
    std::vector<Document> batch(items);
    for (auto& doc : batch) {
        doc.value.assign(kValueSize, 'v');
    }
    return batch;
}

std::vector<std::string> makeKeys() {
    std::vector<std::string> keys;
    for (std::size_t i = 0; i < kKeysPerVBucket; ++i) {
        keys.push_back("key" + std::to_string(i));
    }
    return keys;
}

void saveDocs(benchmark::State& state, Params p) {
    BenchDir dir("kvexec-bench");
    auto store = openStore(p, dir);
    const auto keys = makeKeys();
    auto batch = makeBatch(p.batch);
    std::vector<Seqno> seqnos(p.vbuckets, 0);
    Vbid vb = 0;
    auto saveNext = [&] {
        for (auto& doc : batch) {  // tens of ns: new seqno, key from a fixed set
            const Seqno s = ++seqnos[vb];
            doc.seqno = s;
            doc.key = keys[s % kKeysPerVBucket];
        }
        benchmark::DoNotOptimize(store->saveDocs(vb, batch));
        vb = (vb + 1) % static_cast<Vbid>(p.vbuckets);
    };
    // Opening the store already put every vBucket's file in the cache (with
    // the cache on): the steady state of a running server.
    const auto opensBefore = store->fileCacheStats().misses;
    const auto start = std::chrono::steady_clock::now();
    for (auto _ : state) {
        saveNext();
    }
    const std::chrono::duration<double, std::micro> elapsed =
        std::chrono::steady_clock::now() - start;
    const auto saves = std::max<double>(1, static_cast<double>(state.iterations()));
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(p.batch));
    state.counters["save_us"] = elapsed.count() / saves;
    state.counters["opens_per_save"] =
        static_cast<double>(store->fileCacheStats().misses - opensBefore) / saves;
}

// --- Compact and Scan: one vBucket of `live` documents ----------------------
// Its file holds every document once, then overwrites of documents drawn
// at random (seeded) until `stalePercent` of the records are stale
// versions (automatic compaction starts at 30: BucketConfig::
// compactionFragmentationPercent). The live versions lie scattered among
// the stale ones, as after random updates.
struct FileShape {
    std::size_t live;
    std::size_t stalePercent;
};

Params oneVBucket() {
    return Params{true, 1, 0, SyncMode::None};
}

// Deletes and recreates vBucket 0 with that shape (setup: not timed).
void writeShape(KVStore& store, const FileShape& shape) {
    store.deleteVBucket(0);
    store.createVBucket(0);
    const std::size_t stale = shape.live * shape.stalePercent / (100 - shape.stalePercent);
    std::mt19937 random(42);
    std::uniform_int_distribution<std::size_t> anyKey(0, shape.live - 1);
    std::vector<Document> batch;
    Seqno seqno = 0;
    for (std::size_t i = 0; i < shape.live + stale; ++i) {
        Document doc;
        const std::size_t key = i < shape.live ? i : anyKey(random);
        doc.key = "key" + std::to_string(key);
        doc.value.assign(kValueSize, 'v');
        doc.seqno = ++seqno;
        batch.push_back(std::move(doc));
        if (batch.size() == 100) {
            store.saveDocs(0, batch);
            batch.clear();
        }
    }
    if (!batch.empty()) {
        store.saveDocs(0, batch);
    }
}

// One iteration: one compaction of a file of that shape, written afresh
// (untimed) before each. items_per_second: live documents copied.
void compact(benchmark::State& state, FileShape shape) {
    BenchDir dir("kvexec-bench");
    auto store = openStore(oneVBucket(), dir);
    for (auto _ : state) {
        state.PauseTiming();
        writeShape(*store, shape);
        state.ResumeTiming();
        benchmark::DoNotOptimize(store->compact(0, 0));
    }
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(shape.live));
}

// One iteration: a scan of the whole vBucket (a stream's backfill reads
// it so). items_per_second: documents read.
void scan(benchmark::State& state, FileShape shape) {
    BenchDir dir("kvexec-bench");
    auto store = openStore(oneVBucket(), dir);
    writeShape(*store, shape);
    std::size_t read = 0;
    for (auto _ : state) {
        store->scan(0, 0, [&read](const Document& doc) {
            read += doc.value.size() != 0 ? 1 : 0;
            return true;
        });
    }
    benchmark::DoNotOptimize(read);
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(shape.live));
}

// Lets the cache hold every vBucket without running out of descriptors.
void raiseDescriptorLimit() {
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
        limit.rlim_cur = limit.rlim_max;
        ::setrlimit(RLIMIT_NOFILE, &limit);
    }
}

// --smoke: a few iterations of each benchmark, to prove they run (CI).
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
    for (SyncMode sync : {SyncMode::None, SyncMode::Fdatasync}) {
        for (std::size_t vbuckets : {64, 1024}) {
            for (std::size_t batch : {1, 10, 100}) {
                for (bool cache : {false, true}) {
                    const std::string name = "SaveDocs/Cache:" + std::to_string(cache ? 1 : 0) +
                                             "/VBuckets:" + std::to_string(vbuckets) +
                                             "/Batch:" + std::to_string(batch) +
                                             "/Sync:" + std::string(to_string(sync));
                    auto* b = benchmark::RegisterBenchmark(name.c_str(), saveDocs,
                                                           Params{cache, vbuckets, batch, sync});
                    b->UseRealTime();
                    if (smoke) {
                        b->Iterations(3);
                    }
                }
            }
        }
    }
    for (std::size_t live : {1000, 10000}) {
        for (std::size_t stale : {30, 90}) {
            const FileShape shape{live, stale};
            const std::string suffix =
                "/Live:" + std::to_string(live) + "/Stale:" + std::to_string(stale);
            using Body = void (*)(benchmark::State&, FileShape);
            for (const auto& [name, fn] :
                 {std::pair<std::string, Body>{"Compact", compact}, {"Scan", scan}}) {
                auto* b = benchmark::RegisterBenchmark((name + suffix).c_str(), fn, shape);
                b->UseRealTime();
                if (smoke) {
                    b->Iterations(2);
                }
            }
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    raiseDescriptorLimit();
    registerAll(takeSmokeFlag(argc, argv));
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
        return 1;
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
