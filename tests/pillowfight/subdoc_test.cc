// --subdoc and -J: the JSON documents (exact size, valid JSON, the fields
// the paths name), which paths the load uses, and the bytes of the
// SUBDOC_MULTI_LOOKUP / SUBDOC_MULTI_MUTATION requests, checked field by
// field and against the server's own decoder.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "pillowfight/json_document.h"
#include "pillowfight/subdoc_request.h"
#include "pillowfight/workload.h"
#include "protocol/binary_response.h"
#include "subdoc/codec.h"

namespace kvexec::pillowfight {
namespace {

using protocol::Opcode;
using protocol::readBe16;
using protocol::readBe32;
using protocol::RequestHeader;
using protocol::Status;

constexpr std::size_t kHeader = 24;

TEST(PillowfightJsonDocument, IsValidJsonOfExactlyTheSizeWithSixteenByteFields) {
    for (const std::size_t size : {14u, 30u, 50u, 64u, 512u, 1024u, 5120u}) {
        const JsonDocument doc = makeJsonDocument(size);
        EXPECT_EQ(doc.text.size(), size);
        const auto parsed = nlohmann::json::parse(doc.text);
        ASSERT_EQ(parsed.size(), doc.fields.size());
        for (std::size_t i = 0; i < doc.fields.size(); ++i) {
            const auto& field = doc.fields[i];
            EXPECT_EQ(field.path, "Field_" + std::to_string(i + 1));
            EXPECT_EQ(nlohmann::json(parsed[field.path]).dump(), field.value);
            if (i + 1 < doc.fields.size()) {  // the last one takes the padding
                EXPECT_EQ(field.value.size(), kJsonFieldValueSize + 2);
            }
        }
    }
    EXPECT_EQ(makeJsonDocument(1024).fields.size(), 34u);  // 9 short names, 25 long
}

TEST(PillowfightJsonDocument, BelowTheSmallestDocumentGivesTheSmallest) {
    EXPECT_EQ(makeJsonDocument(0).text, R"({"Field_1":""})");
    EXPECT_EQ(makeJsonDocument(20).text, R"({"Field_1":"******"})");
}

TEST(PillowfightJsonDocument, JsonValuesAreDocumentsOfTheSizeAskedFor) {
    Options o;
    o.jsonValues = true;
    o.minSize = o.maxSize = 256;
    o.randomBody = true;
    Workload w(o, 0, 1);
    const std::string a(w.value(256));
    const std::string b(w.value(256));
    EXPECT_EQ(a.size(), 256u);
    EXPECT_NE(a, b);  // random bodies stay random, and stay JSON
    EXPECT_TRUE(nlohmann::json::accept(a));
    EXPECT_TRUE(nlohmann::json::accept(b));
}

TEST(PillowfightSubdocWorkload, PathsTakeTheSmallestDocumentsFieldsInTurn) {
    Options o;
    o.subdoc = o.jsonValues = true;
    o.minSize = 64;  // two fields
    o.maxSize = 1024;
    o.setPercent = 50;
    Workload w(o, 0, 1);
    const auto fields = makeJsonDocument(64).fields;
    ASSERT_EQ(fields.size(), 2u);
    for (std::size_t i = 0; i < 6; ++i) {
        const Op op = w.next();
        ASSERT_EQ(op.specs.size(), 1u);
        const auto& spec = op.specs[0];
        EXPECT_EQ(spec.path, fields[i % 2].path);
        if (op.kind == OpKind::Get) {
            EXPECT_EQ(spec.opcode, subdoc::Opcode::Get);
            EXPECT_TRUE(spec.value.empty());
        } else {
            EXPECT_EQ(spec.opcode, subdoc::Opcode::DictUpsert);
            EXPECT_EQ(spec.value, fields[i % 2].value);  // the size does not change
        }
    }
    // Population still stores whole documents.
    Op populate;
    ASSERT_TRUE(w.nextPopulation(populate));
    EXPECT_TRUE(populate.specs.empty());
    EXPECT_EQ(populate.kind, OpKind::Set);
}

TEST(PillowfightSubdocWorkload, PathcountSpecsPerOpNoMoreThanTheFields) {
    Options o;
    o.subdoc = o.jsonValues = true;
    o.minSize = o.maxSize = 1024;
    o.subdocPaths = 3;
    Workload w(o, 0, 1);
    const Op op = w.next();
    ASSERT_EQ(op.specs.size(), 3u);
    EXPECT_EQ(op.specs[2].path, "Field_3");
    o.minSize = 30;  // one field
    Workload small(o, 0, 1);
    EXPECT_EQ(small.next().specs.size(), 1u);
}

TEST(PillowfightSubdocRequest, MultiLookupBytesAreTheSpecsAfterTheKey) {
    std::string out;
    const subdoc::Spec specs[] = {lookupSpec("Field_1")};
    appendLookupIn(out, {Opcode::Get, 7, 0x1234, 0, 0}, "key", specs);
    const std::string value = std::string("\xc5\x00\x00\x07", 4) + "Field_1";
    ASSERT_EQ(out.size(), kHeader + 3 + value.size());
    EXPECT_EQ(static_cast<std::uint8_t>(out[0]), 0x80);  // classic request magic
    EXPECT_EQ(static_cast<std::uint8_t>(out[1]), 0xd0);  // SUBDOC_MULTI_LOOKUP
    EXPECT_EQ(readBe16(out, 2), 3u);                     // key length
    EXPECT_EQ(out[4], 0);                                // no extras: no doc flags
    EXPECT_EQ(readBe16(out, 6), 7u);                     // vBucket
    EXPECT_EQ(readBe32(out, 8), 3 + value.size());       // body length
    EXPECT_EQ(readBe32(out, 12), 0x1234u);               // opaque
    EXPECT_EQ(out.substr(kHeader), "key" + value);
    const auto decoded = subdoc::decodeMultiLookup({}, out.substr(kHeader + 3));
    ASSERT_EQ(decoded.status, subdoc::Status::Success);
    EXPECT_EQ(decoded.specs[0].path, "Field_1");
}

TEST(PillowfightSubdocRequest, MultiMutationBytesUpsertThePathAndCarryDurability) {
    std::string out;
    const subdoc::Spec specs[] = {upsertSpec("Field_2", R"("abc")")};
    appendMutateIn(out, {Opcode::Get, 1, 9, 0, 0}, {}, "k", specs);
    const std::string value =
        std::string("\xc8\x00\x00\x07\x00\x00\x00\x05", 8) + "Field_2" + R"("abc")";
    EXPECT_EQ(static_cast<std::uint8_t>(out[0]), 0x80);
    EXPECT_EQ(static_cast<std::uint8_t>(out[1]), 0xd1);  // SUBDOC_MULTI_MUTATION
    EXPECT_EQ(out[4], 0);                                // no expiry, no doc flags
    EXPECT_EQ(out.substr(kHeader), "k" + value);
    const auto decoded = subdoc::decodeMultiMutation({}, value);
    ASSERT_EQ(decoded.status, subdoc::Status::Success);
    EXPECT_EQ(decoded.specs[0].opcode, subdoc::Opcode::DictUpsert);
    EXPECT_EQ(decoded.specs[0].value, R"("abc")");

    // A durable mutateIn: the alternative magic and frame info 1 first.
    const std::string frame = protocol::durabilityFrame(protocol::DurabilityLevel::Majority);
    std::string durable;
    appendMutateIn(durable, {Opcode::Get, 1, 9, 0, 0}, frame, "k", specs);
    EXPECT_EQ(static_cast<std::uint8_t>(durable[0]), 0x08);
    EXPECT_EQ(static_cast<std::uint8_t>(durable[2]), frame.size());
    EXPECT_EQ(durable.substr(kHeader), frame + "k" + value);
}

TEST(PillowfightSubdocRequest, AMultiPathFailureNamesTheSpecThatFailed) {
    protocol::Response lookup;
    lookup.opcode = Opcode::SubdocMultiLookup;
    lookup.status = static_cast<Status>(0xcc);
    // Spec 0 found ("1"), spec 1 PathNotFound.
    const std::string body = std::string("\x00\x00\x00\x00\x00\x01", 6) + "1" +
                             std::string("\x00\xc0\x00\x00\x00\x00", 6);
    lookup.value = body;
    EXPECT_EQ(statusName(lookup.status), "MultiPathFailure");
    EXPECT_EQ(failedSpec(lookup), "spec 1: PathNotFound (0xc0)");

    protocol::Response mutation;
    mutation.opcode = Opcode::SubdocMultiMutation;
    mutation.status = static_cast<Status>(0xcc);
    const std::string mutationBody("\x00\x00\xc1", 3);
    mutation.value = mutationBody;
    EXPECT_EQ(failedSpec(mutation), "spec 0: PathMismatch (0xc1)");

    mutation.status = Status::KeyNotFound;  // no per-spec body then
    EXPECT_EQ(failedSpec(mutation), "");
    EXPECT_EQ(statusName(Status::KeyNotFound), "Not found");
}

}  // namespace
}  // namespace kvexec::pillowfight
