// Server-initiated requests: the cluster-map change notification's layout
// (kv_engine's docs/BinaryProtocol.md, "0x01 Clustermap Change
// Notification", the 16-byte extras form).
#include <gtest/gtest.h>

#include "protocol/binary_response.h"
#include "protocol/binary_types.h"
#include "protocol/server_request.h"

namespace kvexec::protocol {
namespace {

TEST(ClustermapNotification, CarriesBucketRevisionAndConfig) {
    std::string out = "x";  // appended after what is buffered
    const std::string config = R"({"rev":7,"revEpoch":1})";
    appendClustermapNotification(out, "default", 1, 0x0102030405060708ULL, config, true);
    const std::string_view packet = std::string_view(out).substr(1);
    ASSERT_EQ(packet.size(), kHeaderSize + 16 + 7 + config.size());
    EXPECT_EQ(static_cast<std::uint8_t>(packet[0]), 0x82);
    EXPECT_EQ(static_cast<std::uint8_t>(packet[1]), 0x01);
    EXPECT_EQ(readBe16(packet, 2), 7u);  // key: the bucket
    EXPECT_EQ(packet[4], 16);            // extras
    EXPECT_EQ(packet[5], kDatatypeJson);
    EXPECT_EQ(readBe16(packet, 6), 0u);
    EXPECT_EQ(readBe32(packet, 8), 16u + 7u + config.size());
    EXPECT_EQ(readBe32(packet, 12), 0u);  // opaque: no reply is awaited
    EXPECT_EQ(readBe64(packet, 16), 0u);
    EXPECT_EQ(readBe64(packet, 24), 1u);  // revision epoch
    EXPECT_EQ(readBe64(packet, 32), 0x0102030405060708ULL);
    EXPECT_EQ(packet.substr(40, 7), "default");
    EXPECT_EQ(packet.substr(47), config);
}

TEST(ClustermapNotification, ANegativeEpochIsSentAsTwosComplement) {
    std::string out;
    appendClustermapNotification(out, "", -1, 3, "", true);
    ASSERT_EQ(out.size(), kHeaderSize + 16);
    EXPECT_EQ(out[5], 0);  // no value, no datatype
    EXPECT_EQ(readBe64(out, 24), 0xffffffffffffffffULL);
    EXPECT_EQ(readBe64(out, 32), 3u);
}

// A client that did not negotiate JSON is not told the value is JSON.
TEST(ClustermapNotification, TheJsonDatatypeOnlyForAClientThatNegotiatedIt) {
    std::string out;
    appendClustermapNotification(out, "default", 1, 3, "{}", false);
    EXPECT_EQ(out[5], 0);
}

}  // namespace
}  // namespace kvexec::protocol
