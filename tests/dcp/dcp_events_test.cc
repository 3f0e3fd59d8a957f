// What of a document a DCP message carries for the flags its connection
// was opened with (dcp/events.h: EncodeOptions, valueOptionsOf):
// IncludeXattrs, NoValue and NoValueWithUnderlyingDatatype, as kv_engine
// sends them. Each message is encoded, parsed as a request and decoded
// back, so what is checked is what a consumer reads off the wire.
#include <gtest/gtest.h>

#include <string>

#include "dcp/events.h"
#include "engine/xattr_blob.h"
#include "kvexec/engine/xattrs.h"
#include "protocol/binary_request.h"
#include "protocol/dcp_connection.h"

namespace kvexec::dcp {
namespace {

namespace wire = protocol::dcp;
using engine::kDatatypeJson;
using engine::kDatatypeXattr;
using engine::StreamEvent;
using engine::StreamEventKind;

const std::string kBlob = engine::test::xattrBlobOf({{"_sync", "{\"rev\":1}"}, {"user", "2"}});
const std::string kBody = R"({"name":"kvexec"})";

StreamEvent document(StreamEventKind kind, std::string value, std::uint8_t datatype,
                     bool deleted = false) {
    engine::ItemMeta meta;
    meta.datatype = datatype;
    meta.seqno = 7;
    meta.cas = 99;
    meta.deleted = deleted;
    StreamEvent event;
    event.kind = kind;
    event.item = engine::Item{0, std::string(1, 'k'), std::move(value), meta};
    event.level = engine::DurabilityLevel::Majority;
    return event;
}

// The event a consumer decodes from what `options` made of `event`.
StreamEvent sent(const StreamEvent& event, const EncodeOptions& options) {
    std::string bytes;
    EXPECT_TRUE(encodeEvent(bytes, event, options));
    const auto parsed = protocol::parseRequest(bytes, protocol::RequestLimits{});
    EXPECT_EQ(parsed.outcome, protocol::ParseOutcome::Ok);
    const auto decoded = decodeEvent(parsed.request, options.collections);
    EXPECT_TRUE(decoded.event.has_value()) << decoded.error.reason;
    return decoded.event.value_or(StreamEvent{});
}

TEST(DcpEventsTest, OpenFlagsChooseXattrsAndBody) {
    EXPECT_FALSE(valueOptionsOf(wire::kOpenProducer).xattrs);
    EXPECT_EQ(valueOptionsOf(wire::kOpenProducer).body, BodyMode::Whole);
    EXPECT_TRUE(valueOptionsOf(wire::kOpenProducer | wire::kOpenIncludeXattrs).xattrs);
    EXPECT_EQ(valueOptionsOf(wire::kOpenNoValue).body, BodyMode::None);
    EXPECT_EQ(valueOptionsOf(wire::kOpenNoValueWithUnderlyingDatatype).body,
              BodyMode::NoneKeepDatatype);
}

// What a consumer that asked for xattrs gets: the whole value.
TEST(DcpEventsTest, WithXattrsAMutationCarriesItsWholeValue) {
    const auto event =
        document(StreamEventKind::Mutation, kBlob + kBody, kDatatypeXattr | kDatatypeJson);
    const auto got = sent(event, valueOptionsOf(wire::kOpenProducer | wire::kOpenIncludeXattrs));
    EXPECT_EQ(got.item.value, kBlob + kBody);
    EXPECT_EQ(got.item.meta.datatype, kDatatypeXattr | kDatatypeJson);
}

// One that did not: the body alone, and no XATTR bit that would make it
// read the body's first bytes as a blob's length.
TEST(DcpEventsTest, WithoutXattrsAMutationAndAPrepareCarryTheBodyAlone) {
    for (const auto kind : {StreamEventKind::Mutation, StreamEventKind::Prepare}) {
        const auto event = document(kind, kBlob + kBody, kDatatypeXattr | kDatatypeJson);
        const auto got = sent(event, valueOptionsOf(wire::kOpenProducer));
        EXPECT_EQ(got.item.value, kBody);
        EXPECT_EQ(got.item.meta.datatype, kDatatypeJson);
        EXPECT_EQ(got.item.meta.cas, 99u);
        EXPECT_EQ(got.item.meta.seqno, 7u);
    }
}

TEST(DcpEventsTest, NoValueSendsNothingOrTheXattrsAloneAndSaysSoInTheDatatype) {
    const auto event =
        document(StreamEventKind::Mutation, kBlob + kBody, kDatatypeXattr | kDatatypeJson);
    const auto bare = sent(event, valueOptionsOf(wire::kOpenProducer | wire::kOpenNoValue));
    EXPECT_EQ(bare.item.value, "");
    EXPECT_EQ(bare.item.meta.datatype, 0);
    const auto underlying =
        sent(event, valueOptionsOf(wire::kOpenProducer | wire::kOpenNoValueWithUnderlyingDatatype));
    EXPECT_EQ(underlying.item.value, "");
    EXPECT_EQ(underlying.item.meta.datatype, kDatatypeXattr | kDatatypeJson)
        << "the document's datatype, as kv_engine";
    const auto xattrsOnly = sent(
        event, valueOptionsOf(wire::kOpenProducer | wire::kOpenNoValue | wire::kOpenIncludeXattrs));
    EXPECT_EQ(xattrsOnly.item.value, kBlob);
    EXPECT_EQ(xattrsOnly.item.meta.datatype, kDatatypeXattr);
    const auto xattrsAndDatatype =
        sent(event, valueOptionsOf(wire::kOpenProducer | wire::kOpenIncludeXattrs |
                                   wire::kOpenNoValueWithUnderlyingDatatype));
    EXPECT_EQ(xattrsAndDatatype.item.value, kBlob);
    EXPECT_EQ(xattrsAndDatatype.item.meta.datatype, kDatatypeXattr | kDatatypeJson);
}

// A document without xattrs is the same with or without the flag.
TEST(DcpEventsTest, ADocumentWithoutXattrsIsSentWholeEitherWay) {
    const auto event = document(StreamEventKind::Mutation, kBody, kDatatypeJson);
    for (const std::uint32_t flags :
         {wire::kOpenProducer, wire::kOpenProducer | wire::kOpenIncludeXattrs}) {
        const auto got = sent(event, valueOptionsOf(flags));
        EXPECT_EQ(got.item.value, kBody);
        EXPECT_EQ(got.item.meta.datatype, kDatatypeJson);
    }
}

// A tombstone's system xattrs travel with its deletion only to a consumer
// that asked for xattrs.
TEST(DcpEventsTest, ATombstonesXattrsTravelOnlyWhenAskedFor) {
    const std::string system = engine::test::xattrBlobOf({{"_sync", "{}"}});
    const auto event = document(StreamEventKind::Deletion, system, kDatatypeXattr, true);
    const auto with = sent(event, valueOptionsOf(wire::kOpenProducer | wire::kOpenIncludeXattrs));
    EXPECT_TRUE(with.item.meta.deleted);
    EXPECT_EQ(with.item.value, system);
    EXPECT_EQ(with.item.meta.datatype, kDatatypeXattr);
    const auto without = sent(event, valueOptionsOf(wire::kOpenProducer));
    EXPECT_TRUE(without.item.meta.deleted);
    EXPECT_EQ(without.item.value, "");
    EXPECT_EQ(without.item.meta.datatype, 0);
}

// Deletions in the v2 form (21 bytes of extras, with a delete time) only
// for a connection opened with IncludeDeleteTimes; v1 (18) otherwise.
TEST(DcpEventsTest, DeleteTimesChooseTheDeletionsForm) {
    const auto event = document(StreamEventKind::Deletion, "", 0, true);
    for (const auto& [flags, extras] :
         {std::pair{wire::kOpenProducer, std::size_t{18}},
          std::pair{wire::kOpenProducer | wire::kOpenIncludeDeleteTimes, std::size_t{21}}}) {
        std::string bytes;
        ASSERT_TRUE(encodeEvent(bytes, event, valueOptionsOf(flags)));
        const auto parsed = protocol::parseRequest(bytes, protocol::RequestLimits{});
        ASSERT_EQ(parsed.outcome, protocol::ParseOutcome::Ok);
        EXPECT_EQ(parsed.request.extras.size(), extras) << flags;
        EXPECT_TRUE(sent(event, valueOptionsOf(flags)).item.meta.deleted);
    }
}

}  // namespace
}  // namespace kvexec::dcp
