// base64 for the meta commands' b flag: the standard coding, and decoding as
// leniently as memcached 1.6.18 (what it accepts and refuses).
#include <gtest/gtest.h>

#include "protocol/base64.h"

namespace kvexec::protocol {
namespace {

TEST(Base64, EncodesWithPaddingAndNoLineBreaks) {
    EXPECT_EQ(encodeBase64(""), "");
    EXPECT_EQ(encodeBase64("a"), "YQ==");
    EXPECT_EQ(encodeBase64("ab"), "YWI=");
    EXPECT_EQ(encodeBase64("abc"), "YWJj");
    EXPECT_EQ(encodeBase64(std::string("bin\0", 4)), "YmluAA==");
    EXPECT_EQ(encodeBase64(std::string(200, '\xff')).find('\n'), std::string::npos);
}

TEST(Base64, DecodesWhatItEncodes) {
    std::string all;
    for (int c = 0; c < 256; ++c) {
        all += static_cast<char>(c);
    }
    for (std::size_t n = 1; n < all.size(); n += 7) {
        EXPECT_EQ(decodeBase64(encodeBase64(all.substr(0, n))), all.substr(0, n)) << n;
    }
}

TEST(Base64, RefusesWhatMemcachedRefuses) {
    for (const char* text : {"", "!!!!", "abc", "YQ", "a===", "====", "YWJjZA"}) {
        EXPECT_FALSE(decodeBase64(text)) << text;
    }
}

TEST(Base64, IsAsLenientAsMemcached) {
    EXPECT_EQ(decodeBase64("Y W\nJ j"), "abc");  // bytes outside the alphabet are skipped
    EXPECT_EQ(decodeBase64("YW=j"), "a`");       // '=' inside a group pads it
    EXPECT_EQ(decodeBase64("YQ==YQ=="), "a");    // nothing after a padded group
    EXPECT_EQ(decodeBase64("Y25="), "cn");       // stray low bits are dropped
}

}  // namespace
}  // namespace kvexec::protocol
