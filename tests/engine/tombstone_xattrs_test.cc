// Tombstones that keep xattrs (operations.h: StoreRequest::accessDeleted and
// storeDeleted; bucket.h: getIncludingDeleted): a deletion keeps the system
// xattrs, a tombstone can be written with xattrs of its own (transactions
// stage an insert so) and revived with its CAS, and all of it survives a
// restart.
#include <gtest/gtest.h>

#include "engine_test_support.h"
#include "kvexec/engine/xattrs.h"
#include "manual_bucket_fixture.h"
#include "xattr_blob.h"

namespace kvexec::engine {
namespace {

using test::getNow;
using test::setRequest;
using test::storeNow;

std::string blobOf(std::initializer_list<std::pair<std::string, std::string>> pairs) {
    return test::xattrBlobOf(pairs);
}

GetResult getIncludingDeleted(Bucket& bucket, const std::string& key) {
    GetResult out{Status::Internal, {}};
    bucket.getIncludingDeleted(0, DocKey{key}, [&](const GetResult& r) { out = r; });
    return out;
}

MutationResult removeNow(Bucket& bucket, const std::string& key, std::uint64_t cas = 0) {
    MutationResult out{Status::Internal, 0, {}};
    bucket.remove(RemoveRequest{0, key, cas, {}}, [&](const MutationResult& r) { out = r; });
    return out;
}

// A tombstone of `key` holding `xattrs`, written as transactions stage an
// insert: add, as deleted, where no document is.
StoreRequest stagedInsert(const std::string& key, std::string xattrs) {
    auto request = setRequest(0, key, std::move(xattrs));
    request.operation = StoreOperation::Add;
    request.datatype = kDatatypeXattr;
    request.accessDeleted = true;
    request.storeDeleted = true;
    request.replacesXattrs = true;
    return request;
}

TEST(SystemXattrs, OnlyKeysStartingWithAnUnderscoreAreKept) {
    const std::string both = blobOf({{"_sync", "1"}, {"txn", "{}"}, {"_meta", "2"}});
    EXPECT_EQ(systemXattrs(both + "body", kDatatypeXattr | kDatatypeJson),
              blobOf({{"_sync", "1"}, {"_meta", "2"}}));
    EXPECT_EQ(systemXattrs(blobOf({{"txn", "{}"}}), kDatatypeXattr), "");
    EXPECT_EQ(systemXattrs(both, kDatatypeJson), "") << "no XATTR bit, no blob";
    std::string cut = both;
    cut[7] = 100;  // the first pair claims more bytes than the blob has
    EXPECT_EQ(systemXattrs(cut, kDatatypeXattr), "");
}

class TombstoneXattrsTest : public ManualBucketTest {};

TEST_F(TombstoneXattrsTest, ADeletionKeepsTheSystemXattrsInTheTombstone) {
    auto request = setRequest(0, "doc", blobOf({{"_sys", "1"}, {"user", "2"}}) + "{}");
    request.datatype = kDatatypeXattr | kDatatypeJson;
    ASSERT_EQ(storeNow(*bucket, request)->status, Status::Success);
    ASSERT_EQ(removeNow(*bucket, "doc").status, Status::Success);
    EXPECT_EQ(getNow(*bucket, 0, "doc").status, Status::KeyNotFound);
    const auto tombstone = getIncludingDeleted(*bucket, "doc");
    ASSERT_EQ(tombstone.status, Status::Success);
    EXPECT_TRUE(tombstone.item.meta.deleted);
    EXPECT_EQ(tombstone.item.value, blobOf({{"_sys", "1"}}));
    EXPECT_EQ(tombstone.item.meta.datatype, kDatatypeXattr);
    // A document with no system xattrs leaves an empty tombstone.
    ASSERT_EQ(storeNow(*bucket, setRequest(0, "plain", "v"))->status, Status::Success);
    ASSERT_EQ(removeNow(*bucket, "plain").status, Status::Success);
    EXPECT_EQ(getIncludingDeleted(*bucket, "plain").item.value, "");
    EXPECT_EQ(getIncludingDeleted(*bucket, "plain").item.meta.datatype, 0);
    EXPECT_EQ(getIncludingDeleted(*bucket, "never").status, Status::KeyNotFound);
}

// An expiry, found by a read or by the pager, leaves the tombstone a
// deletion leaves: the system xattrs alone, and a datatype that says so.
TEST_F(TombstoneXattrsTest, AnExpiryKeepsTheSystemXattrsInTheTombstone) {
    for (const char* key : {"read", "paged"}) {
        auto request = setRequest(0, key, blobOf({{"_sys", "1"}, {"user", "2"}}) + "{}");
        request.datatype = kDatatypeXattr | kDatatypeJson;
        request.expiry = now + 10;
        ASSERT_EQ(storeNow(*bucket, request)->status, Status::Success);
    }
    auto plain = setRequest(0, "plain", "{}");
    plain.datatype = kDatatypeJson;
    plain.expiry = now + 10;
    ASSERT_EQ(storeNow(*bucket, plain)->status, Status::Success);
    now += 11;
    EXPECT_EQ(getNow(*bucket, 0, "read").status, Status::KeyNotFound);
    EXPECT_NE(pool.runNext(TaskType::NonIO), 0u);  // the pager expires the others
    EXPECT_EQ(bucket->stats().expired, 3u);
    for (const char* key : {"read", "paged"}) {
        const auto tombstone = getIncludingDeleted(*bucket, key);
        ASSERT_EQ(tombstone.status, Status::Success) << key;
        EXPECT_TRUE(tombstone.item.meta.deleted) << key;
        EXPECT_EQ(tombstone.item.value, blobOf({{"_sys", "1"}})) << key;
        EXPECT_EQ(tombstone.item.meta.datatype, kDatatypeXattr) << key;
    }
    const auto empty = getIncludingDeleted(*bucket, "plain");
    EXPECT_EQ(empty.item.value, "");
    EXPECT_EQ(empty.item.meta.datatype, 0) << "no JSON bit on an empty tombstone";
    // Persisted so, too.
    settle();
    reopen();
    EXPECT_EQ(getIncludingDeleted(*bucket, "paged").item.value, blobOf({{"_sys", "1"}}));
}

TEST_F(TombstoneXattrsTest, AStagedTombstoneIsInvisibleToReadsAndToAPlainAdd) {
    const auto staged = storeNow(*bucket, stagedInsert("doc", blobOf({{"txn", "{}"}})));
    ASSERT_EQ(staged->status, Status::Success);
    EXPECT_EQ(getNow(*bucket, 0, "doc").status, Status::KeyNotFound);
    const auto tombstone = getIncludingDeleted(*bucket, "doc");
    ASSERT_EQ(tombstone.status, Status::Success);
    EXPECT_TRUE(tombstone.item.meta.deleted);
    EXPECT_EQ(tombstone.item.meta.cas, staged->cas);
    EXPECT_EQ(tombstone.item.value, blobOf({{"txn", "{}"}}));
    // Staging again where a tombstone stands is refused: transactions then
    // read it and replace it with its CAS.
    EXPECT_EQ(storeNow(*bucket, stagedInsert("doc", blobOf({{"txn", "2"}})))->status,
              Status::KeyExists);
    // Writers that do not ask for tombstones see no document.
    auto replace = setRequest(0, "doc", "v");
    replace.operation = StoreOperation::Replace;
    EXPECT_EQ(storeNow(*bucket, replace)->status, Status::KeyNotFound);
    auto add = setRequest(0, "doc", "fresh");
    add.operation = StoreOperation::Add;
    ASSERT_EQ(storeNow(*bucket, add)->status, Status::Success);
    EXPECT_EQ(getNow(*bucket, 0, "doc").item.value, "fresh") << "no staged xattrs carried over";
}

TEST_F(TombstoneXattrsTest, ATombstoneIsReplacedOrRevivedOnlyWithItsCas) {
    const auto staged = storeNow(*bucket, stagedInsert("doc", blobOf({{"txn", "1"}})));
    ASSERT_EQ(staged->status, Status::Success);
    auto restage = stagedInsert("doc", blobOf({{"txn", "2"}}));
    restage.operation = StoreOperation::Replace;
    restage.cas = staged->cas + 1;
    EXPECT_EQ(storeNow(*bucket, restage)->status, Status::KeyExists);
    restage.cas = staged->cas;
    const auto restaged = storeNow(*bucket, restage);
    ASSERT_EQ(restaged->status, Status::Success);
    EXPECT_EQ(getIncludingDeleted(*bucket, "doc").item.value, blobOf({{"txn", "2"}}));

    // Revive: the body in, the staged xattr out (no XATTR bit: none left).
    auto revive = setRequest(0, "doc", "{\"a\":1}");
    revive.operation = StoreOperation::Replace;
    revive.datatype = kDatatypeJson;
    revive.accessDeleted = true;
    revive.replacesXattrs = true;
    revive.cas = restaged->cas;
    const auto revived = storeNow(*bucket, revive);
    ASSERT_EQ(revived->status, Status::Success);
    const auto live = getNow(*bucket, 0, "doc");
    ASSERT_EQ(live.status, Status::Success);
    EXPECT_EQ(live.item.value, "{\"a\":1}");
    EXPECT_EQ(live.item.meta.datatype, kDatatypeJson);
    EXPECT_FALSE(live.item.meta.deleted);
}

TEST_F(TombstoneXattrsTest, WhatATombstoneMayHoldAndWhoMayAskForOne) {
    auto withBody = stagedInsert("doc", blobOf({{"txn", "1"}}) + "body");
    EXPECT_EQ(storeNow(*bucket, withBody)->status, Status::Invalid);
    auto append = setRequest(0, "doc", "x");
    append.operation = StoreOperation::Append;
    append.accessDeleted = true;
    EXPECT_EQ(storeNow(*bucket, append)->status, Status::Invalid);
    EXPECT_EQ(getIncludingDeleted(*bucket, "doc").status, Status::KeyNotFound);
}

TEST_F(TombstoneXattrsTest, AWriteThatReplacesTheXattrsCanDropTheLastOne) {
    auto request = setRequest(0, "doc", blobOf({{"txn", "1"}}) + "{}");
    request.datatype = kDatatypeXattr | kDatatypeJson;
    ASSERT_EQ(storeNow(*bucket, request)->status, Status::Success);
    auto plainSet = setRequest(0, "doc", "{\"b\":2}");
    plainSet.datatype = kDatatypeJson;
    ASSERT_EQ(storeNow(*bucket, plainSet)->status, Status::Success);
    EXPECT_EQ(xattrBlob(getNow(*bucket, 0, "doc").item.value, kDatatypeXattr),
              blobOf({{"txn", "1"}}))
        << "a plain set keeps them";
    plainSet.replacesXattrs = true;
    ASSERT_EQ(storeNow(*bucket, plainSet)->status, Status::Success);
    const auto got = getNow(*bucket, 0, "doc");
    EXPECT_EQ(got.item.value, "{\"b\":2}");
    EXPECT_EQ(got.item.meta.datatype, kDatatypeJson);
}

TEST_F(TombstoneXattrsTest, TombstonesKeepTheirXattrsAcrossARestart) {
    ASSERT_EQ(storeNow(*bucket, stagedInsert("staged", blobOf({{"txn", "1"}})))->status,
              Status::Success);
    auto request = setRequest(0, "deleted", blobOf({{"_sys", "1"}}) + "v");
    request.datatype = kDatatypeXattr;
    ASSERT_EQ(storeNow(*bucket, request)->status, Status::Success);
    ASSERT_EQ(removeNow(*bucket, "deleted").status, Status::Success);
    settle();
    reopen();
    const auto staged = getIncludingDeleted(*bucket, "staged");
    ASSERT_EQ(staged.status, Status::Success);
    EXPECT_TRUE(staged.item.meta.deleted);
    EXPECT_EQ(staged.item.value, blobOf({{"txn", "1"}}));
    EXPECT_EQ(getIncludingDeleted(*bucket, "deleted").item.value, blobOf({{"_sys", "1"}}));
    EXPECT_EQ(getNow(*bucket, 0, "staged").status, Status::KeyNotFound);
}

}  // namespace
}  // namespace kvexec::engine
