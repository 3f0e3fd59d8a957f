// FileCache: LRU bound, stats, revisions, erase, EMFILE handling, disabled mode.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "kvexec/storage/file_cache.h"
#include "kvexec/storage/storage_error.h"
#include "storage_test_util.h"

namespace kvexec::storage {
namespace {

using test::FaultyFileOps;

class FileCacheTest : public ::testing::Test {
  protected:
    std::string makeFile(Vbid vbid, Revision rev) {
        const auto p =
            (dir.path() / (std::to_string(vbid) + ".kv." + std::to_string(rev))).string();
        test::writeFile(p, "x");
        return p;
    }

    test::TempDir dir;
    std::shared_ptr<FaultyFileOps> ops = std::make_shared<FaultyFileOps>();
};

TEST_F(FileCacheTest, ReusesHandleAndCountsHitsAndMisses) {
    FileCache cache(ops, 4);
    const auto path = makeFile(0, 1);
    const auto first = cache.acquire(0, 1, path);
    const auto second = cache.acquire(0, 1, path);
    EXPECT_EQ(first, second);
    const auto st = cache.stats();
    EXPECT_EQ(st.hits, 1u);
    EXPECT_EQ(st.misses, 1u);
    EXPECT_EQ(st.openHandles, 1u);
    EXPECT_EQ(ops->calls(FaultyFileOps::Op::Open), 1u);
}

TEST_F(FileCacheTest, EvictsLeastRecentlyUsedAndClosesIt) {
    FileCache cache(ops, 2);
    std::vector<std::string> paths;
    for (Vbid v = 0; v < 3; ++v) {
        paths.push_back(makeFile(v, 1));
    }
    cache.acquire(0, 1, paths[0]);
    cache.acquire(1, 1, paths[1]);
    cache.acquire(0, 1, paths[0]);  // 1 is now the least recently used
    cache.acquire(2, 1, paths[2]);
    EXPECT_EQ(cache.stats().evictions, 1u);
    EXPECT_EQ(cache.stats().openHandles, 2u);
    EXPECT_EQ(ops->openDescriptors(), 2u);
    cache.acquire(0, 1, paths[0]);
    EXPECT_EQ(cache.stats().hits, 2u);
    cache.acquire(1, 1, paths[1]);  // was evicted: a miss
    EXPECT_EQ(cache.stats().misses, 4u);
}

TEST_F(FileCacheTest, EvictedHandleInUseStaysOpenUntilReleased) {
    FileCache cache(ops, 1);
    const auto a = makeFile(0, 1);
    const auto b = makeFile(1, 1);
    auto held = cache.acquire(0, 1, a);
    cache.acquire(1, 1, b);  // evicts vb 0 from the cache
    EXPECT_EQ(ops->openDescriptors(), 2u);
    char c = 0;
    EXPECT_EQ(::pread(held->fd(), &c, 1, 0), 1);
    held.reset();
    EXPECT_EQ(ops->openDescriptors(), 1u);
}

TEST_F(FileCacheTest, RevisionsAreDistinctAndEraseDropsThem) {
    FileCache cache(ops, 8);
    const auto r1 = makeFile(3, 1);
    const auto r2 = makeFile(3, 2);
    const auto h1 = cache.acquire(3, 1, r1);
    const auto h2 = cache.acquire(3, 2, r2);
    EXPECT_NE(h1, h2);
    EXPECT_EQ(h2->revision(), 2u);
    cache.erase(3, 1);
    EXPECT_EQ(cache.stats().openHandles, 1u);
    EXPECT_NE(cache.acquire(3, 1, r1), h1);  // reopened, not the stale one
    cache.erase(3);
    EXPECT_EQ(cache.stats().openHandles, 0u);
}

TEST_F(FileCacheTest, DisabledOpensAndClosesEveryTime) {
    FileCache cache(ops, 8, false);
    const auto path = makeFile(0, 1);
    for (int i = 0; i < 3; ++i) {
        auto h = cache.acquire(0, 1, path);
        EXPECT_EQ(ops->openDescriptors(), 1u);
    }
    EXPECT_EQ(ops->openDescriptors(), 0u);
    EXPECT_EQ(cache.stats().misses, 3u);
    EXPECT_EQ(cache.stats().hits, 0u);
    EXPECT_EQ(cache.stats().openHandles, 0u);
}

TEST_F(FileCacheTest, EmfileEvictsAndRetriesOnce) {
    FileCache cache(ops, 8);
    ops->setOpenLimit(2);
    const auto a = makeFile(0, 1), b = makeFile(1, 1), c = makeFile(2, 1);
    cache.acquire(0, 1, a);
    cache.acquire(1, 1, b);
    const auto h = cache.acquire(2, 1, c);  // EMFILE, evict vb 0, retry
    EXPECT_EQ(h->vbid(), 2u);
    EXPECT_EQ(cache.stats().evictions, 1u);
    EXPECT_EQ(ops->openDescriptors(), 2u);
}

TEST_F(FileCacheTest, EmfileWithNothingToFreeIsAClearError) {
    FileCache cache(ops, 8);
    ops->setOpenLimit(1);
    const auto a = makeFile(0, 1), b = makeFile(1, 1);
    const auto held = cache.acquire(0, 1, a);  // in use: eviction frees nothing
    try {
        cache.acquire(1, 1, b);
        FAIL() << "expected OutOfFileHandles";
    } catch (const StorageError& e) {
        EXPECT_EQ(e.kind(), StorageError::Kind::OutOfFileHandles);
        EXPECT_EQ(e.sysError(), EMFILE);
        EXPECT_NE(std::string(e.what()).find(b), std::string::npos) << e.what();
    }
}

TEST_F(FileCacheTest, OpenErrorNamesTheFile) {
    FileCache cache(ops, 8);
    const auto missing = (dir.path() / "9.kv.1").string();
    try {
        cache.acquire(9, 1, missing);
        FAIL();
    } catch (const StorageError& e) {
        EXPECT_EQ(e.kind(), StorageError::Kind::Io);
        EXPECT_EQ(e.sysError(), ENOENT);
        EXPECT_EQ(e.path(), missing);
    }
}

TEST(FileCacheDefaults, CapacityComesFromTheDescriptorLimit) {
    rlimit limit{};
    ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &limit), 0);
    EXPECT_EQ(FileCache::defaultCapacity(), std::max<std::size_t>(1, limit.rlim_cur / 2));
}

}  // namespace
}  // namespace kvexec::storage
