// Lookups: GET, EXISTS, GET_COUNT and the whole-document GET, with their
// per-spec statuses (docs/SubDocument.md, "Retrieval Commands").
#include <gtest/gtest.h>

#include "helpers.h"

namespace kvexec::subdoc {
namespace {

using namespace test;

constexpr std::string_view kDoc =
    R"({"type":"product","pDetails":{"audience":"children"},"pDistributors":[{"dName":"A","dAdded":["Feb",36,2025]},{"dName":"B","dAdded":["May",72,1492]}],"dot.ted.field":{"subfield":1},"back`tick`field":null,"n":7})";

TEST(Lookup, GetReturnsTheValueAsJson) {
    EXPECT_EQ(lookupOne(kDoc, spec(Opcode::Get, "type")).value, R"("product")");
    EXPECT_EQ(lookupOne(kDoc, spec(Opcode::Get, "pDetails")).value, R"({"audience":"children"})");
    EXPECT_EQ(lookupOne(kDoc, spec(Opcode::Get, "pDistributors[1].dAdded[2]")).value, "1492");
    EXPECT_EQ(lookupOne(kDoc, spec(Opcode::Get, "`dot.ted.field`.subfield")).value, "1");
    EXPECT_EQ(lookupOne(kDoc, spec(Opcode::Get, "`back``tick``field`")).value, "null");
}

TEST(Lookup, MinusOneIsTheLastElement) {
    EXPECT_EQ(lookupOne(kDoc, spec(Opcode::Get, "pDistributors[-1].dAdded[-1]")).value, "1492");
}

TEST(Lookup, MissingPathIsPathNotFound) {
    EXPECT_EQ(lookupOne(kDoc, spec(Opcode::Get, "nope")).status, Status::PathNotFound);
    EXPECT_EQ(lookupOne(kDoc, spec(Opcode::Get, "pDistributors[5]")).status, Status::PathNotFound);
    EXPECT_EQ(lookupOne(R"({"a":[]})", spec(Opcode::Get, "a[-1]")).status, Status::PathNotFound);
}

TEST(Lookup, PathThroughTheWrongTypeIsPathMismatch) {
    EXPECT_EQ(lookupOne(kDoc, spec(Opcode::Get, "pDistributors.count")).status,
              Status::PathMismatch);
    EXPECT_EQ(lookupOne(kDoc, spec(Opcode::Get, "type.category")).status, Status::PathMismatch);
    EXPECT_EQ(lookupOne(kDoc, spec(Opcode::Get, "pDetails[0]")).status, Status::PathMismatch);
}

TEST(Lookup, InvalidPathIsPathInvalid) {
    EXPECT_EQ(lookupOne(kDoc, spec(Opcode::Get, "a..b")).status, Status::PathInvalid);
}

TEST(Lookup, ExistsReturnsNoValue) {
    auto r = lookupOne(kDoc, spec(Opcode::Exists, "pDetails.audience"));
    EXPECT_EQ(r.status, Status::Success);
    EXPECT_EQ(r.value, "");
    EXPECT_EQ(lookupOne(kDoc, spec(Opcode::Exists, "pDetails.x")).status, Status::PathNotFound);
}

TEST(Lookup, GetCountCountsContainers) {
    EXPECT_EQ(lookupOne(kDoc, spec(Opcode::GetCount, "pDistributors")).value, "2");
    EXPECT_EQ(lookupOne(kDoc, spec(Opcode::GetCount, "pDetails")).value, "1");
}

TEST(Lookup, GetCountOfAScalarIsPathMismatch) {
    EXPECT_EQ(lookupOne(kDoc, spec(Opcode::GetCount, "n")).status, Status::PathMismatch);
}

TEST(Lookup, WholeDocumentGetReturnsTheBodyAsStored) {
    const std::string doc = "{ \"a\" : 1 }";
    EXPECT_EQ(lookupOne(doc, spec(Opcode::WholeGet, "")).value, doc);
}

TEST(Lookup, WholeDocumentGetWorksOnANonJsonBody) {
    const std::vector<Spec> specs{spec(Opcode::WholeGet, ""), spec(Opcode::Get, "a")};
    DocumentMeta meta;  // raw
    auto outcome = lookup("\x01\x02 binary", meta, specs);
    EXPECT_EQ(outcome.status, Status::MultiPathFailure);
    EXPECT_EQ(outcome.results[0].status, Status::Success);
    EXPECT_EQ(outcome.results[0].value, "\x01\x02 binary");
    EXPECT_EQ(outcome.results[1].status, Status::DocNotJson);
}

TEST(Lookup, MultiLookupReportsEachSpec) {
    const std::vector<Spec> specs{spec(Opcode::Get, "type"), spec(Opcode::Get, "cc"),
                                  spec(Opcode::Exists, "n"), spec(Opcode::GetCount, "pDetails")};
    auto outcome = lookup(kDoc, jsonMeta(), specs);
    ASSERT_EQ(outcome.results.size(), 4u);
    EXPECT_EQ(outcome.status, Status::MultiPathFailure);
    EXPECT_EQ(outcome.results[0].value, R"("product")");
    EXPECT_EQ(outcome.results[1].status, Status::PathNotFound);
    EXPECT_EQ(outcome.results[2].status, Status::Success);
    EXPECT_EQ(outcome.results[3].value, "1");
}

TEST(Lookup, AllSpecsSucceedingIsSuccess) {
    const std::vector<Spec> specs{spec(Opcode::Get, "type"), spec(Opcode::Get, "n")};
    EXPECT_EQ(lookup(kDoc, jsonMeta(), specs).status, Status::Success);
}

TEST(Lookup, DeletedDocumentAnswersWithTheDeletedStatuses) {
    DocumentMeta meta = jsonMeta();
    meta.deleted = true;
    const std::vector<Spec> ok{xspec(Opcode::Get, "$document.deleted")};
    auto outcome = lookup("", meta, ok, doc_flag::AccessDeleted);
    EXPECT_EQ(outcome.status, Status::SuccessDeleted);
    EXPECT_EQ(outcome.results[0].value, "true");
    const std::vector<Spec> body{spec(Opcode::Get, "a")};
    EXPECT_EQ(lookup("", meta, body, doc_flag::AccessDeleted).status,
              Status::MultiPathFailureDeleted);
}

TEST(Lookup, MutationOpcodeInALookupIsInvalidCombo) {
    const std::vector<Spec> specs{spec(Opcode::DictUpsert, "a", "1")};
    auto outcome = lookup(kDoc, jsonMeta(), specs);
    EXPECT_EQ(outcome.status, Status::InvalidCombo);
    EXPECT_TRUE(outcome.results.empty());
}

TEST(Lookup, KeyOrderAndUnicodeSurvive) {
    EXPECT_EQ(lookupOne(R"({"o":{"z":1,"a":2,"é":"ü"}})", spec(Opcode::Get, "o")).value,
              R"({"z":1,"a":2,"é":"ü"})");
}

}  // namespace
}  // namespace kvexec::subdoc
