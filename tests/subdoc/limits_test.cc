// Depth and size limits: hostile nesting must be refused without
// recursion, and large documents must work.
#include <gtest/gtest.h>

#include "helpers.h"
#include "subdoc/json_text.h"

namespace kvexec::subdoc {
namespace {

using namespace test;

std::string nested(std::size_t depth, std::string_view inner = "1") {
    return std::string(depth, '[') + std::string(inner) + std::string(depth, ']');
}

std::string nestedObjects(std::size_t depth) {
    std::string s;
    for (std::size_t i = 0; i < depth; ++i) {
        s += R"({"a":)";
    }
    s += "1";
    s += std::string(depth, '}');
    return s;
}

TEST(Depth, BracketDepthIgnoresStrings) {
    EXPECT_EQ(bracketDepth(R"({"a":"[[[[\"[["})"), 1u);
    EXPECT_EQ(bracketDepth("[[{}]]"), 3u);
    EXPECT_EQ(bracketDepth("1"), 0u);
}

TEST(Depth, TenThousandDeepDocumentIsDocTooDeep) {
    const std::string doc = nested(10000);
    EXPECT_EQ(lookupOne(doc, spec(Opcode::Get, "[0]")).status, Status::DocTooDeep);
    EXPECT_EQ(statusOf(mutateOne(doc, spec(Opcode::ArrayPushLast, "", "1"))), Status::DocTooDeep);
    EXPECT_EQ(lookupOne(std::string(10000, '['), spec(Opcode::Get, "[0]")).status,
              Status::DocTooDeep);
}

TEST(Depth, ThirtyTwoLevelsAreFineThirtyThreeAreNot) {
    EXPECT_EQ(lookupOne(nestedObjects(32), spec(Opcode::Exists, "a")).status, Status::Success);
    EXPECT_EQ(lookupOne(nestedObjects(33), spec(Opcode::Exists, "a")).status, Status::DocTooDeep);
}

TEST(Depth, ValueTooDeepForItsPlace) {
    EXPECT_EQ(statusOf(mutateOne("{}", spec(Opcode::DictUpsert, "a", nested(10000)))),
              Status::ValueTooDeep);
    // 31 levels fit at the top level (1 + 31 = 32) but not one level down.
    EXPECT_EQ(mutateOne("{}", spec(Opcode::DictUpsert, "a", nested(31))).status, Status::Success);
    EXPECT_EQ(statusOf(mutateOne(R"({"b":{}})", spec(Opcode::DictUpsert, "b.a", nested(31)))),
              Status::ValueTooDeep);
    EXPECT_EQ(statusOf(mutateOne(R"({"b":[]})", spec(Opcode::ArrayPushLast, "b", nested(31)))),
              Status::ValueTooDeep);
}

TEST(Depth, DeepXattrValueIsValueTooDeep) {
    EXPECT_EQ(statusOf(mutateOne("{}", xspec(Opcode::DictUpsert, "x", nested(40)))),
              Status::ValueTooDeep);
    EXPECT_EQ(mutateOne("{}", xspec(Opcode::DictUpsert, "x", nested(31))).status, Status::Success);
}

TEST(Size, HugeDocumentWorks) {
    std::string doc = R"({"items":[)";
    for (int i = 0; i < 200000; ++i) {
        // append(), not operator+: GCC 12 warns falsely on + chains (bug 105329).
        doc.append(i ? "," : "").append(R"({"id":)").append(std::to_string(i));
        doc.append(R"(,"s":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"})");
    }
    doc += "]}";
    ASSERT_GT(doc.size(), 10u << 20);
    EXPECT_EQ(lookupOne(doc, spec(Opcode::Get, "items[-1].id")).value, "199999");
    EXPECT_EQ(lookupOne(doc, spec(Opcode::GetCount, "items")).value, "200000");
    auto o = mutateOne(doc, spec(Opcode::Counter, "items[100000].id", "1"));
    ASSERT_EQ(o.status, Status::Success);
    EXPECT_EQ(o.results[0].second, "100001");
    EXPECT_EQ(o.newValue.size(), doc.size());
}

TEST(Size, LongStringValues) {
    const std::string big(4 << 20, 'v');
    auto o = mutateOne("{}", spec(Opcode::DictUpsert, "s", '"' + big + '"'));
    ASSERT_EQ(o.status, Status::Success);
    EXPECT_EQ(o.newValue.size(), big.size() + 8);
}

}  // namespace
}  // namespace kvexec::subdoc
