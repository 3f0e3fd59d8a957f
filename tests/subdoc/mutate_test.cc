// Mutations: every opcode and its error codes, doc flags, and the
// all-or-nothing rule of multi-mutations (docs/SubDocument.md).
#include <gtest/gtest.h>

#include "helpers.h"
#include "subdoc/xattr.h"

namespace kvexec::subdoc {
namespace {

using namespace test;

std::string bodyOf(const MutationOutcome& o) {
    auto split = splitValue(o.newValue, o.newDatatype);
    return split ? std::string(split->body) : "<corrupt>";
}

std::string apply(std::string_view doc, const Spec& s, std::uint8_t docFlags = 0) {
    auto o = mutateOne(doc, s, docFlags);
    EXPECT_EQ(o.status, Status::Success) << statusName(statusOf(o));
    return bodyOf(o);
}

TEST(DictAdd, AddsANewKeyKeepingKeyOrder) {
    EXPECT_EQ(apply(R"({"z":1,"a":2})", spec(Opcode::DictAdd, "m", R"("new")")),
              R"({"z":1,"a":2,"m":"new"})");
}

TEST(DictAdd, ExistingPathIsPathExists) {
    EXPECT_EQ(statusOf(mutateOne(R"({"a":1})", spec(Opcode::DictAdd, "a", "2"))),
              Status::PathExists);
}

TEST(DictAdd, MissingIntermediateIsPathNotFound) {
    EXPECT_EQ(statusOf(mutateOne(R"({})", spec(Opcode::DictAdd, "a.b.c", "1"))),
              Status::PathNotFound);
}

TEST(DictAdd, MkdirPCreatesIntermediates) {
    EXPECT_EQ(apply(R"({"x":{}})", spec(Opcode::DictAdd, "x.a.b", "true", path_flag::MkdirP)),
              R"({"x":{"a":{"b":true}}})");
}

TEST(DictAdd, MkdirPDoesNotCreateArrayElements) {
    EXPECT_EQ(statusOf(mutateOne(R"({})", spec(Opcode::DictAdd, "a[0].b", "1", path_flag::MkdirP))),
              Status::PathNotFound);
}

TEST(DictAdd, PathEndingInAnIndexIsPathInvalid) {
    EXPECT_EQ(statusOf(mutateOne(R"({"a":[1]})", spec(Opcode::DictAdd, "a[0]", "2"))),
              Status::PathInvalid);
}

TEST(DictAdd, EmptyPathIsRejected) {
    // The codec answers InvalidArguments for the request as a whole.
    EXPECT_EQ(mutateOne(R"({})", spec(Opcode::DictUpsert, "", "1")).status,
              Status::InvalidArguments);
}

TEST(DictAdd, PathThroughAScalarIsPathMismatch) {
    EXPECT_EQ(statusOf(mutateOne(R"({"a":1})", spec(Opcode::DictAdd, "a.b", "1"))),
              Status::PathMismatch);
    EXPECT_EQ(statusOf(mutateOne(R"([1])", spec(Opcode::DictAdd, "b", "1"))), Status::PathMismatch);
}

TEST(DictAdd, InvalidValueIsValueCantInsert) {
    for (const char* bad : {"{", "1,2", "nul", "'x'", "\"unterminated"}) {
        EXPECT_EQ(statusOf(mutateOne(R"({})", spec(Opcode::DictAdd, "a", bad))),
                  Status::ValueCantInsert)
            << bad;
    }
}

TEST(DictUpsert, ReplacesOrAdds) {
    EXPECT_EQ(apply(R"({"a":1,"b":2})", spec(Opcode::DictUpsert, "a", R"([1,{"x":null}])")),
              R"({"a":[1,{"x":null}],"b":2})");
    EXPECT_EQ(apply(R"({"a":1})", spec(Opcode::DictUpsert, "b", "2")), R"({"a":1,"b":2})");
}

TEST(Replace, ReplacesAnExistingValue) {
    EXPECT_EQ(apply(R"({"a":{"b":1}})", spec(Opcode::Replace, "a.b", R"("two")")),
              R"({"a":{"b":"two"}})");
    EXPECT_EQ(apply(R"({"a":[1,2,3]})", spec(Opcode::Replace, "a[-1]", "9")), R"({"a":[1,2,9]})");
}

TEST(Replace, MissingPathIsPathNotFound) {
    EXPECT_EQ(statusOf(mutateOne(R"({"a":1})", spec(Opcode::Replace, "b", "2"))),
              Status::PathNotFound);
}

TEST(Delete, RemovesAKey) {
    EXPECT_EQ(apply(R"({"a":1,"b":2})", spec(Opcode::Delete, "a")), R"({"b":2})");
}

TEST(Delete, RemovesAnArrayElementAndTheLastOne) {
    EXPECT_EQ(apply(R"({"a":[1,2,3]})", spec(Opcode::Delete, "a[1]")), R"({"a":[1,3]})");
    EXPECT_EQ(apply(R"({"a":[1,2,3]})", spec(Opcode::Delete, "a[-1]")), R"({"a":[1,2]})");
}

TEST(Delete, MissingPathIsPathNotFound) {
    EXPECT_EQ(statusOf(mutateOne(R"({"a":[1]})", spec(Opcode::Delete, "a[3]"))),
              Status::PathNotFound);
    EXPECT_EQ(statusOf(mutateOne(R"({"a":[1]})", spec(Opcode::Delete, "b"))), Status::PathNotFound);
}

TEST(ArrayPush, LastAndFirst) {
    EXPECT_EQ(apply(R"({"a":[1]})", spec(Opcode::ArrayPushLast, "a", "2")), R"({"a":[1,2]})");
    EXPECT_EQ(apply(R"({"a":[1]})", spec(Opcode::ArrayPushFirst, "a", "0")), R"({"a":[0,1]})");
}

TEST(ArrayPush, SeveralCommaSeparatedValues) {
    EXPECT_EQ(apply(R"({"a":[1]})", spec(Opcode::ArrayPushLast, "a", R"(2, "x", [3], false)")),
              R"({"a":[1,2,"x",[3],false]})");
    EXPECT_EQ(apply(R"({"a":[9]})", spec(Opcode::ArrayPushFirst, "a", "1,2")), R"({"a":[1,2,9]})");
}

TEST(ArrayPush, EmptyPathIsTheRootArray) {
    EXPECT_EQ(apply(R"([1])", spec(Opcode::ArrayPushLast, "", "2")), "[1,2]");
    EXPECT_EQ(statusOf(mutateOne(R"({})", spec(Opcode::ArrayPushLast, "", "2"))),
              Status::PathMismatch);
}

TEST(ArrayPush, MissingArrayIsPathNotFoundUnlessMkdirP) {
    EXPECT_EQ(statusOf(mutateOne(R"({})", spec(Opcode::ArrayPushLast, "a.b", "1"))),
              Status::PathNotFound);
    EXPECT_EQ(apply(R"({})", spec(Opcode::ArrayPushLast, "a.b", "1", path_flag::MkdirP)),
              R"({"a":{"b":[1]}})");
}

TEST(ArrayPush, NotAnArrayIsPathMismatch) {
    EXPECT_EQ(statusOf(mutateOne(R"({"a":{}})", spec(Opcode::ArrayPushLast, "a", "1"))),
              Status::PathMismatch);
}

TEST(ArrayPush, InvalidValuesAreValueCantInsert) {
    for (const char* bad : {"1,", ",1", "1 2", "]", "1],[2"}) {
        EXPECT_EQ(statusOf(mutateOne(R"({"a":[]})", spec(Opcode::ArrayPushLast, "a", bad))),
                  Status::ValueCantInsert)
            << bad;
    }
}

TEST(ArrayInsert, InsertsAtTheIndexAndAtTheEnd) {
    EXPECT_EQ(apply(R"({"a":[1,3]})", spec(Opcode::ArrayInsert, "a[1]", "2")), R"({"a":[1,2,3]})");
    EXPECT_EQ(apply(R"({"a":[1]})", spec(Opcode::ArrayInsert, "a[1]", "2,3")), R"({"a":[1,2,3]})");
    EXPECT_EQ(apply(R"({"a":[]})", spec(Opcode::ArrayInsert, "a[0]", "1")), R"({"a":[1]})");
}

TEST(ArrayInsert, IndexBeyondTheSizeIsPathNotFound) {
    EXPECT_EQ(statusOf(mutateOne(R"({"a":[1]})", spec(Opcode::ArrayInsert, "a[2]", "1"))),
              Status::PathNotFound);
}

TEST(ArrayInsert, PathMustEndInANonNegativeIndex) {
    EXPECT_EQ(statusOf(mutateOne(R"({"a":[1]})", spec(Opcode::ArrayInsert, "a", "1"))),
              Status::PathInvalid);
    EXPECT_EQ(statusOf(mutateOne(R"({"a":[1]})", spec(Opcode::ArrayInsert, "a[-1]", "1"))),
              Status::PathInvalid);
}

TEST(ArrayInsert, ParentNotAnArrayIsPathMismatch) {
    EXPECT_EQ(statusOf(mutateOne(R"({"a":{}})", spec(Opcode::ArrayInsert, "a[0]", "1"))),
              Status::PathMismatch);
}

TEST(ArrayAddUnique, AddsANewPrimitive) {
    EXPECT_EQ(apply(R"({"a":[1,"x"]})", spec(Opcode::ArrayAddUnique, "a", "2")),
              R"({"a":[1,"x",2]})");
}

TEST(ArrayAddUnique, ExistingValueIsPathExists) {
    EXPECT_EQ(statusOf(mutateOne(R"({"a":[1,"x"]})", spec(Opcode::ArrayAddUnique, "a", R"("x")"))),
              Status::PathExists);
}

TEST(ArrayAddUnique, ComparesByTextNotByValue) {
    EXPECT_EQ(apply(R"({"a":[1]})", spec(Opcode::ArrayAddUnique, "a", R"("1")")),
              R"({"a":[1,"1"]})");
    EXPECT_EQ(apply(R"({"a":[1]})", spec(Opcode::ArrayAddUnique, "a", "1.0")), R"({"a":[1,1.0]})");
}

TEST(ArrayAddUnique, NonPrimitiveValueIsValueCantInsert) {
    EXPECT_EQ(statusOf(mutateOne(R"({"a":[]})", spec(Opcode::ArrayAddUnique, "a", "[1]"))),
              Status::ValueCantInsert);
    EXPECT_EQ(statusOf(mutateOne(R"({"a":[]})", spec(Opcode::ArrayAddUnique, "a", "1,2"))),
              Status::ValueCantInsert);
}

TEST(ArrayAddUnique, ArrayHoldingContainersIsPathMismatch) {
    EXPECT_EQ(statusOf(mutateOne(R"({"a":[{}]})", spec(Opcode::ArrayAddUnique, "a", "1"))),
              Status::PathMismatch);
}

TEST(Counter, AddsAndReturnsTheNewValue) {
    auto o = mutateOne(R"({"n":5})", spec(Opcode::Counter, "n", "-7"));
    ASSERT_EQ(o.status, Status::Success);
    EXPECT_EQ(bodyOf(o), R"({"n":-2})");
    ASSERT_EQ(o.results.size(), 1u);
    EXPECT_EQ(o.results[0], (std::pair<std::uint8_t, std::string>{0, "-2"}));
}

TEST(Counter, MissingEntryStartsAtZero) {
    EXPECT_EQ(apply(R"({})", spec(Opcode::Counter, "n", "3")), R"({"n":3})");
    EXPECT_EQ(statusOf(mutateOne(R"({})", spec(Opcode::Counter, "a.n", "3"))),
              Status::PathNotFound);
    EXPECT_EQ(apply(R"({})", spec(Opcode::Counter, "a.n", "3", path_flag::MkdirP)),
              R"({"a":{"n":3}})");
}

TEST(Counter, NonNumberIsPathMismatch) {
    for (const char* doc : {R"({"n":"5"})", R"({"n":[]})", R"({"n":1.5})", R"({"n":null})"}) {
        EXPECT_EQ(statusOf(mutateOne(doc, spec(Opcode::Counter, "n", "1"))), Status::PathMismatch)
            << doc;
    }
}

TEST(Counter, ExistingNumberBeyondInt64IsNumRange) {
    EXPECT_EQ(statusOf(mutateOne(R"({"n":9223372036854775808})", spec(Opcode::Counter, "n", "1"))),
              Status::NumRange);
    EXPECT_EQ(
        statusOf(mutateOne(R"({"n":123456789012345678901234})", spec(Opcode::Counter, "n", "1"))),
        Status::NumRange);
}

TEST(Counter, OverflowIsValueCantInsertAsCouchbaseAnswers) {
    EXPECT_EQ(statusOf(mutateOne(R"({"n":9223372036854775807})", spec(Opcode::Counter, "n", "1"))),
              Status::ValueCantInsert);
    EXPECT_EQ(
        statusOf(mutateOne(R"({"n":-9223372036854775808})", spec(Opcode::Counter, "n", "-1"))),
        Status::ValueCantInsert);
}

TEST(Counter, BadDeltaIsDeltaInvalid) {
    for (const char* bad : {"0", "1.5", "x", "+1", " 1", "99999999999999999999", "-0"}) {
        EXPECT_EQ(statusOf(mutateOne(R"({"n":1})", spec(Opcode::Counter, "n", bad))),
                  Status::DeltaInvalid)
            << bad;
    }
}

TEST(Counter, OnAnArrayElement) {
    EXPECT_EQ(apply(R"({"a":[1,2]})", spec(Opcode::Counter, "a[-1]", "10")), R"({"a":[1,12]})");
}

TEST(Mutation, BodyNotJsonIsDocNotJson) {
    EXPECT_EQ(statusOf(mutateOne("not json", spec(Opcode::DictUpsert, "a", "1"))),
              Status::DocNotJson);
}

TEST(MultiMutation, AppliesEverySpecInOrder) {
    const std::vector<Spec> specs{
        spec(Opcode::ArrayAddUnique, "logins", R"("1.2.3.4")"), spec(Opcode::Counter, "count", "1"),
        spec(Opcode::DictUpsert, "state", R"("in")"), spec(Opcode::Counter, "count", "5")};
    auto o = mutate(R"({"logins":[],"count":41})", jsonMeta(), specs, 0);
    ASSERT_EQ(o.status, Status::Success);
    EXPECT_EQ(bodyOf(o), R"({"logins":["1.2.3.4"],"count":47,"state":"in"})");
    ASSERT_EQ(o.results.size(), 2u);
    EXPECT_EQ(o.results[0], (std::pair<std::uint8_t, std::string>{1, "42"}));
    EXPECT_EQ(o.results[1], (std::pair<std::uint8_t, std::string>{3, "47"}));
    EXPECT_EQ(o.newDatatype, kDatatypeJson);
}

TEST(MultiMutation, AFailingThirdSpecLeavesNothingToStore) {
    const std::vector<Spec> specs{
        spec(Opcode::DictUpsert, "a", "1"), spec(Opcode::Counter, "n", "1"),
        spec(Opcode::Replace, "missing", "1"), spec(Opcode::DictUpsert, "b", "1")};
    auto o = mutate(R"({"n":1})", jsonMeta(), specs, 0);
    EXPECT_EQ(o.status, Status::MultiPathFailure);
    EXPECT_EQ(o.failedIndex, 2u);
    EXPECT_EQ(o.failedStatus, Status::PathNotFound);
    EXPECT_TRUE(o.newValue.empty());
    EXPECT_TRUE(o.results.empty());
}

TEST(MultiMutation, LaterSpecsSeeEarlierChanges) {
    const std::vector<Spec> specs{spec(Opcode::DictAdd, "a", "[]"),
                                  spec(Opcode::ArrayPushLast, "a", "1"),
                                  spec(Opcode::Delete, "old")};
    auto o = mutate(R"({"old":0})", jsonMeta(), specs, 0);
    ASSERT_EQ(o.status, Status::Success);
    EXPECT_EQ(bodyOf(o), R"({"a":[1]})");
}

TEST(DocFlags, NoDocumentWithoutMkdocIsKeyNotFound) {
    EXPECT_EQ(mutateOne(std::nullopt, spec(Opcode::DictUpsert, "a", "1")).status,
              Status::KeyNotFound);
}

TEST(DocFlags, MkdocCreatesFromAnEmptyObjectOrArray) {
    auto o = mutateOne(std::nullopt, spec(Opcode::DictUpsert, "a.b", "1"), doc_flag::Mkdoc);
    ASSERT_EQ(o.status, Status::Success);
    EXPECT_TRUE(o.createDocument);
    EXPECT_EQ(bodyOf(o), R"({"a":{"b":1}})");
    o = mutateOne(std::nullopt, spec(Opcode::ArrayPushFirst, "", "1"), doc_flag::Mkdoc);
    EXPECT_EQ(bodyOf(o), "[1]");
}

TEST(DocFlags, MkdocOnAnExistingDocumentMutatesIt) {
    auto o = mutateOne(R"({"x":1})", spec(Opcode::DictUpsert, "a", "1"), doc_flag::Mkdoc);
    ASSERT_EQ(o.status, Status::Success);
    EXPECT_FALSE(o.createDocument);
    EXPECT_EQ(bodyOf(o), R"({"x":1,"a":1})");
}

TEST(DocFlags, AddOnAnExistingDocumentIsKeyExists) {
    EXPECT_EQ(mutateOne(R"({})", spec(Opcode::DictUpsert, "a", "1"), doc_flag::Add).status,
              Status::KeyExists);
    auto o = mutateOne(std::nullopt, spec(Opcode::DictUpsert, "a", "1"), doc_flag::Add);
    EXPECT_EQ(o.status, Status::Success);
    EXPECT_TRUE(o.createDocument);
}

TEST(DocFlags, AddWithMkdocIsInvalidArguments) {
    EXPECT_EQ(
        mutateOne(R"({})", spec(Opcode::DictUpsert, "a", "1"), doc_flag::Add | doc_flag::Mkdoc)
            .status,
        Status::InvalidArguments);
}

TEST(WholeDocument, SetReplacesTheBody) {
    auto o = mutateOne(R"({"a":1})", spec(Opcode::WholeSet, "", R"({"b":2})"));
    ASSERT_EQ(o.status, Status::Success);
    EXPECT_EQ(bodyOf(o), R"({"b":2})");
    EXPECT_EQ(o.newDatatype, kDatatypeJson);
    o = mutateOne(R"({"a":1})", spec(Opcode::WholeSet, "", "raw bytes"));
    EXPECT_EQ(bodyOf(o), "raw bytes");
    EXPECT_EQ(o.newDatatype, 0);
}

TEST(WholeDocument, DeleteSetsDeleteDocument) {
    auto o = mutateOne(R"({"a":1})", spec(Opcode::WholeDelete, ""));
    ASSERT_EQ(o.status, Status::Success);
    EXPECT_TRUE(o.deleteDocument);
    EXPECT_TRUE(o.newValue.empty());
}

TEST(WholeDocument, UntouchedBodyKeepsItsBytes) {
    const std::string doc = "{ \"a\" : 1.50 }";
    auto o = mutateOne(doc, xspec(Opcode::DictUpsert, "meta", "1"));
    ASSERT_EQ(o.status, Status::Success);
    EXPECT_EQ(bodyOf(o), doc);
}

}  // namespace
}  // namespace kvexec::subdoc
