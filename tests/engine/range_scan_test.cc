// Range scans (kvexec/engine/range_scan.h): what a scan returns and in
// which order, its limits, its snapshot requirements, and when it ends.
#include <gtest/gtest.h>

#include <chrono>

#include "engine/range_scans.h"
#include "engine_test_support.h"
#include "kvexec/engine/xattrs.h"
#include "manual_bucket_fixture.h"

namespace kvexec::engine {
namespace {

using test::setRequest;
using test::storeNow;

constexpr CollectionId kFirstCollection = 8;  // collections.h: ids start at 8

std::string numbered(int i) {
    std::string key(1, 'k');
    key += std::to_string(i);
    return key;
}

class RangeScanTest : public ManualBucketTest {
  protected:
    void SetUp() override {
        config.steadyTime = [this] { return steady; };
        config.maxRangeScans = 4;
        config.rangeScanIdleTimeout = std::chrono::seconds(60);
        ManualBucketTest::SetUp();
    }

    MutationResult put(const std::string& key, const std::string& value,
                       CollectionId collection = kDefaultCollection) {
        auto request = setRequest(0, key, value);
        request.collection = collection;
        return *storeNow(*bucket, request);
    }

    void remove(const std::string& key) {
        bucket->remove(RemoveRequest{0, key, 0, {}},
                       [](const MutationResult& r) { EXPECT_EQ(r.status, Status::Success); });
    }

    static RangeScanRequest rangeOf(std::string start, std::string end,
                                    CollectionId collection = kDefaultCollection) {
        RangeScanRequest request;
        request.collection = collection;
        request.keys = KeyRange{std::move(start), false, std::move(end), false};
        return request;
    }

    // A scan of "a" to "z" that waits up to 5 s for `written` to be
    // persisted.
    RangeScanRequest waitingFor(const MutationResult& written) {
        auto request = rangeOf("a", "z");
        request.snapshot = SnapshotRequirements{bucket->failoverLog(0)->uuid(), written.token.seqno,
                                                false, std::chrono::seconds(5)};
        return request;
    }

    RangeScanId create(const RangeScanRequest& request) {
        const auto created = bucket->createRangeScan(request);
        EXPECT_EQ(created.status, Status::Success);
        return created.id;
    }

    // Continues until the scan completes; the keys in the order returned.
    std::vector<std::string> drain(const RangeScanId& id, RangeScanLimits limits = {}) {
        std::vector<std::string> keys;
        for (int batch = 0; batch < 1000; ++batch) {
            const auto result = bucket->continueRangeScan(0, id, limits);
            EXPECT_EQ(result.status, Status::Success);
            for (const auto& item : result.items) {
                keys.push_back(item.key);
            }
            if (result.complete || result.status != Status::Success) {
                return keys;
            }
        }
        ADD_FAILURE() << "the scan never completed";
        return keys;
    }

    Clock::time_point steady = Clock::now();
};

TEST_F(RangeScanTest, ReturnsTheKeysInRangeInKeyOrderWithTheirDocuments) {
    for (const char* key : {"user3", "apple", "user1", "user10", "user2", "zebra"}) {
        put(key, std::string("v-") + key);
    }
    const auto id = create(rangeOf("user", "user\xff"));
    const auto batch = bucket->continueRangeScan(0, id, {});
    ASSERT_EQ(batch.status, Status::Success);
    EXPECT_TRUE(batch.complete);
    std::vector<std::string> keys;
    for (const auto& item : batch.items) {
        keys.push_back(item.key);
        EXPECT_EQ(item.value, "v-" + item.key);
        EXPECT_NE(item.meta.cas, 0u);
        EXPECT_NE(item.meta.seqno, 0u);
    }
    EXPECT_EQ(keys, (std::vector<std::string>{"user1", "user10", "user2", "user3"}));
    EXPECT_EQ(bucket->continueRangeScan(0, id, {}).status, Status::KeyNotFound)
        << "a completed scan is closed";
}

TEST_F(RangeScanTest, EndsAreInclusiveUnlessMarkedExclusive) {
    for (const char* key : {"a", "b", "c", "d"}) {
        put(key, "x");
    }
    EXPECT_EQ(drain(create(rangeOf("b", "d"))), (std::vector<std::string>{"b", "c", "d"}));
    auto request = rangeOf("b", "d");
    std::get<KeyRange>(request.keys).startExclusive = true;
    std::get<KeyRange>(request.keys).endExclusive = true;
    EXPECT_EQ(drain(create(request)), (std::vector<std::string>{"c"}));
}

TEST_F(RangeScanTest, KeysCompareAsUnsignedBytes) {
    put("k\x7f", "x");
    put("k\x80", "x");
    put("k\xff", "x");
    EXPECT_EQ(drain(create(rangeOf("k\x80", "k\xff"))),
              (std::vector<std::string>{"k\x80", "k\xff"}));
}

TEST_F(RangeScanTest, ScansOnlyItsCollection) {
    ASSERT_EQ(bucket->createCollection("_default", "c", 0).outcome, ManifestOutcome::Success);
    put("a", "default");
    put("b", "in c", kFirstCollection);
    put("c", "in c", kFirstCollection);
    const auto id = create(rangeOf("", "\xff", kFirstCollection));
    const auto batch = bucket->continueRangeScan(0, id, {});
    ASSERT_EQ(batch.items.size(), 2u);
    EXPECT_EQ(batch.items[0].key, "b");
    EXPECT_EQ(batch.items[0].collection, kFirstCollection);
    EXPECT_EQ(drain(create(rangeOf("", "\xff"))), (std::vector<std::string>{"a"}));
}

TEST_F(RangeScanTest, AnEmptyRangeOpensNoScan) {
    put("a", "x");
    EXPECT_EQ(bucket->createRangeScan(rangeOf("b", "z")).status, Status::KeyNotFound);
    EXPECT_EQ(bucket->createRangeScan(rangeOf("z", "a")).status, Status::KeyNotFound);
    remove("a");
    EXPECT_EQ(bucket->createRangeScan(rangeOf("a", "a")).status, Status::KeyNotFound)
        << "a tombstone is not a key to scan";
}

TEST_F(RangeScanTest, AKeyOnlyScanCarriesNoValues) {
    put("a", "value");
    auto request = rangeOf("a", "a");
    request.keyOnly = true;
    const auto batch = bucket->continueRangeScan(0, create(request), {});
    ASSERT_EQ(batch.items.size(), 1u);
    EXPECT_EQ(batch.items[0].key, "a");
    EXPECT_TRUE(batch.items[0].value.empty());
}

TEST_F(RangeScanTest, XattrsAreReturnedOnlyWhenAskedFor) {
    // One pair "a" = "1": u32 total, u32 pair length, "a\0" "1\0".
    const std::string blob(
        "\0\0\0\x08\0\0\0\x04"
        "a\0"
        "1\0",
        12);
    auto request = setRequest(0, "doc", blob + "{}");
    request.datatype = kDatatypeXattr | 0x01;
    ASSERT_EQ(storeNow(*bucket, request)->status, Status::Success);
    auto scan = rangeOf("doc", "doc");
    auto plain = bucket->continueRangeScan(0, create(scan), {});
    ASSERT_EQ(plain.items.size(), 1u);
    EXPECT_EQ(plain.items[0].value, "{}");
    EXPECT_EQ(plain.items[0].meta.datatype, 0x01);
    scan.includeXattrs = true;
    auto withXattrs = bucket->continueRangeScan(0, create(scan), {});
    ASSERT_EQ(withXattrs.items.size(), 1u);
    EXPECT_EQ(withXattrs.items[0].value, blob + "{}");
    EXPECT_EQ(withXattrs.items[0].meta.datatype, kDatatypeXattr | 0x01);
    scan.keyOnly = true;
    EXPECT_EQ(bucket->createRangeScan(scan).status, Status::Invalid);
}

TEST_F(RangeScanTest, AContinueStopsAtItsItemAndByteLimitsButReturnsAtLeastOne) {
    for (int i = 0; i < 10; ++i) {
        put(numbered(i), std::string(100, 'x'));
    }
    const auto id = create(rangeOf("k", "l"));
    auto first = bucket->continueRangeScan(0, id, RangeScanLimits{3, {}, 0});
    EXPECT_EQ(first.items.size(), 3u);
    EXPECT_FALSE(first.complete);
    auto second = bucket->continueRangeScan(0, id, RangeScanLimits{0, {}, 1});
    ASSERT_EQ(second.items.size(), 1u) << "a byte limit below one document still returns it";
    EXPECT_EQ(second.items[0].key, "k3");
    EXPECT_EQ(drain(id, RangeScanLimits{4, {}, 0}).size(), 6u);
}

TEST_F(RangeScanTest, ContinuesReadTheDocumentsAsTheyAreThen) {
    for (const char* key : {"a", "b", "c"}) {
        put(key, "old");
    }
    const auto id = create(rangeOf("a", "z"));
    remove("a");
    put("b", "new");
    put("bb", "created after the scan");
    const auto batch = bucket->continueRangeScan(0, id, {});
    ASSERT_EQ(batch.items.size(), 2u);
    EXPECT_EQ(batch.items[0].key, "b");
    EXPECT_EQ(batch.items[0].value, "new");
    EXPECT_EQ(batch.items[1].key, "c");
    EXPECT_TRUE(batch.complete);
}

TEST_F(RangeScanTest, ASampleKeepsAboutItsSizeAndTheSameSeedKeepsTheSameKeys) {
    for (int i = 0; i < 1000; ++i) {
        put(numbered(i), "x");
    }
    RangeScanRequest request;
    request.keyOnly = true;
    request.keys = KeySample{42, 100};
    const auto first = drain(create(request));
    EXPECT_GT(first.size(), 50u);
    EXPECT_LT(first.size(), 150u);
    EXPECT_TRUE(std::is_sorted(first.begin(), first.end()));
    EXPECT_EQ(drain(create(request)), first);
    request.keys = KeySample{42, 5000};
    EXPECT_EQ(drain(create(request)).size(), 1000u) << "more samples than keys: all of them";
    request.keys = KeySample{42, 0};
    EXPECT_EQ(bucket->createRangeScan(request).status, Status::Invalid);
}

TEST_F(RangeScanTest, SnapshotRequirementsAreCheckedAtCreate) {
    const auto written = put("a", "x");
    auto request = rangeOf("a", "z");
    const auto uuid = bucket->failoverLog(0)->uuid();
    request.snapshot = SnapshotRequirements{uuid + 1, written.token.seqno, false, {}};
    EXPECT_EQ(bucket->createRangeScan(request).status, Status::VbUuidNotEqual);
    request.snapshot = SnapshotRequirements{uuid, written.token.seqno, false, {}};
    EXPECT_EQ(bucket->createRangeScan(request).status, Status::TempFail)
        << "the seqno is not persisted yet";
    settle();
    EXPECT_EQ(bucket->createRangeScan(request).status, Status::Success);
    request.snapshot->seqnoExists = true;
    EXPECT_EQ(bucket->createRangeScan(request).status, Status::Success);
    put("a", "overwritten");
    settle();
    EXPECT_EQ(bucket->createRangeScan(request).status, Status::NotStored)
        << "no document holds the seqno any more";
}

TEST_F(RangeScanTest, ACreateWaitsForItsSeqnoToBePersistedUpToItsTimeout) {
    auto request = waitingFor(put("a", "x"));
    std::optional<RangeScanCreateResult> created;
    bucket->createRangeScan(request, [&](const RangeScanCreateResult& r) { created = r; });
    EXPECT_FALSE(created.has_value()) << "waits: the seqno is not persisted yet";
    settle();
    ASSERT_TRUE(created.has_value()) << "the flusher that persisted it ran the create";
    EXPECT_EQ(created->status, Status::Success);

    const auto later = put("b", "y");
    request.snapshot->seqno = later.token.seqno;
    created.reset();
    bucket->createRangeScan(request, [&](const RangeScanCreateResult& r) { created = r; });
    EXPECT_FALSE(created.has_value());
    steady += std::chrono::seconds(5);
    pool.runNext(TaskType::NonIO);  // the vBucket's timeout task, due first
    ASSERT_TRUE(created.has_value()) << "answered at its deadline";
    EXPECT_EQ(created->status, Status::TempFail);

    request.snapshot->vbucketUuid += 1;
    created.reset();
    bucket->createRangeScan(request, [&](const RangeScanCreateResult& r) { created = r; });
    ASSERT_TRUE(created.has_value()) << "another branch: no wait";
    EXPECT_EQ(created->status, Status::VbUuidNotEqual);
}

TEST_F(RangeScanTest, ABucketClosedUnderAWaitingCreateAnswersIt) {
    auto request = waitingFor(put("a", "x"));
    std::optional<RangeScanCreateResult> created;
    bucket->createRangeScan(request, [&](const RangeScanCreateResult& r) { created = r; });
    ASSERT_FALSE(created.has_value());
    bucket.reset();
    ASSERT_TRUE(created.has_value());
    EXPECT_EQ(created->status, Status::TempFail);
}

TEST_F(RangeScanTest, ACancelledScanIsGone) {
    put("a", "x");
    const auto id = create(rangeOf("a", "a"));
    EXPECT_EQ(bucket->cancelRangeScan(1, id), Status::KeyNotFound) << "another vBucket's id";
    EXPECT_EQ(bucket->cancelRangeScan(0, id), Status::Success);
    EXPECT_EQ(bucket->cancelRangeScan(0, id), Status::KeyNotFound);
    EXPECT_EQ(bucket->continueRangeScan(0, id, {}).status, Status::KeyNotFound);
}

TEST_F(RangeScanTest, OpenScansAreBoundedAndIdleOnesClose) {
    put("a", "x");
    for (std::size_t i = 0; i < config.maxRangeScans; ++i) {
        create(rangeOf("a", "a"));
    }
    EXPECT_EQ(bucket->createRangeScan(rangeOf("a", "a")).status, Status::Busy);
    steady += config.rangeScanIdleTimeout;
    EXPECT_EQ(bucket->createRangeScan(rangeOf("a", "a")).status, Status::Success)
        << "the idle ones were closed";
}

TEST_F(RangeScanTest, AScanEndsWhenItsVBucketStopsBeingActiveHere) {
    put("a", "x");
    put("b", "x");
    const auto id = create(rangeOf("a", "b"));
    ASSERT_EQ(bucket->setVBucketState(0, VBucketState::Replica), Status::Success);
    EXPECT_EQ(bucket->continueRangeScan(0, id, {}).status, Status::NotMyVbucket);
    ASSERT_EQ(bucket->setVBucketState(0, VBucketState::Active), Status::Success);
    EXPECT_EQ(bucket->continueRangeScan(0, id, {}).status, Status::KeyNotFound);
    EXPECT_EQ(bucket->createRangeScan(rangeOf("a", "b", 99)).status, Status::UnknownCollection);
}

TEST_F(RangeScanTest, AScanDoesNotSurviveItsVBucketBecomingActiveAgain) {
    put("a", "x");
    const auto id = create(rangeOf("a", "a"));
    ASSERT_EQ(bucket->setVBucketState(0, VBucketState::Replica), Status::Success);
    ASSERT_EQ(bucket->setVBucketState(0, VBucketState::Active), Status::Success);
    EXPECT_EQ(bucket->continueRangeScan(0, id, {}).status, Status::NotMyVbucket)
        << "its keys were listed on a history the vBucket may have left";
    EXPECT_EQ(bucket->stats().rangeScansOpen, 0u);
}

TEST_F(RangeScanTest, TheExpiryPagerClosesIdleScans) {
    put("a", "x");
    create(rangeOf("a", "a"));
    EXPECT_EQ(bucket->stats().rangeScansOpen, 1u);
    steady += config.rangeScanIdleTimeout;
    ASSERT_NE(pool.runNext(TaskType::NonIO), 0u);  // the pager, the one NonIO task due
    EXPECT_EQ(bucket->stats().rangeScansOpen, 0u);
}

TEST_F(RangeScanTest, AScanEndsWhenItsCollectionIsDropped) {
    ASSERT_EQ(bucket->createCollection("_default", "c", 0).outcome, ManifestOutcome::Success);
    put("a", "x", kFirstCollection);
    const auto id = create(rangeOf("a", "a", kFirstCollection));
    ASSERT_EQ(bucket->dropCollection("_default", "c").outcome, ManifestOutcome::Success);
    EXPECT_EQ(bucket->continueRangeScan(0, id, {}).status, Status::UnknownCollection);
    EXPECT_EQ(bucket->continueRangeScan(0, id, {}).status, Status::KeyNotFound);
}

TEST(RangeScansTable, ASecondContinueOfAScanIsBusyUntilTheFirstChecksItIn) {
    RangeScans scans(8, std::chrono::seconds(60));
    const auto now = Clock::now();
    auto scan = std::make_unique<OpenRangeScan>();
    scan->vbid = 3;
    const auto id = *scans.open(std::move(scan), now);
    Status status = Status::Internal;
    ASSERT_NE(scans.checkOut(3, id, status, now), nullptr);
    EXPECT_EQ(scans.checkOut(3, id, status, now), nullptr);
    EXPECT_EQ(status, Status::Busy);
    EXPECT_EQ(scans.cancel(3, id), Status::Success) << "cancelled while checked out";
    EXPECT_FALSE(scans.checkIn(id, now)) << "the continue learns of the cancel";
    EXPECT_EQ(scans.size(), 0u) << "closed by the check-in";
}

}  // namespace
}  // namespace kvexec::engine
