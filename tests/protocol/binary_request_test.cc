// The binary request parser: framing, limits, framing extras (durability),
// and the per-opcode shape rules.
#include <gtest/gtest.h>

#include "protocol/binary_request.h"
#include "request_builder.h"

namespace kvexec::protocol {
namespace {

using test::RawRequest;
using test::request;

ParseResult parse(const std::string& bytes, RequestLimits limits = {}) {
    return parseRequest(bytes, limits);
}

TEST(BinaryRequest, ParsesEveryFieldOfAClassicRequest) {
    auto raw = request(Opcode::Set, "key", std::string(8, '\1'), "value");
    raw.vbucket = 7;
    raw.cas = 0x0102030405060708ULL;
    const std::string bytes = raw.encode();
    auto r = parse(bytes);
    ASSERT_EQ(r.outcome, ParseOutcome::Ok);
    EXPECT_EQ(r.consumed, bytes.size());
    EXPECT_EQ(r.request.opcode, Opcode::Set);
    EXPECT_EQ(r.request.key, "key");
    EXPECT_EQ(r.request.value, "value");
    EXPECT_EQ(r.request.extras.size(), 8u);
    EXPECT_EQ(r.request.vbucket, 7);
    EXPECT_EQ(r.request.opaque, 0xdeadbeefu);
    EXPECT_EQ(r.request.cas, 0x0102030405060708ULL);
    EXPECT_FALSE(r.request.durability);
}

TEST(BinaryRequest, WaitsForTheWholeHeaderAndBody) {
    const std::string bytes = request(Opcode::Get, "key").encode();
    for (std::size_t n = 0; n < bytes.size(); ++n) {
        EXPECT_EQ(parse(bytes.substr(0, n)).outcome, ParseOutcome::Incomplete) << n;
    }
    EXPECT_EQ(parse(bytes).outcome, ParseOutcome::Ok);
}

TEST(BinaryRequest, ConsumesOnlyTheFirstOfTwoPipelinedRequests) {
    const std::string first = request(Opcode::GetQ, "a").encode();
    auto r = parse(first + request(Opcode::Noop).encode());
    ASSERT_EQ(r.outcome, ParseOutcome::Ok);
    EXPECT_EQ(r.consumed, first.size());
}

TEST(BinaryRequest, UnknownMagicIsInvalidAtOnce) {
    auto r = parse(std::string("\x42", 1));
    EXPECT_EQ(r.outcome, ParseOutcome::Invalid);
    EXPECT_FALSE(r.headerRead);
}

TEST(BinaryRequest, BodyOverTheLimitIsInvalidBeforeTheBodyArrives) {
    auto raw = request(Opcode::Set, "k", std::string(8, '\0'));
    raw.bodyLength = 1025;
    auto r = parse(raw.encode(), RequestLimits{1024});
    EXPECT_EQ(r.outcome, ParseOutcome::Invalid);
    EXPECT_TRUE(r.headerRead);
    EXPECT_EQ(r.status, Status::ValueTooLarge);
    EXPECT_EQ(r.request.opaque, 0xdeadbeefu);
}

TEST(BinaryRequest, ExtrasAndKeyLongerThanTheBodyIsInvalid) {
    auto raw = request(Opcode::Get, "key");
    raw.bodyLength = 2;
    auto r = parse(raw.encode());
    EXPECT_EQ(r.outcome, ParseOutcome::Invalid);
    EXPECT_EQ(r.status, Status::InvalidArguments);
}

RawRequest altSet(std::string framing) {
    auto raw = request(Opcode::Set, "key", std::string(8, '\0'), "v");
    raw.magic = 0x08;
    raw.framing = std::move(framing);
    return raw;
}

TEST(BinaryRequest, AltMagicCarriesADurabilityRequirementWithTimeout) {
    // id 1, length 3: level 2, timeout 0x1234 ms.
    const std::string bytes = altSet(std::string("\x13\x02\x12\x34", 4)).encode();
    auto r = parse(bytes);
    ASSERT_EQ(r.outcome, ParseOutcome::Ok) << r.reason;
    EXPECT_EQ(r.request.key, "key");
    EXPECT_EQ(r.request.value, "v");
    ASSERT_TRUE(r.request.durability);
    EXPECT_EQ(r.request.durability->level, DurabilityLevel::MajorityAndPersistOnMaster);
    EXPECT_EQ(r.request.durability->timeoutMs, 0x1234);
}

TEST(BinaryRequest, DurabilityWithoutTimeoutUsesTheServerDefault) {
    auto r = parse(altSet(std::string("\x11\x03", 2)).encode());
    ASSERT_EQ(r.outcome, ParseOutcome::Ok);
    EXPECT_EQ(r.request.durability->level, DurabilityLevel::PersistToMajority);
    EXPECT_FALSE(r.request.durability->timeoutMs);
}

// A bad durability requirement is refused with its status, but the packet
// is well framed: it is consumed whole and the connection goes on.
TEST(BinaryRequest, DurabilityLevelOutsideOneToThreeIsInvalidLevel) {
    for (char level : {'\0', '\4', '\xff'}) {
        const std::string wire = altSet(std::string("\x11", 1) + level).encode();
        auto r = parse(wire);
        ASSERT_EQ(r.outcome, ParseOutcome::Ok);
        EXPECT_EQ(r.consumed, wire.size());
        EXPECT_EQ(r.request.framingStatus, Status::DurabilityInvalidLevel);
        EXPECT_FALSE(r.request.framingError.empty());
        EXPECT_FALSE(r.request.durability);
    }
}

TEST(BinaryRequest, DurabilityTimeoutZeroAndFfffAreInvalid) {
    for (std::string timeout : {std::string("\0\0", 2), std::string("\xff\xff", 2)}) {
        auto r = parse(altSet(std::string("\x13\x01", 2) + timeout).encode());
        ASSERT_EQ(r.outcome, ParseOutcome::Ok);
        EXPECT_EQ(r.request.framingStatus, Status::InvalidArguments);
    }
}

TEST(BinaryRequest, UnknownFrameInfoIsNotSupportedAndTheNextRequestIsFound) {
    const std::string first = altSet(std::string("\xf0\x07", 2)).encode();
    const std::string second = request(Opcode::Noop).encode();
    const std::string wire = first + second;
    auto r = parse(wire);
    ASSERT_EQ(r.outcome, ParseOutcome::Ok);
    EXPECT_EQ(r.request.framingStatus, Status::NotSupported);
    ASSERT_EQ(r.consumed, first.size());
    auto next = parse(wire.substr(r.consumed));
    ASSERT_EQ(next.outcome, ParseOutcome::Ok);
    EXPECT_EQ(next.request.opcode, Opcode::Noop);
    EXPECT_EQ(next.request.framingStatus, Status::Success);
}

TEST(BinaryRequest, FrameInfoLengthEscapeAndTruncation) {
    Request req;
    std::string reason;
    // Reorder (id 0, length 0) then preserve TTL (id 5, length 0).
    EXPECT_EQ(decodeFramingExtras(std::string("\x00\x50", 2), req, reason), Status::Success);
    EXPECT_TRUE(req.preserveTtl);
    // Durability frame claiming 3 bytes with 1 present.
    EXPECT_EQ(decodeFramingExtras(std::string("\x13\x01", 2), req, reason),
              Status::InvalidArguments);
    // Escaped id (15 + next byte) that is unknown: not supported.
    EXPECT_EQ(decodeFramingExtras(std::string("\xf0\x07", 2), req, reason), Status::NotSupported);
    // Escape byte missing.
    EXPECT_EQ(decodeFramingExtras(std::string("\xf0", 1), req, reason), Status::InvalidArguments);
}

Status shapeOf(const RawRequest& raw) {
    const std::string bytes = raw.encode();
    auto r = parse(bytes);
    EXPECT_EQ(r.outcome, ParseOutcome::Ok);
    std::string reason;
    return validateShape(r.request, reason);
}

TEST(BinaryRequest, ShapeRulesPerOpcode) {
    EXPECT_EQ(shapeOf(request(Opcode::Set, "k", std::string(8, '\0'), "v")), Status::Success);
    EXPECT_EQ(shapeOf(request(Opcode::Set, "k", "", "v")), Status::InvalidArguments);
    EXPECT_EQ(shapeOf(request(Opcode::Get, "", "")), Status::InvalidArguments);
    EXPECT_EQ(shapeOf(request(Opcode::Get, "k", "", "v")), Status::InvalidArguments);
    EXPECT_EQ(shapeOf(request(Opcode::Increment, "k", std::string(20, '\0'))), Status::Success);
    EXPECT_EQ(shapeOf(request(Opcode::Increment, "k", std::string(8, '\0'))),
              Status::InvalidArguments);
    EXPECT_EQ(shapeOf(request(Opcode::Flush, "", std::string(4, '\0'))), Status::Success);
    EXPECT_EQ(shapeOf(request(Opcode::Noop, "k")), Status::InvalidArguments);
    EXPECT_EQ(shapeOf(request(Opcode::Touch, "k", std::string(4, '\0'))), Status::Success);
    EXPECT_EQ(shapeOf(request(Opcode::Hello, "agent", "", std::string(3, '\0'))),
              Status::InvalidArguments);
    EXPECT_EQ(shapeOf(request(Opcode::Get, std::string(300, 'k'))), Status::InvalidArguments);
    EXPECT_EQ(shapeOf(request(Opcode::SetVbucket, "", std::string(1, '\x02'))), Status::Success);
    EXPECT_EQ(shapeOf(request(Opcode::SetVbucket, "", std::string(4, '\0'))), Status::Success);
    EXPECT_EQ(shapeOf(request(Opcode::SetVbucket, "", std::string(2, '\0'))),
              Status::InvalidArguments);
    EXPECT_EQ(shapeOf(request(Opcode::SetVbucket)), Status::InvalidArguments);
    EXPECT_EQ(shapeOf(request(Opcode::GetVbucket)), Status::Success);
    EXPECT_EQ(shapeOf(request(Opcode::GetVbucket, "", "", "v")), Status::InvalidArguments);
    auto unknown = request(Opcode::Noop);
    unknown.opcode = 0x70;
    EXPECT_EQ(shapeOf(unknown), Status::UnknownCommand);
}

TEST(BinaryRequest, QuietVariantsMapToTheirLoudOpcode) {
    const std::pair<Opcode, Opcode> pairs[] = {
        {Opcode::GetQ, Opcode::Get},
        {Opcode::GetKQ, Opcode::GetK},
        {Opcode::SetQ, Opcode::Set},
        {Opcode::AddQ, Opcode::Add},
        {Opcode::ReplaceQ, Opcode::Replace},
        {Opcode::DeleteQ, Opcode::Delete},
        {Opcode::IncrementQ, Opcode::Increment},
        {Opcode::DecrementQ, Opcode::Decrement},
        {Opcode::QuitQ, Opcode::Quit},
        {Opcode::FlushQ, Opcode::Flush},
        {Opcode::AppendQ, Opcode::Append},
        {Opcode::PrependQ, Opcode::Prepend},
        {Opcode::GatQ, Opcode::Gat},
    };
    for (auto [quiet, loud] : pairs) {
        EXPECT_TRUE(isQuiet(quiet)) << opcodeName(quiet);
        EXPECT_FALSE(isQuiet(loud)) << opcodeName(loud);
        EXPECT_EQ(loudVariant(quiet), loud);
    }
}

}  // namespace
}  // namespace kvexec::protocol
