// Races (meant for TSan): saves against compaction and reads of the same
// vBucket, and vBucket delete/recreate against saves, reads and compaction,
// all over a file cache small enough to evict constantly.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "kvexec/storage/kv_store.h"
#include "storage_test_util.h"

namespace kvexec::storage {
namespace {

using test::batchOf;

KVStoreConfig racyConfig(const test::TempDir& dir) {
    auto config = test::configFor(dir, 4);
    config.fileCacheCapacity = 2;
    return config;
}

TEST(ConcurrencyTest, SavesRaceCompactionAndReads) {
    test::TempDir dir;
    constexpr Seqno kMinSeqno = 300;
    std::atomic<Seqno> last{0};
    {
        KVStore store(racyConfig(dir));
        for (Vbid vb = 0; vb < 4; ++vb) {
            store.createVBucket(vb);
        }
        std::atomic<bool> done{false};
        std::atomic<int> compactions{0};
        std::thread writer([&] {
            // At least kMinSeqno seqnos, and on until compaction ran often.
            for (Seqno s = 1; s <= kMinSeqno || compactions < 10; s += 3) {
                store.saveDocs(0, batchOf(s, 3));
                store.saveDocs(1 + s % 3, batchOf(s, 1));  // churns the cache
                last = s + 2;
            }
            done = true;
        });
        std::thread compactor([&] {
            while (!done) {
                EXPECT_FALSE(store.compact(0).aborted);
                ++compactions;
            }
        });
        std::thread reader([&] {
            while (!done) {
                const Seqno high = store.highSeqno(0);
                if (high > 0) {
                    const auto d = store.get(0, test::keyOf(high));
                    ASSERT_TRUE(d);
                    EXPECT_EQ(d->value, test::valueFor(high));
                }
                Seqno previous = 0;
                store.scan(0, high > 30 ? high - 30 : 0, [&](const Document& doc) {
                    EXPECT_GT(doc.seqno, previous);
                    EXPECT_EQ(doc.value, test::valueFor(doc.seqno));
                    previous = doc.seqno;
                    return true;
                });
            }
        });
        writer.join();
        compactor.join();
        reader.join();
        EXPECT_GT(compactions.load(), 0);
        EXPECT_LE(store.fileCacheStats().openHandles, 2u);
    }
    KVStore reopened(racyConfig(dir));
    EXPECT_TRUE(reopened.openErrors().empty());
    EXPECT_TRUE(reopened.recoveryEvents().empty());
    EXPECT_EQ(reopened.highSeqno(0), last.load());
    EXPECT_EQ(reopened.scan(0, 0, [](const Document&) { return true; }), last.load());
}

bool missing(const StorageError& e) {
    return e.kind() == StorageError::Kind::NoSuchVBucket;
}

TEST(ConcurrencyTest, DeleteRecreateRacesSavesReadsAndCompaction) {
    test::TempDir dir;
    KVStore store(racyConfig(dir));
    store.createVBucket(1);
    store.createVBucket(2);
    std::atomic<bool> done{false};
    std::atomic<int> saved{0}, aborted{0};
    std::thread recreator([&] {
        for (int i = 0; i < 150; ++i) {
            store.deleteVBucket(1);
            store.createVBucket(1);
        }
        done = true;
    });
    std::thread writer([&] {
        while (!done) {
            try {
                const Seqno next = store.highSeqno(1) + 1;
                store.saveDocs(1, batchOf(next, 2));
                store.saveDocs(2, batchOf(store.highSeqno(2) + 1, 1));
                ++saved;
            } catch (const StorageError& e) {
                ASSERT_TRUE(missing(e)) << e.what();
            } catch (const std::invalid_argument&) {
                // recreated between highSeqno() and saveDocs(): fine
            }
        }
    });
    std::thread compactor([&] {
        while (!done) {
            try {
                aborted += store.compact(1).aborted ? 1 : 0;
            } catch (const StorageError& e) {
                ASSERT_TRUE(missing(e)) << e.what();
            }
        }
    });
    std::thread reader([&] {
        while (!done) {
            try {
                store.scan(1, 0, [](const Document& d) {
                    EXPECT_EQ(d.value, test::valueFor(d.seqno));
                    return true;
                });
                if (auto d = store.get(1, "k1")) {
                    EXPECT_EQ(d->value, test::valueFor(1));
                }
            } catch (const StorageError& e) {
                ASSERT_TRUE(missing(e)) << e.what();
            }
        }
    });
    recreator.join();
    writer.join();
    compactor.join();
    reader.join();
    EXPECT_GT(saved.load(), 0);
    const auto high = store.highSeqno(1);
    const auto revision = store.revision(1);
    KVStore reopened(racyConfig(dir));
    EXPECT_TRUE(reopened.openErrors().empty());
    EXPECT_EQ(reopened.highSeqno(1), high);
    EXPECT_EQ(reopened.revision(1), revision);
    std::size_t files = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) {
        ++files;
    }
    EXPECT_EQ(files, 2u);  // one file per vBucket, no leftovers
}

TEST(ConcurrencyTest, CacheUnderContention) {
    test::TempDir dir;
    auto ops = posixFileOps();
    std::vector<std::string> paths;
    for (Vbid vb = 0; vb < 8; ++vb) {
        paths.push_back((dir.path() / test::keyOf(vb, "f")).string());
        test::writeFile(paths.back(), "abc");
    }
    FileCache cache(ops, 3);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < 2000; ++i) {
                const Vbid vb = static_cast<Vbid>((i * 7 + t) % 8);
                const auto h = cache.acquire(vb, 1, paths[vb]);
                char c = 0;
                ASSERT_EQ(::pread(h->fd(), &c, 1, 0), 1);
                ASSERT_EQ(c, 'a');
                if (i % 97 == 0) {
                    cache.erase(vb);
                }
            }
        });
    }
    for (auto& t : threads) {
        t.join();
    }
    const auto st = cache.stats();
    EXPECT_LE(st.openHandles, 3u);
    EXPECT_EQ(st.hits + st.misses, 8000u);
}

}  // namespace
}  // namespace kvexec::storage
