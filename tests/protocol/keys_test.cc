// The CRC vBucket mapping clients use.
#include <gtest/gtest.h>
#include <zlib.h>

#include <random>
#include <string>

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

// Clients (libcouchbase, the SDKs) map keys with zlib's CRC-32; the server
// must agree for every key length, including the folding code's edges.
TEST(Keys, VbucketMatchesZlibsCrc32AtEveryKeyLength) {
    std::mt19937 random(20261128);
    for (std::size_t length = 0; length <= 300; ++length) {
        for (int sample = 0; sample < 8; ++sample) {
            std::string key(length, '\0');
            for (auto& byte : key) {
                byte = static_cast<char>(random());
            }
            const auto crc = crc32(0L, reinterpret_cast<const Bytef*>(key.data()),
                                   static_cast<uInt>(key.size()));
            ASSERT_EQ(vbucketOfKey(key, 1024), ((crc >> 16) & 0x7fff) % 1024) << length;
            // All 15 bits the mapping takes, not only the low ten.
            ASSERT_EQ(vbucketOfKey(key, 32768), (crc >> 16) & 0x7fff) << length;
        }
    }
}

}  // namespace
}  // namespace kvexec::protocol
