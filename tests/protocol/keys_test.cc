// The CRC vBucket mapping clients use.
#include <gtest/gtest.h>

#include "protocol/keys.h"

namespace kvexec::protocol {
namespace {

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
}  // namespace kvexec::protocol
