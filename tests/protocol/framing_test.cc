// The framer a connection uses to split its input into requests: which
// protocol a request speaks and how many bytes it needs before parsing.
#include <gtest/gtest.h>

#include "protocol/binary_response.h"
#include "protocol/framing.h"
#include "request_builder.h"

namespace kvexec::protocol {
namespace {

using test::request;

TEST(Framing, PrintableFirstBytesAreTextTheRestBinary) {
    EXPECT_EQ(wireOf('g'), Wire::Text);
    EXPECT_EQ(wireOf(' '), Wire::Text);
    EXPECT_EQ(wireOf('\r'), Wire::Text);
    EXPECT_EQ(wireOf(static_cast<char>(0x80)), Wire::Binary);
    EXPECT_EQ(wireOf(0x08), Wire::Binary);
    EXPECT_EQ(wireOf(0x00), Wire::Binary);
    EXPECT_EQ(wireOf(static_cast<char>(0x81)), Wire::Binary);
}

TEST(Framing, BinaryNeedsTheHeaderThenTheBody) {
    const FramingLimits limits;
    const std::string bytes = request(Opcode::Set, "key", std::string(8, '\0'), "value").encode();
    EXPECT_EQ(requestExtent(Wire::Binary, std::string_view(bytes).substr(0, 10), limits),
              kHeaderSize);
    EXPECT_EQ(requestExtent(Wire::Binary, std::string_view(bytes).substr(0, kHeaderSize), limits),
              bytes.size());
}

TEST(Framing, BinaryRefusedFromItsHeaderNeedsNoMore) {
    FramingLimits limits;
    limits.binary.maxBodyLength = 1024;
    auto huge = request(Opcode::Set, "key", std::string(8, '\0'));
    huge.bodyLength = 1 << 20;
    const std::string header = huge.encode().substr(0, kHeaderSize);
    EXPECT_EQ(requestExtent(Wire::Binary, header, limits), kHeaderSize);
    const std::string badMagic = "\x81\x00";
    EXPECT_EQ(requestExtent(Wire::Binary, badMagic, limits), badMagic.size());
}

// A response a connection takes from its peer (a DCP consumer's, a duplex
// client's reply) is framed by its header, whatever its magic: one that
// arrives in pieces is not cut at its first bytes.
TEST(Framing, AResponseNeedsItsHeaderThenItsBody) {
    RequestLimits limits;
    limits.maxBodyLength = 1024;
    std::string reply;
    appendResponse(reply, {Opcode::Noop, Status::Success, 7, 0, 0}, {}, {}, "body");
    reply[0] = static_cast<char>(Magic::ServerResponse);
    EXPECT_EQ(responseExtent(std::string_view(reply).substr(0, 10), limits), kHeaderSize);
    EXPECT_EQ(responseExtent(std::string_view(reply).substr(0, kHeaderSize), limits), reply.size());
    std::string huge = reply.substr(0, kHeaderSize);
    huge[8] = 1;  // a body of 16 MiB and more: over the limit, refused from the header
    EXPECT_EQ(responseExtent(huge, limits), kHeaderSize);
}

TEST(Framing, TextStorageNeedsItsDataBlockOnceTheLineIsRead) {
    const FramingLimits limits;
    EXPECT_EQ(requestExtent(Wire::Text, "set k 0 0 5", limits), 12u);  // one more byte
    EXPECT_EQ(requestExtent(Wire::Text, "set k 0 0 5\r\n", limits), 13u + 5 + 2);
    EXPECT_EQ(requestExtent(Wire::Text, "get k\r\nget j\r\n", limits), 7u);
}

TEST(Framing, TextLineOverItsLimitIsRefusedWithoutItsEnd) {
    FramingLimits limits;
    limits.text.maxLineLength = 16;
    limits.text.maxGetLineLength = 64;
    const std::string longLine(40, 'x');
    EXPECT_EQ(requestExtent(Wire::Text, longLine, limits), 17u);
    auto refused = parseTextCommand(longLine, limits.text);
    EXPECT_EQ(refused.outcome, TextOutcome::Fatal);
    // Multi-key gets may be longer.
    const std::string longGet = "get " + std::string(40, 'k');
    EXPECT_EQ(requestExtent(Wire::Text, longGet, limits), longGet.size() + 1);
    EXPECT_EQ(parseTextCommand(longGet + "\r\n", limits.text).outcome, TextOutcome::Ok);
}

TEST(Framing, TextValueOverTheLimitIsRefusedFromItsLine) {
    FramingLimits limits;
    limits.text.maxValueLength = 100;
    const std::string line = "set k 0 0 101\r\n";
    EXPECT_EQ(requestExtent(Wire::Text, line, limits), line.size());
    auto refused = parseTextCommand(line, limits.text);
    EXPECT_EQ(refused.outcome, TextOutcome::Error);
    EXPECT_EQ(refused.errorLine, "SERVER_ERROR object too large for cache\r\n");
    EXPECT_EQ(refused.discard, 103u);
}

}  // namespace
}  // namespace kvexec::protocol
