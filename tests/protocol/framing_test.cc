// The framer a connection uses to split its input into requests: which
// protocol a request speaks and how many bytes it needs before parsing.
#include <gtest/gtest.h>

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
