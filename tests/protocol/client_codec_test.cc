// The client codec against the server's: what the load tool encodes, the
// server parses to the same fields, and what the server answers, the load
// tool reads back.
#include <gtest/gtest.h>

#include "protocol/binary_request.h"
#include "protocol/binary_response.h"
#include "protocol/client_codec.h"
#include "protocol/cluster_map.h"
#include "protocol/server_request.h"

namespace kvexec::protocol {
namespace {

TEST(ClientCodec, ADurableSetReachesTheServerWithItsRequirement) {
    std::string wire;
    std::string extras;
    appendBe32(extras, 7);  // flags
    appendBe32(extras, 0);  // expiry
    appendRequest(wire, {Opcode::Set, 513, 42, 0, 0},
                  durabilityFrame(DurabilityLevel::PersistToMajority, 2500), extras, "key",
                  "value");
    const ParseResult parsed = parseRequest(wire, RequestLimits{});
    ASSERT_EQ(parsed.outcome, ParseOutcome::Ok);
    EXPECT_EQ(parsed.consumed, wire.size());
    EXPECT_EQ(parsed.request.magic, Magic::AltClientRequest);
    EXPECT_EQ(parsed.request.vbucket, 513);
    EXPECT_EQ(parsed.request.opaque, 42u);
    EXPECT_EQ(parsed.request.key, "key");
    EXPECT_EQ(parsed.request.value, "value");
    ASSERT_TRUE(parsed.request.durability);
    EXPECT_EQ(parsed.request.durability->level, DurabilityLevel::PersistToMajority);
    EXPECT_EQ(parsed.request.durability->timeoutMs, 2500);
}

TEST(ClientCodec, WithoutFramingExtrasTheClassicMagicIsUsed) {
    std::string wire;
    appendRequest(wire, {Opcode::Get, 0, 1, 0, 0}, {}, {}, "k");
    EXPECT_EQ(static_cast<std::uint8_t>(wire[0]), 0x80);
    const ParseResult parsed = parseRequest(wire, RequestLimits{});
    ASSERT_EQ(parsed.outcome, ParseOutcome::Ok);
    EXPECT_FALSE(parsed.request.durability);
}

TEST(ClientCodec, RefusesPartsTheHeaderCannotDescribe) {
    std::string wire;
    EXPECT_THROW(appendRequest(wire, {}, {}, std::string(256, 'x')), std::invalid_argument);
    EXPECT_THROW(appendRequest(wire, {}, "\x10\x01", {}, std::string(256, 'k')),
                 std::invalid_argument);
}

TEST(ClientCodec, ReadsBackWhatTheServerAnswersOneByteAtATime) {
    std::string wire;
    appendResponse(wire, {Opcode::Stat, Status::Success, 9, 77, 1}, {}, "name", "value");
    appendResponse(wire, {Opcode::Set, Status::SyncWriteAmbiguous, 10, 0, 0});
    for (std::size_t cut = 0; cut < kHeaderSize + 9; ++cut) {
        EXPECT_EQ(parseResponse(std::string_view(wire).substr(0, cut)).outcome,
                  ResponseOutcome::Incomplete);
    }
    const ResponseParse first = parseResponse(wire);
    ASSERT_EQ(first.outcome, ResponseOutcome::Ok);
    EXPECT_EQ(first.response.opcode, Opcode::Stat);
    EXPECT_EQ(first.response.opaque, 9u);
    EXPECT_EQ(first.response.cas, 77u);
    EXPECT_EQ(first.response.key, "name");
    EXPECT_EQ(first.response.value, "value");
    const ResponseParse second = parseResponse(std::string_view(wire).substr(first.consumed));
    ASSERT_EQ(second.outcome, ResponseOutcome::Ok);
    EXPECT_EQ(second.response.status, Status::SyncWriteAmbiguous);
    EXPECT_EQ(first.consumed + second.consumed, wire.size());
}

TEST(ClientCodec, AlternativeResponsesSkipTheirFramingExtras) {
    std::string wire;
    appendResponse(wire, {Opcode::Get, Status::Success, 3, 0, 0}, std::string(4, '\0'), {}, "v");
    // Rewrite as magic 0x18 with a 3-byte server-duration frame.
    std::string alt = wire.substr(0, kHeaderSize);
    alt[0] = static_cast<char>(Magic::AltClientResponse);
    alt[2] = 3;  // framing extras length
    alt[3] = 0;  // key length
    alt[11] = static_cast<char>(alt[11] + 3);
    alt += std::string("\x02\x00\x10", 3) + wire.substr(kHeaderSize);
    const ResponseParse parsed = parseResponse(alt);
    ASSERT_EQ(parsed.outcome, ResponseOutcome::Ok);
    EXPECT_EQ(parsed.response.framingExtras.size(), 3u);
    EXPECT_EQ(parsed.response.extras.size(), 4u);
    EXPECT_EQ(parsed.response.value, "v");
}

TEST(ClientCodec, RejectsWhatIsNoResponse) {
    std::string wire;
    appendRequest(wire, {Opcode::Noop, 0, 1, 0, 0});
    EXPECT_EQ(parseResponse(wire).outcome, ResponseOutcome::Invalid);
    std::string bad;
    appendResponse(bad, {Opcode::Get, Status::Success, 1, 0, 0}, "abcd");
    bad[11] = 2;  // body shorter than the extras it claims
    EXPECT_EQ(parseResponse(bad).outcome, ResponseOutcome::Invalid);
}

// A map the server pushes between responses is a packet to the client
// that asked for pushes (parseServerPacket), and is no response.
TEST(ClientCodec, AServerPushIsReadAsAPacketButNotAsAResponse) {
    std::string wire;
    appendClustermapNotification(wire, "default", kRevisionEpoch, 9, R"({"rev":9})", true);
    appendResponse(wire, {Opcode::Noop, Status::Success, 5, 0, 0});
    EXPECT_EQ(parseResponse(wire).outcome, ResponseOutcome::Invalid);
    const ResponseParse push = parseServerPacket(wire);
    ASSERT_EQ(push.outcome, ResponseOutcome::Ok);
    EXPECT_EQ(push.response.magic, Magic::ServerRequest);
    EXPECT_EQ(static_cast<ServerOpcode>(push.response.opcode),
              ServerOpcode::ClustermapChangeNotification);
    EXPECT_EQ(push.response.key, "default");
    EXPECT_EQ(push.response.value, R"({"rev":9})");
    const ResponseParse next = parseServerPacket(std::string_view(wire).substr(push.consumed));
    ASSERT_EQ(next.outcome, ResponseOutcome::Ok);
    EXPECT_EQ(next.response.magic, Magic::ClientResponse);
    EXPECT_EQ(next.response.opaque, 5u);
}

}  // namespace
}  // namespace kvexec::protocol
