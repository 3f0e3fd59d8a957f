// kvexec-server: the engine on the network (memcached binary and text
// protocols, Couchbase's KV extensions). See `kvexec-server --help` and
// the README's "Run the server".
#include <event2/thread.h>
#include <pthread.h>
#include <sys/resource.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <thread>

#include "engine/vbucket_state_file.h"
#include "kvexec/engine/bucket.h"
#include "server/server.h"
#include "server/users_file.h"

namespace {

using namespace kvexec;

std::unique_ptr<engine::Bucket> openBucket(ExecutorPool& pool, const server::ServerConfig& c,
                                           server::ServedBucket& served) {
    engine::BucketConfig config;
    config.name = served.name;
    config.dataDir = server::bucketDataDir(c, served.name);
    config.memoryQuota = c.memoryQuotaMb << 20;
    config.numVBuckets = c.vbuckets;
    config.numShards = c.shards;
    config.syncMode = c.sync;
    config.fileCacheEnabled = c.fileCache;
    config.compactionFragmentationPercent = c.compactionThreshold;
    config.compactionMinFileBytes = c.compactionMinFileBytes;
    config.maxItemSize = c.maxValueBytes;
    if (c.cluster) {
        config.nodeName = c.node;       // the name vBucket chains know this node by
        config.awaitAssignment = true;  // nothing served until the map says so
    }
    config.onReplicaPrepared = [cluster = served.cluster.get()](engine::Vbid vbid,
                                                                engine::Seqno seqno) {
        cluster->replicaPrepared.forward(vbid, seqno);  // to the consumer streaming it
    };
    return engine::Bucket::open(pool, std::move(config));
}

// A single node serves every vBucket: states a cluster left in the data
// directory (replica, dead, an active of a longer chain) go back to active
// on this node alone. A cluster node keeps them until its map arrives.
void activateEveryVBucket(engine::Bucket& bucket, std::size_t vbuckets) {
    const std::vector<std::string> alone = {bucket.config().nodeName};
    std::vector<engine::VBucketStateChange> changes;
    for (std::size_t vb = 0; vb < vbuckets; ++vb) {
        const auto vbid = static_cast<engine::Vbid>(vb);
        const auto held = bucket.vbucketAssignment(vbid);
        if (held &&
            (held->state != engine::VBucketState::Active || held->topology.chain != alone)) {
            changes.push_back({vbid, engine::VBucketState::Active, {}});
        }
    }
    if (!changes.empty() && bucket.setVBucketStates(changes) != engine::Status::Success) {
        throw std::runtime_error("could not make every vBucket active on this single node");
    }
}

// Serving before warmup would answer TempFail to everything: wait for it
// (the main thread only; no front end runs yet).
void waitForWarmup(const engine::Bucket& bucket) {
    for (;;) {
        auto progress = bucket.warmupProgress();
        if (progress.state == engine::WarmupState::Complete) {
            return;
        }
        if (progress.state == engine::WarmupState::Failed) {
            throw std::runtime_error("warmup failed: " + progress.error);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
}

// One bucket keeps its files in --data-dir, several each in --data-dir/NAME
// (server::bucketDataDir). Going from one to several, or back, would
// serve an empty bucket beside the files that hold its documents: refuse
// to start instead, saying where they are.
void checkDataDirLayout(const server::ServerConfig& config) {
    namespace fs = std::filesystem;
    const fs::path dir = config.dataDir;
    const bool single = config.buckets.size() == 1;
    const bool topLevelFiles = fs::exists(dir / engine::kVBucketStateFileName);
    if (!single && topLevelFiles) {
        throw std::runtime_error(
            "--data-dir " + config.dataDir +
            " holds the files of a single bucket; with several buckets each keeps its files "
            "in --data-dir/NAME: move them to the directory of the bucket they belong to");
    }
    if (single && !topLevelFiles && fs::is_directory(dir)) {
        std::string held;
        for (const auto& entry : fs::directory_iterator(dir)) {
            if (entry.is_directory() && fs::exists(entry.path() / engine::kVBucketStateFileName)) {
                held += (held.empty() ? "" : ", ") + entry.path().filename().string();
            }
        }
        if (!held.empty()) {
            throw std::runtime_error("--data-dir " + config.dataDir + " holds the files of " +
                                     held +
                                     " in subdirectories (from a run with several buckets): give "
                                     "every --bucket again, or move one bucket's files up to "
                                     "--data-dir");
        }
    }
}

// Each connection is a descriptor: raise the soft limit towards what
// --max-connections needs, plus a file per vBucket of each bucket and room
// for the listeners, loops, etcd and replication sockets. Beyond the hard
// limit, accept() fails with EMFILE and the server pauses accepting briefly
// (Server::onAcceptError) while the connections in go on; the file caches
// keep at most half the limit open.
void raiseDescriptorLimit(const server::ServerConfig& config) {
    constexpr rlim_t kSockets = 256;  // listeners, event loops, etcd, peers
    rlimit limit{};
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0) {
        return;
    }
    const rlim_t files = static_cast<rlim_t>(config.buckets.size() * config.vbuckets);
    const rlim_t wanted = static_cast<rlim_t>(config.maxConnections) + files + kSockets;
    if (limit.rlim_cur >= wanted) {
        return;
    }
    limit.rlim_cur = limit.rlim_max == RLIM_INFINITY ? wanted : std::min(wanted, limit.rlim_max);
    if (setrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur < wanted) {
        std::cerr << "kvexec-server: warning: the descriptor limit (" << limit.rlim_cur
                  << ") is below --max-connections + a file per vBucket of each bucket + "
                  << kSockets << " (" << wanted << ")\n";
    }
}

}  // namespace

int main(int argc, char** argv) {
    std::signal(SIGPIPE, SIG_IGN);
    // SIGTERM and SIGINT are held from the start, in every thread (threads
    // inherit the mask), and taken by the server's loop once it serves
    // (Server::run): a stop asked during warmup is a graceful stop after
    // it, never a kill.
    sigset_t stopSignals;
    sigemptyset(&stopSignals);
    sigaddset(&stopSignals, SIGTERM);
    sigaddset(&stopSignals, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stopSignals, nullptr);
    evthread_use_pthreads();
    server::ServerContext context;
    try {
        bool help = false;
        context.config =
            server::parseCommandLine(std::vector<std::string>(argv + 1, argv + argc), help);
        if (help) {
            std::cout << server::usage();
            return 0;
        }
    } catch (const std::exception& e) {
        std::cerr << "kvexec-server: " << e.what() << "\n" << server::usage();
        return 2;
    }
    try {
        raiseDescriptorLimit(context.config);
        server::addConfiguredUsers(context.config, context.users);
        checkDataDirLayout(context.config);
        auto pool = ExecutorPool::create(context.config.backend);
        // The buckets share the pool: each is a taskable of its own.
        std::vector<std::unique_ptr<engine::Bucket>> buckets;
        for (const auto& name : context.config.buckets) {
            context.buckets.push_back({name});
            buckets.push_back(openBucket(*pool, context.config, context.buckets.back()));
            context.buckets.back().bucket = buckets.back().get();
        }
        for (auto& bucket : buckets) {
            waitForWarmup(*bucket);
            if (!context.config.cluster) {
                activateEveryVBucket(*bucket, context.config.vbuckets);
            }
        }
        context.pool = pool.get();
        {
            server::Server server(context);
            server.run(std::cout);
        }
        buckets.clear();  // each persists what is dirty, closes files, unregisters
        pool.reset();
    } catch (const std::exception& e) {
        std::cerr << "kvexec-server: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
