// The set of collections a vBucket serves: which ids it finds and the
// maxTtl each reports, the default collection (kept apart from the others)
// included, whatever order the manifest listed them in.
#include "engine/collection_ttls.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace kvexec::engine {
namespace {

std::vector<CollectionTtls::Entry> entries(const CollectionTtls& set) {
    return {set.begin(), set.end()};
}

TEST(CollectionTtls, EmptySetServesNoCollection) {
    const CollectionTtls set;
    EXPECT_FALSE(set.contains(kDefaultCollection));
    EXPECT_FALSE(set.contains(8));
    EXPECT_EQ(set.maxTtl(kDefaultCollection), nullptr);
    EXPECT_EQ(set.begin(), set.end());
}

TEST(CollectionTtls, FindsEachIdWithItsMaxTtlInAnyOrder) {
    const CollectionTtls set(std::vector<CollectionTtls::Entry>{
        {12, 0}, {kDefaultCollection, 30}, {9, 7}, {0xffffffff, 1}});
    ASSERT_NE(set.maxTtl(kDefaultCollection), nullptr);
    EXPECT_EQ(*set.maxTtl(kDefaultCollection), 30U);
    ASSERT_NE(set.maxTtl(9), nullptr);
    EXPECT_EQ(*set.maxTtl(9), 7U);
    ASSERT_NE(set.maxTtl(12), nullptr);
    EXPECT_EQ(*set.maxTtl(12), 0U);
    ASSERT_NE(set.maxTtl(0xffffffff), nullptr);
    EXPECT_EQ(*set.maxTtl(0xffffffff), 1U);
    for (const CollectionId absent : {1U, 8U, 10U, 13U, 0xfffffffeU}) {
        EXPECT_FALSE(set.contains(absent)) << absent;
    }
    const std::vector<CollectionTtls::Entry> sorted = {
        {kDefaultCollection, 30}, {9, 7}, {12, 0}, {0xffffffff, 1}};
    EXPECT_EQ(entries(set), sorted);
}

TEST(CollectionTtls, WithoutTheDefaultCollectionOnlyTheOthersAreServed) {
    // The set alone: a bucket's manifest always holds _default.
    const CollectionTtls set{{8, 0}, {9, 60}};
    EXPECT_FALSE(set.contains(kDefaultCollection));
    EXPECT_EQ(set.maxTtl(kDefaultCollection), nullptr);
    EXPECT_TRUE(set.contains(8));
    EXPECT_TRUE(set.contains(9));
}

TEST(CollectionTtls, AnIdGivenTwiceKeepsItsFirstEntry) {
    const CollectionTtls set{{9, 5}, {kDefaultCollection, 1}, {9, 6}, {kDefaultCollection, 2}};
    EXPECT_EQ(*set.maxTtl(9), 5U);
    EXPECT_EQ(*set.maxTtl(kDefaultCollection), 1U);
    EXPECT_EQ(entries(set).size(), 2U);
}

TEST(CollectionTtls, AssignmentReplacesTheWholeSet) {
    CollectionTtls set{{kDefaultCollection, 0}, {8, 0}};
    set = CollectionTtls{{9, 3}};
    EXPECT_FALSE(set.contains(kDefaultCollection));
    EXPECT_FALSE(set.contains(8));
    EXPECT_EQ(*set.maxTtl(9), 3U);
}

}  // namespace
}  // namespace kvexec::engine
