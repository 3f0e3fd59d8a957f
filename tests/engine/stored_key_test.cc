// A read's stored key, built on the stack, is byte for byte the key the
// vBucket stores (encodeCollectionKey) for every prefix length LEB128
// gives a 32-bit id, and the vBucket's maps find it by view.
#include "engine/stored_key.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace kvexec::engine {
namespace {

// The largest ids of 1..5 prefix bytes and the smallest of 2..5.
constexpr CollectionId kIds[] = {0,        0x7f,     0x80,      0x3fff,     0x4000,
                                 0x1fffff, 0x200000, 0xfffffff, 0x10000000, 0xffffffff};

TEST(StoredKey, IsTheEncodedKeyForEveryPrefixLength) {
    for (const CollectionId id : kIds) {
        for (const std::string& key : {std::string("k"), std::string(kMaxKeySize, 'x')}) {
            const StoredKey stored(id, key);
            EXPECT_EQ(stored.view(), encodeCollectionKey(id, key)) << id << " " << key.size();
            const auto split = splitCollectionKey(stored.view());
            ASSERT_TRUE(split.has_value()) << id;
            EXPECT_EQ(split->collection, id);
            EXPECT_EQ(split->key, key);
        }
    }
}

TEST(StoredKey, RefusesAKeyOverTheLimit) {
    EXPECT_THROW(StoredKey(kDefaultCollection, std::string(kMaxKeySize + 1, 'x')),
                 std::length_error);
}

TEST(StoredKeyMap, FindsAStringKeyByView) {
    StoredKeyMap<int> map;
    map[encodeCollectionKey(8, "doc")] = 1;
    map[encodeCollectionKey(kDefaultCollection, "doc")] = 2;
    const StoredKey inEight(8, "doc");
    const StoredKey inDefault(kDefaultCollection, "doc");
    const StoredKey other(8, "doc2");
    ASSERT_NE(map.find(inEight.view()), map.end());
    EXPECT_EQ(map.find(inEight.view())->second, 1);
    EXPECT_EQ(map.find(inDefault.view())->second, 2);
    EXPECT_EQ(map.find(other.view()), map.end());
    EXPECT_TRUE(map.contains(inDefault.view()));
}

}  // namespace
}  // namespace kvexec::engine
