// kvexec-server: the engine on the network (memcached binary and text
// protocols, Couchbase's KV extensions). See `kvexec-server --help` and
// the README's "Run the server".
#include <event2/thread.h>

#include <csignal>
#include <iostream>
#include <thread>

#include "kvexec/engine/bucket.h"
#include "server/server.h"

namespace {

using namespace kvexec;

std::unique_ptr<engine::Bucket> openBucket(ExecutorPool& pool, const server::ServerConfig& c) {
    engine::BucketConfig config;
    config.name = c.bucket;
    config.dataDir = c.dataDir;
    config.numVBuckets = c.vbuckets;
    config.numShards = c.shards;
    config.syncMode = c.sync;
    config.fileCacheEnabled = c.fileCache;
    config.maxItemSize = c.maxBodyLength;
    return engine::Bucket::open(pool, std::move(config));
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

}  // namespace

int main(int argc, char** argv) {
    std::signal(SIGPIPE, SIG_IGN);
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
        if (context.config.user) {
            context.credentials.emplace(*context.config.user, *context.config.password);
        }
        auto pool = ExecutorPool::create(context.config.backend);
        auto bucket = openBucket(*pool, context.config);
        waitForWarmup(*bucket);
        context.pool = pool.get();
        context.bucket = bucket.get();
        {
            server::Server server(context);
            server.run(std::cout);
        }
        bucket.reset();  // persists what is dirty, closes files, unregisters
        pool.reset();
    } catch (const std::exception& e) {
        std::cerr << "kvexec-server: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
