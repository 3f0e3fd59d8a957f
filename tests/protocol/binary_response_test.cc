// The binary response encoder: header layout and big-endian fields.
#include <gtest/gtest.h>

#include "protocol/binary_response.h"

namespace kvexec::protocol {
namespace {

TEST(BinaryResponse, HeaderLayoutMatchesTheProtocol) {
    std::string out;
    appendResponse(out, {Opcode::GetK, Status::KeyNotFound, 0x01020304, 0x1122334455667788ULL, 1},
                   "ext!", "key", "value");
    ASSERT_EQ(out.size(), kHeaderSize + 4 + 3 + 5);
    EXPECT_EQ(static_cast<std::uint8_t>(out[0]), 0x81);
    EXPECT_EQ(static_cast<Opcode>(out[1]), Opcode::GetK);
    EXPECT_EQ(readBe16(out, 2), 3);  // key length
    EXPECT_EQ(out[4], 4);            // extras length
    EXPECT_EQ(out[5], 1);            // datatype
    EXPECT_EQ(readBe16(out, 6), 0x0001);
    EXPECT_EQ(readBe32(out, 8), 12u);
    EXPECT_EQ(readBe32(out, 12), 0x01020304u);
    EXPECT_EQ(readBe64(out, 16), 0x1122334455667788ULL);
    EXPECT_EQ(out.substr(kHeaderSize), "ext!keyvalue");
}

TEST(BinaryResponse, AppendsAfterWhatIsAlreadyBuffered) {
    std::string out = "x";
    appendResponse(out, {Opcode::Noop, Status::Success, 1, 0, 0});
    EXPECT_EQ(out.size(), 1 + kHeaderSize);
    EXPECT_EQ(static_cast<std::uint8_t>(out[1]), 0x81);
}

}  // namespace
}  // namespace kvexec::protocol
