// Scopes and collections in the engine, on the Manual backend: documents
// kept per collection, the manifest's changes and their refusals, dropping
// a collection's documents, and what survives a restart.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "engine_test_support.h"
#include "manual_bucket_fixture.h"

namespace kvexec::engine {
namespace {

using test::getNow;
using test::setRequest;
using test::storeNow;

class CollectionsTest : public ManualBucketTest {
  protected:
    CollectionId create(const std::string& scope, const std::string& name,
                        std::uint32_t maxTtl = 0) {
        if (bucket->manifest().findScope(scope) == nullptr) {
            EXPECT_EQ(bucket->createScope(scope).outcome, ManifestOutcome::Success);
        }
        const auto change = bucket->createCollection(scope, name, maxTtl);
        EXPECT_EQ(change.outcome, ManifestOutcome::Success) << change.message;
        return bucket->manifest().findCollection(scope, name)->id;
    }
    Status set(CollectionId collection, const std::string& key, const std::string& value) {
        auto request = setRequest(0, key, value);
        request.collection = collection;
        return storeNow(*bucket, request)->status;
    }
    std::string read(CollectionId collection, const std::string& key) {
        const auto result = getNow(*bucket, 0, DocKey{key, collection});
        return result.status == Status::Success ? result.item.value
                                                : std::string(to_string(result.status));
    }
};

TEST_F(CollectionsTest, ANewBucketHoldsOnlyTheDefaultCollection) {
    const Manifest manifest = bucket->manifest();
    EXPECT_EQ(manifest, Manifest::initial());
    EXPECT_EQ(manifest.uid, 0u);
    EXPECT_EQ(manifest.toJson(),
              R"({"scopes":[{"collections":[{"name":"_default","uid":"0"}],"name":"_default",)"
              R"("uid":"0"}],"uid":"0"})");
}

TEST_F(CollectionsTest, TheSameKeyInTwoCollectionsIsTwoDocuments) {
    const CollectionId orders = create("shop", "orders");
    EXPECT_EQ(orders, 8u);  // the first id after the reserved ones
    ASSERT_EQ(set(kDefaultCollection, "k", "in default"), Status::Success);
    ASSERT_EQ(set(orders, "k", "in orders"), Status::Success);
    EXPECT_EQ(read(kDefaultCollection, "k"), "in default");
    EXPECT_EQ(read(orders, "k"), "in orders");
    const auto item = getNow(*bucket, 0, DocKey{"k", orders}).item;
    EXPECT_EQ(item.key, "k");
    EXPECT_EQ(item.collection, orders);
    EXPECT_EQ(bucket->stats().currItems, 2u);
}

TEST_F(CollectionsTest, EveryOperationOnAnUnknownCollectionIsRefused) {
    constexpr CollectionId unknown = 99;
    EXPECT_EQ(set(unknown, "k", "v"), Status::UnknownCollection);
    EXPECT_EQ(read(unknown, "k"), "UnknownCollection");
    Status removed = Status::Internal, counted = Status::Internal, unlocked = Status::Internal;
    RemoveRequest remove;
    remove.key = "k";
    remove.collection = unknown;
    bucket->remove(remove, [&](const MutationResult& r) { removed = r.status; });
    ArithmeticRequest incr;
    incr.key = "n";
    incr.collection = unknown;
    incr.createIfMissing = true;
    bucket->arithmetic(incr, [&](const ArithmeticResult& r) { counted = r.status; });
    GetResult touched, locked, meta;
    bucket->touch(0, DocKey{"k", unknown}, 0, [&](const GetResult& r) { touched = r; });
    bucket->getLocked(0, DocKey{"k", unknown}, std::chrono::seconds(5),
                      [&](const GetResult& r) { locked = r; });
    bucket->getMeta(0, DocKey{"k", unknown}, [&](const GetResult& r) { meta = r; });
    bucket->unlock(0, DocKey{"k", unknown}, 1, [&](Status s) { unlocked = s; });
    EXPECT_EQ(removed, Status::UnknownCollection);
    EXPECT_EQ(counted, Status::UnknownCollection);
    EXPECT_EQ(touched.status, Status::UnknownCollection);
    EXPECT_EQ(locked.status, Status::UnknownCollection);
    EXPECT_EQ(meta.status, Status::UnknownCollection);
    EXPECT_EQ(unlocked, Status::UnknownCollection);
}

TEST_F(CollectionsTest, ChangesAreCheckedAndEachOneRaisesTheUid) {
    EXPECT_EQ(bucket->createScope("s1").uid, 1u);
    EXPECT_EQ(bucket->createScope("s1").outcome, ManifestOutcome::ScopeExists);
    EXPECT_EQ(bucket->createScope("_system").outcome, ManifestOutcome::InvalidName);
    EXPECT_EQ(bucket->createScope("a b").outcome, ManifestOutcome::InvalidName);
    EXPECT_EQ(bucket->createScope(std::string(252, 'x')).outcome, ManifestOutcome::InvalidName);
    EXPECT_EQ(bucket->createCollection("nope", "c", 0).outcome, ManifestOutcome::UnknownScope);
    EXPECT_EQ(bucket->createCollection("s1", "c1", 0).uid, 2u);
    EXPECT_EQ(bucket->createCollection("s1", "c1", 0).outcome, ManifestOutcome::CollectionExists);
    EXPECT_EQ(bucket->createCollection("_default", "c1", 0).outcome, ManifestOutcome::Success);
    EXPECT_EQ(bucket->dropCollection("s1", "nope").outcome, ManifestOutcome::UnknownCollection);
    EXPECT_EQ(bucket->dropCollection("_default", "_default").outcome, ManifestOutcome::NotAllowed);
    EXPECT_EQ(bucket->dropScope("_default").outcome, ManifestOutcome::NotAllowed);
    EXPECT_EQ(bucket->dropScope("nope").outcome, ManifestOutcome::UnknownScope);
    const auto dropped = bucket->dropScope("s1");
    EXPECT_EQ(dropped.outcome, ManifestOutcome::Success);
    EXPECT_EQ(dropped.uid, 4u);
    EXPECT_EQ(bucket->manifest().uid, 4u);
    EXPECT_EQ(bucket->manifestUid(), 4u);
    EXPECT_EQ(bucket->manifest().findCollection("s1", "c1"), nullptr);
}

TEST_F(CollectionsTest, DroppingACollectionDeletesItsDocumentsAndItsIdIsNeverReused) {
    const CollectionId first = create("s", "c");
    ASSERT_EQ(set(first, "a", "1"), Status::Success);
    ASSERT_EQ(set(first, "b", "2"), Status::Success);
    ASSERT_EQ(set(kDefaultCollection, "a", "kept"), Status::Success);
    std::vector<Item> seen;
    auto stream = bucket->openStream({0, bucket->observeSeqno(0).currentSeqno},
                                     [&](const Item& item) { seen.push_back(item); });
    ASSERT_EQ(bucket->dropCollection("s", "c").outcome, ManifestOutcome::Success);
    settle();
    EXPECT_EQ(read(first, "a"), "UnknownCollection");
    EXPECT_EQ(read(kDefaultCollection, "a"), "kept");
    EXPECT_EQ(bucket->stats().currItems, 1u);
    ASSERT_EQ(seen.size(), 2u);  // the drop's tombstones, in the dropped collection
    for (const auto& item : seen) {
        EXPECT_TRUE(item.meta.deleted);
        EXPECT_EQ(item.collection, first);
    }
    stream->close();

    const CollectionId second = create("s", "c");
    EXPECT_GT(second, first);
    EXPECT_EQ(read(second, "a"), "KeyNotFound");
}

TEST_F(CollectionsTest, DroppingACollectionAbortsItsPendingSyncWrites) {
    const CollectionId c = create("s", "c");
    auto request = setRequest(0, "k", "v", DurabilityLevel::PersistToMajority);
    request.collection = c;
    std::optional<MutationResult> result;
    bucket->store(request, [&](const MutationResult& r) { result = r; });
    ASSERT_FALSE(result);
    ASSERT_EQ(bucket->dropCollection("s", "c").outcome, ManifestOutcome::Success);
    settle();
    ASSERT_TRUE(result);
    EXPECT_EQ(result->status, Status::SyncWriteAmbiguous);
}

TEST_F(CollectionsTest, MaxTtlBoundsTheExpiryOfTheCollectionsDocuments) {
    const CollectionId c = create("s", "short", 60);
    ASSERT_EQ(set(c, "forever", "v"), Status::Success);
    auto later = setRequest(0, "later", "v");
    later.collection = c;
    later.expiry = now + 3600;
    ASSERT_EQ(storeNow(*bucket, later)->status, Status::Success);
    EXPECT_EQ(getNow(*bucket, 0, DocKey{"forever", c}).item.meta.expiry, now + 60);
    EXPECT_EQ(getNow(*bucket, 0, DocKey{"later", c}).item.meta.expiry, now + 60);
    now += 61;
    EXPECT_EQ(read(c, "forever"), "KeyNotFound");
}

TEST_F(CollectionsTest, TheManifestAndEachCollectionsDocumentsSurviveARestart) {
    const CollectionId c = create("s", "c");
    ASSERT_EQ(set(c, "k", "v"), Status::Success);
    ASSERT_EQ(bucket->dropCollection("_default", "c2").outcome, ManifestOutcome::UnknownCollection);
    create("_default", "gone");
    ASSERT_EQ(bucket->dropCollection("_default", "gone").outcome, ManifestOutcome::Success);
    const Manifest before = bucket->manifest();
    settle();
    reopen();
    EXPECT_EQ(bucket->manifest(), before);
    EXPECT_EQ(read(c, "k"), "v");
    EXPECT_EQ(read(kDefaultCollection, "k"), "KeyNotFound");
    // The id of "gone" (9) is not handed out again after the restart.
    EXPECT_EQ(create("_default", "new"), 10u);
}

// A crash between persisting a drop and flushing its tombstones leaves the
// dropped collection's documents on disk: warmup leaves them out and
// deletes them, so that they are gone for good.
TEST_F(CollectionsTest, WarmupDeletesTheDocumentsOfACollectionTheManifestNoLongerHolds) {
    const CollectionId c = create("s", "c");
    ASSERT_EQ(set(c, "k", "v"), Status::Success);
    auto inShard1 = setRequest(1, "k1", "v");  // vBucket 1: the other warmup shard
    inShard1.collection = c;
    ASSERT_EQ(storeNow(*bucket, inShard1)->status, Status::Success);
    settle();
    bucket.reset();
    const auto manifestPath = dir.path() / "collections.json";
    std::string withCollection;
    {
        std::ifstream in(manifestPath);
        withCollection.assign(std::istreambuf_iterator<char>(in), {});
    }
    auto edited = nlohmann::json::parse(withCollection);
    edited["scopes"][1]["collections"] = nlohmann::json::array();
    std::ofstream(manifestPath) << edited.dump();
    // Warm up a shard at a time, with the flushers running in between, as
    // a threaded pool may run them: the deletions must still be persisted.
    config.unixTime = [this] { return now.load(); };
    bucket = Bucket::open(pool, config);
    while (pool.runNext(TaskType::Reader) != 0) {
        pool.runReady(TaskType::Writer);
    }
    ASSERT_EQ(bucket->warmupProgress().state, WarmupState::Complete);
    EXPECT_EQ(bucket->stats().currItems, 0u);
    settle();
    bucket.reset();
    std::ofstream(manifestPath) << withCollection;  // as if the id came back
    open();
    EXPECT_EQ(read(c, "k"), "KeyNotFound");
    EXPECT_EQ(getNow(*bucket, 1, DocKey{"k1", c}).status, Status::KeyNotFound);
}

TEST_F(CollectionsTest, ADamagedManifestFailsWarmupNamingTheFile) {
    create("s", "c");
    bucket.reset();
    std::ofstream(dir.path() / "collections.json") << "{\"uid\":";
    bucket = Bucket::open(pool, config);
    pool.runReady(TaskType::Reader);
    const auto progress = bucket->warmupProgress();
    EXPECT_EQ(progress.state, WarmupState::Failed);
    EXPECT_NE(progress.error.find("collections.json"), std::string::npos) << progress.error;
}

// A cluster's node takes the manifest every node shares: its collections
// appear with the given ids, one it lacks goes with its documents, and
// the next ids are the given ones, also after a restart.
TEST_F(CollectionsTest, AnAdoptedManifestReplacesTheBucketsOwnWithItsIds) {
    const CollectionId gone = create("s", "gone");
    ASSERT_EQ(set(gone, "k", "v"), Status::Success);
    ManifestState shared = bucket->manifestState();
    ASSERT_EQ(applyManifestEdit(shared, ManifestEdit::dropCollection("s", "gone")).outcome,
              ManifestOutcome::Success);
    shared.nextCollectionId = 40;  // other nodes handed out ids meanwhile
    ASSERT_EQ(applyManifestEdit(shared, ManifestEdit::createCollection("s", "orders", 0)).outcome,
              ManifestOutcome::Success);

    const auto adopted = bucket->adoptManifest(shared);
    ASSERT_EQ(adopted.outcome, ManifestOutcome::Success) << adopted.message;
    EXPECT_EQ(adopted.uid, shared.manifest.uid);
    settle();
    EXPECT_EQ(bucket->manifestState(), shared);
    EXPECT_EQ(read(gone, "k"), "UnknownCollection");
    EXPECT_EQ(set(40, "k", "in orders"), Status::Success);
    EXPECT_EQ(bucket->adoptManifest(shared).uid, shared.manifest.uid);  // again: nothing to do

    reopen();
    EXPECT_EQ(bucket->manifestState(), shared);
    EXPECT_EQ(read(40, "k"), "in orders");
    EXPECT_EQ(create("s", "next"), 41u);
}

// A replica can take a collection's documents from its stream before its
// node adopts the manifest that holds the collection, and then warm up:
// the documents load hidden, as if of a dropped collection. Adopting the
// manifest makes them the collection's again; promotion keeps them.
TEST_F(CollectionsTest, AdoptingACollectionAReplicaHeldDocumentsOfKeepsThem) {
    const CollectionId c = create("s", "c");
    ASSERT_EQ(set(c, "k", "v"), Status::Success);
    const ManifestState withCollection = bucket->manifestState();
    ASSERT_EQ(bucket->setVBucketState(0, VBucketState::Replica), Status::Success);
    settle();
    bucket.reset();
    ManifestState without = withCollection;
    without.manifest.scopes[1].collections.clear();  // as the node knew it
    std::ofstream(dir.path() / "collections.json") << encodeManifestState(without);
    open();

    ASSERT_EQ(bucket->adoptManifest(withCollection).outcome, ManifestOutcome::Success);
    ASSERT_EQ(bucket->setVBucketState(0, VBucketState::Active), Status::Success);
    settle();
    EXPECT_EQ(read(c, "k"), "v");
}

// A manifest from elsewhere whose id names another collection here is not
// taken: the documents under the id would become that collection's.
TEST_F(CollectionsTest, AManifestThatGivesAHeldIdAnotherNameIsRefused) {
    create("s", "c");
    const ManifestState before = bucket->manifestState();
    ManifestState elsewhere = before;
    elsewhere.manifest.scopes[1].collections[0].name = "other";
    ++elsewhere.manifest.uid;
    EXPECT_EQ(bucket->adoptManifest(elsewhere).outcome, ManifestOutcome::NotAllowed);
    EXPECT_EQ(bucket->manifestState(), before);
}

TEST(ManifestStateTest, AnEditIsCheckedThenAppliedWithTheNextIdAndANewUid) {
    ManifestState state;
    auto change = applyManifestEdit(state, ManifestEdit::createCollection("nope", "c", 0));
    EXPECT_EQ(change.outcome, ManifestOutcome::UnknownScope);
    EXPECT_EQ(state, ManifestState{});  // a refusal changes nothing
    ASSERT_EQ(applyManifestEdit(state, ManifestEdit::createScope("s")).outcome,
              ManifestOutcome::Success);
    change = applyManifestEdit(state, ManifestEdit::createCollection("s", "c", 60));
    ASSERT_EQ(change.outcome, ManifestOutcome::Success);
    EXPECT_EQ(change.uid, 2u);
    EXPECT_EQ(state.manifest.findCollection("s", "c")->id, 8u);
    EXPECT_EQ(state.manifest.findCollection("s", "c")->maxTtl, 60u);
    EXPECT_EQ(applyManifestEdit(state, ManifestEdit::createCollection("s", "c", 0)).outcome,
              ManifestOutcome::CollectionExists);
    EXPECT_EQ(applyManifestEdit(state, ManifestEdit::dropScope("_default")).outcome,
              ManifestOutcome::NotAllowed);
    EXPECT_EQ(applyManifestEdit(state, ManifestEdit::createScope("_x")).outcome,
              ManifestOutcome::InvalidName);
    ASSERT_EQ(applyManifestEdit(state, ManifestEdit::dropScope("s")).outcome,
              ManifestOutcome::Success);
    EXPECT_EQ(state.nextCollectionId, 9u);  // not reused
    EXPECT_EQ(state.manifest.uid, 3u);
}

TEST(ManifestStateTest, TheJsonFormRoundTripsAndRefusesIdsThatWouldBeHandedOutAgain) {
    ManifestState state;
    applyManifestEdit(state, ManifestEdit::createScope("s"));
    applyManifestEdit(state, ManifestEdit::createCollection("s", "c", 5));
    EXPECT_EQ(decodeManifestState(encodeManifestState(state)), state);

    auto doc = nlohmann::json::parse(encodeManifestState(state));
    doc["next_collection_uid"] = "8";  // c holds 8
    EXPECT_THROW(decodeManifestState(doc.dump()), std::invalid_argument);
    doc = nlohmann::json::parse(encodeManifestState(state));
    doc["scopes"][0]["collections"] = nlohmann::json::array();  // no _default
    EXPECT_THROW(decodeManifestState(doc.dump()), std::invalid_argument);
    EXPECT_THROW(decodeManifestState("{\"uid\":"), std::invalid_argument);
    EXPECT_THROW(decodeManifestState(R"({"uid":"zz","scopes":[]})"), std::invalid_argument);
    const std::string good = encodeManifestState(state);
    // Each of these, put into the good state, must be refused.
    const auto refused = [&](const std::function<void(nlohmann::json&)>& spoil) {
        auto spoilt = nlohmann::json::parse(good);
        spoil(spoilt);
        EXPECT_THROW(decodeManifestState(spoilt.dump()), std::invalid_argument) << spoilt.dump();
    };
    refused([](auto& d) { d["uid"] = "-1"; });
    refused([](auto& d) { d["uid"] = "0x8"; });
    refused([](auto& d) { d["uid"] = " 8"; });
    refused([](auto& d) { d["next_scope_uid"] = "7"; });
    refused([](auto& d) { d["scopes"][1]["collections"][0]["maxTTL"] = -1; });
    refused([](auto& d) { d["scopes"][1]["collections"][0]["name"] = "_c"; });
    refused([](auto& d) { d["scopes"][1]["name"] = "_default"; });
    refused(
        [](auto& d) { d["scopes"][1]["collections"].push_back(d["scopes"][1]["collections"][0]); });
    refused([](auto& d) {
        d["scopes"][1]["collections"].push_back(d["scopes"][0]["collections"][0]);
        d["scopes"][0]["collections"] = nlohmann::json::array();
    });
}

TEST(CollectionKeyTest, TheIdIsUnsignedLeb128InFrontOfTheKey) {
    EXPECT_EQ(encodeCollectionKey(0, "k"), std::string("\0k", 2));
    EXPECT_EQ(encodeCollectionKey(0x88, "k"), "\x88\x01k");
    const auto encoded = encodeCollectionKey(0xffffffff, "key");  // the split views it
    const auto split = splitCollectionKey(encoded);
    ASSERT_TRUE(split);
    EXPECT_EQ(split->collection, 0xffffffffu);
    EXPECT_EQ(split->key, "key");
    EXPECT_FALSE(splitCollectionKey(""));
    EXPECT_FALSE(splitCollectionKey(std::string("\0", 1)));         // no key after it
    EXPECT_FALSE(splitCollectionKey("\x80\x80\x80\x80\x80\x80k"));  // over 5 bytes
    EXPECT_FALSE(splitCollectionKey("\xff\xff\xff\xff\x7fk"));      // above 32 bits
}

TEST(CollectionKeyTest, ACollectionPathIsScopeDotCollectionWithEmptyMeaningDefault) {
    auto path = parseCollectionPath("App1.c1");
    ASSERT_TRUE(path);
    EXPECT_EQ(path->scope, "App1");
    EXPECT_EQ(path->collection, "c1");
    path = parseCollectionPath(".c1");
    ASSERT_TRUE(path);
    EXPECT_EQ(path->scope, "_default");
    path = parseCollectionPath(".");
    ASSERT_TRUE(path);
    EXPECT_EQ(path->scope, "_default");
    EXPECT_EQ(path->collection, "_default");
}

TEST(CollectionKeyTest, MalformedCollectionPathsAreRefused) {
    EXPECT_FALSE(parseCollectionPath("_default"));  // no '.'
    EXPECT_FALSE(parseCollectionPath("a.b.c"));
    EXPECT_FALSE(parseCollectionPath("a.b c"));
    EXPECT_FALSE(parseCollectionPath("_system.c"));
    EXPECT_FALSE(parseCollectionPath(std::string(252, 'x') + ".c"));
}

TEST(CollectionKeyTest, AScopePathIgnoresItsCollection) {
    EXPECT_EQ(parseScopePath(""), "_default");
    EXPECT_EQ(parseScopePath("App1"), "App1");
    EXPECT_EQ(parseScopePath("App1.c1"), "App1");
    EXPECT_FALSE(parseScopePath("%bad"));
}

}  // namespace
}  // namespace kvexec::engine
