// Document locks (getLocked / unlock) and preserved expiry, on the Manual
// backend with the fixture's clock: what a Couchbase client relies on.
#include <gtest/gtest.h>

#include "engine_test_support.h"
#include "manual_bucket_fixture.h"

namespace kvexec::engine {
namespace {

using namespace std::chrono_literals;
using test::getNow;
using test::setRequest;
using test::storeNow;

class DocumentLocksTest : public ManualBucketTest {
  protected:
    GetResult lock(const std::string& key, std::chrono::seconds time = 0s) {
        GetResult out;
        bucket->getLocked(0, key, time, [&](const GetResult& r) { out = r; });
        return out;
    }
    Status unlock(const std::string& key, std::uint64_t cas) {
        Status out = Status::Internal;
        bucket->unlock(0, key, cas, [&](Status s) { out = s; });
        return out;
    }
    Status set(const std::string& key, const std::string& value, std::uint64_t cas = 0) {
        auto request = setRequest(0, key, value);
        request.cas = cas;
        return storeNow(*bucket, request)->status;
    }
    Status remove(const std::string& key, std::uint64_t cas = 0) {
        RemoveRequest request;
        request.key = key;
        request.cas = cas;
        Status out = Status::Internal;
        bucket->remove(request, [&](const MutationResult& r) { out = r.status; });
        return out;
    }
};

TEST_F(DocumentLocksTest, LockReturnsTheDocumentWithANewCasAndBlocksOtherWriters) {
    const auto stored = storeNow(*bucket, setRequest(0, "doc", "v1"));
    const auto locked = lock("doc");
    ASSERT_EQ(locked.status, Status::Success);
    EXPECT_EQ(locked.item.value, "v1");
    EXPECT_GT(locked.item.meta.cas, stored->cas);

    EXPECT_EQ(set("doc", "other"), Status::Locked);
    EXPECT_EQ(set("doc", "stale", stored->cas), Status::Locked);
    EXPECT_EQ(remove("doc"), Status::Locked);
    GetResult touched;
    bucket->touch(0, "doc", now + 100, [&](const GetResult& r) { touched = r; });
    EXPECT_EQ(touched.status, Status::Locked);
    EXPECT_EQ(lock("doc").status, Status::Locked);

    const auto read = getNow(*bucket, 0, "doc");
    EXPECT_EQ(read.item.value, "v1");
    EXPECT_EQ(read.item.meta.cas, kLockedCas);
}

TEST_F(DocumentLocksTest, AWriteWithTheLocksCasSucceedsAndReleasesIt) {
    storeNow(*bucket, setRequest(0, "doc", "v1"));
    const auto locked = lock("doc");
    EXPECT_EQ(set("doc", "v2", locked.item.meta.cas), Status::Success);
    EXPECT_EQ(set("doc", "v3"), Status::Success);
    EXPECT_EQ(getNow(*bucket, 0, "doc").item.value, "v3");
    EXPECT_NE(getNow(*bucket, 0, "doc").item.meta.cas, kLockedCas);
}

TEST_F(DocumentLocksTest, UnlockNeedsTheLocksCas) {
    EXPECT_EQ(unlock("missing", 1), Status::KeyNotFound);
    const auto stored = storeNow(*bucket, setRequest(0, "doc", "v1"));
    EXPECT_EQ(unlock("doc", stored->cas), Status::NotLocked);
    const auto locked = lock("doc");
    EXPECT_EQ(unlock("doc", stored->cas), Status::Locked);
    EXPECT_EQ(set("doc", "blocked"), Status::Locked);
    EXPECT_EQ(unlock("doc", locked.item.meta.cas), Status::Success);
    EXPECT_EQ(set("doc", "free"), Status::Success);
    EXPECT_EQ(unlock("doc", locked.item.meta.cas), Status::NotLocked);
}

TEST_F(DocumentLocksTest, ALockLapsesAfterItsTimeAndZeroOrTooLongMeansTheDefault) {
    storeNow(*bucket, setRequest(0, "short", "v"));
    storeNow(*bucket, setRequest(0, "default", "v"));
    storeNow(*bucket, setRequest(0, "too-long", "v"));
    lock("short", 5s);
    lock("default", 0s);
    lock("too-long", 3600s);  // over the 30 s maximum: the 15 s default
    now += 4;
    EXPECT_EQ(set("short", "x"), Status::Locked);
    now += 1;
    EXPECT_EQ(set("short", "x"), Status::Success);
    now += 9;  // 14 s in
    EXPECT_EQ(set("default", "x"), Status::Locked);
    EXPECT_EQ(set("too-long", "x"), Status::Locked);
    now += 1;
    EXPECT_EQ(set("default", "x"), Status::Success);
    EXPECT_EQ(set("too-long", "x"), Status::Success);
}

TEST_F(DocumentLocksTest, LockOfAMissingOrExpiredDocumentIsKeyNotFound) {
    EXPECT_EQ(lock("missing").status, Status::KeyNotFound);
    auto request = setRequest(0, "expiring", "v");
    request.expiry = now + 2;
    storeNow(*bucket, request);
    now += 2;
    EXPECT_EQ(lock("expiring").status, Status::KeyNotFound);
}

TEST_F(DocumentLocksTest, ARestartReleasesLocks) {
    storeNow(*bucket, setRequest(0, "doc", "v1"));
    ASSERT_EQ(lock("doc").status, Status::Success);
    settle();
    reopen();
    EXPECT_EQ(set("doc", "v2"), Status::Success);
}

TEST_F(DocumentLocksTest, PreserveExpiryKeepsTheExistingExpiryOnSetAndReplace) {
    auto first = setRequest(0, "doc", "v1");
    first.expiry = now + 100;
    storeNow(*bucket, first);

    auto keep = setRequest(0, "doc", "v2");
    keep.preserveExpiry = true;
    keep.expiry = now + 5000;  // ignored: the document exists
    ASSERT_EQ(storeNow(*bucket, keep)->status, Status::Success);
    EXPECT_EQ(getNow(*bucket, 0, "doc").item.meta.expiry, now + 100);

    keep.operation = StoreOperation::Replace;
    keep.expiry = 0;
    ASSERT_EQ(storeNow(*bucket, keep)->status, Status::Success);
    EXPECT_EQ(getNow(*bucket, 0, "doc").item.meta.expiry, now + 100);

    auto plain = setRequest(0, "doc", "v3");  // without the flag: the request's expiry
    storeNow(*bucket, plain);
    EXPECT_EQ(getNow(*bucket, 0, "doc").item.meta.expiry, 0u);

    auto created = setRequest(0, "new", "v");  // a new document takes the request's
    created.preserveExpiry = true;
    created.expiry = now + 7;
    storeNow(*bucket, created);
    EXPECT_EQ(getNow(*bucket, 0, "new").item.meta.expiry, now + 7);
}

}  // namespace
}  // namespace kvexec::engine
