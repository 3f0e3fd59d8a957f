// Collection prefixes and the CRC vBucket mapping clients use.
#include <gtest/gtest.h>

#include "server/protocol/keys.h"

namespace kvexec::server::protocol {
namespace {

TEST(Keys, DefaultCollectionIsOneZeroByte) {
    auto split = splitCollectionKey(std::string("\0doc", 4));
    ASSERT_TRUE(split);
    EXPECT_EQ(split->collectionId, 0u);
    EXPECT_EQ(split->key, "doc");
}

TEST(Keys, MultiByteLeb128CollectionId) {
    // 0x88 = 0b1000'1000: low 7 bits 8, continue; 0x01: 1 << 7. Id 136.
    auto split = splitCollectionKey("\x88\x01k");
    ASSERT_TRUE(split);
    EXPECT_EQ(split->collectionId, 136u);
    EXPECT_EQ(split->key, "k");
}

TEST(Keys, MalformedPrefixesAreRefused) {
    EXPECT_FALSE(splitCollectionKey(""));
    EXPECT_FALSE(splitCollectionKey(std::string("\0", 1)));  // no key after it
    EXPECT_FALSE(splitCollectionKey("\x80\x80\x80\x80\x80\x80k"));
}

TEST(Keys, VbucketIsBits16To30OfTheCrc32) {
    // CRC-32("123456789") = 0xCBF43926 (the standard check value):
    // (0xCBF4 & 0x7FFF) = 19444, 19444 % 1024 = 1012.
    EXPECT_EQ(vbucketOfKey("123456789", 1024), 1012);
    // CRC-32("foo") = 0x8C736521: 0x0C73 = 3187, % 1024 = 115, % 64 = 51.
    EXPECT_EQ(vbucketOfKey("foo", 1024), 115);
    EXPECT_EQ(vbucketOfKey("foo", 64), 51);
    EXPECT_EQ(vbucketOfKey("foo", 1), 0);
}

}  // namespace
}  // namespace kvexec::server::protocol
