// The xattr blob (docs/Document.md, "XAttr"), virtual xattrs and xattr
// specs in lookups and mutations.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "helpers.h"
#include "storage/crc32c.h"
#include "subdoc/binary_value.h"
#include "subdoc/xattr.h"

namespace kvexec::subdoc {
namespace {

using namespace test;

const std::vector<XattrPair> kPairs{
    {"_sync", R"({"cas":"deadbeefcafefeed"})"},
    {"meta", R"({"author":"Trond Norbye","content-type":"application/octet-stream"})"}};

std::string storedWithXattrs(std::string_view body) {
    return encodeXattrs(kPairs) + std::string(body);
}

DocumentMeta xattrMeta() {
    DocumentMeta meta = jsonMeta();
    meta.datatype = kDatatypeJson | kDatatypeXattr;
    return meta;
}

TEST(XattrBlob, MatchesTheDocumentedLayout) {
    const std::string blob = encodeXattrs(kPairs);
    ASSERT_GE(blob.size(), 8u);
    // Total length excludes its own four bytes; each pair is length-prefixed.
    EXPECT_EQ(blob.substr(0, 4), std::string("\x00\x00\x00\x72", 4));
    EXPECT_EQ(blob.substr(4, 4), std::string("\x00\x00\x00\x21", 4));
    EXPECT_EQ(blob.substr(8, 6), std::string("_sync\0", 6));
    EXPECT_EQ(blob.size(), 4u + 0x72);
}

TEST(XattrBlob, RoundTrips) {
    const std::string stored = storedWithXattrs(R"({"a":1})");
    auto split = splitValue(stored, kDatatypeXattr);
    ASSERT_TRUE(split);
    EXPECT_EQ(split->xattrs, kPairs);
    EXPECT_EQ(split->body, R"({"a":1})");
}

TEST(XattrBlob, NoXattrBitMeansAllBody) {
    auto split = splitValue("abc", kDatatypeJson);
    ASSERT_TRUE(split);
    EXPECT_TRUE(split->xattrs.empty());
    EXPECT_EQ(split->body, "abc");
    EXPECT_EQ(encodeXattrs({}), "");
}

TEST(XattrBlob, MalformedBlobsAreRefused) {
    const std::string good = encodeXattrs(kPairs);
    EXPECT_FALSE(splitValue("", kDatatypeXattr));
    EXPECT_FALSE(splitValue(good.substr(0, 3), kDatatypeXattr));
    EXPECT_FALSE(splitValue(good.substr(0, good.size() - 1), kDatatypeXattr));
    std::string noNul = good;
    noNul[good.size() - 1] = 'x';
    EXPECT_FALSE(splitValue(noNul, kDatatypeXattr));
    EXPECT_FALSE(
        splitValue(std::string("\x00\x00\x00\x05\x00\x00\x00\x01\x00", 9), kDatatypeXattr));
}

TEST(XattrBlob, CorruptBlobIsInternalForTheExecutor) {
    const std::vector<Spec> specs{spec(Opcode::Get, "a")};
    EXPECT_EQ(lookup("\xff\xff\xff\xff", xattrMeta(), specs).status, Status::Internal);
}

TEST(XattrLookup, ReadsUserAndSystemXattrs) {
    const std::string stored = storedWithXattrs(R"({"a":1})");
    const std::vector<Spec> specs{xspec(Opcode::Get, "_sync.cas"), xspec(Opcode::Get, "meta"),
                                  xspec(Opcode::Exists, "meta.author"),
                                  xspec(Opcode::Get, "missing"), spec(Opcode::Get, "a")};
    auto outcome = lookup(stored, xattrMeta(), specs);
    ASSERT_EQ(outcome.results.size(), 5u);
    EXPECT_EQ(outcome.results[0].value, R"("deadbeefcafefeed")");
    EXPECT_EQ(outcome.results[1].value, kPairs[1].value);
    EXPECT_EQ(outcome.results[2].status, Status::Success);
    EXPECT_EQ(outcome.results[3].status, Status::PathNotFound);
    EXPECT_EQ(outcome.results[4].value, "1");
}

TEST(XattrLookup, DocumentVirtualXattr) {
    DocumentMeta meta = xattrMeta();
    meta.cas = 0x17a1b2c3d4e5f607;
    meta.seqno = 42;
    meta.expiry = 1700000000;
    meta.flags = 0x02000006;
    const std::string body = R"({"a":1})";
    const std::vector<Spec> specs{xspec(Opcode::Get, "$document")};
    auto outcome = lookup(storedWithXattrs(body), meta, specs);
    ASSERT_EQ(outcome.status, Status::Success);
    auto doc = nlohmann::json::parse(outcome.results[0].value);
    EXPECT_EQ(doc["CAS"], "0x17a1b2c3d4e5f607");
    EXPECT_EQ(doc["seqno"], "0x000000000000002a");
    EXPECT_EQ(doc["revid"], "1");
    EXPECT_EQ(doc["exptime"], 1700000000);
    EXPECT_EQ(doc["flags"], 0x02000006);
    EXPECT_EQ(doc["value_bytes"], body.size());
    EXPECT_EQ(doc["datatype"], nlohmann::json::parse(R"(["json","xattr"])"));
    EXPECT_EQ(doc["deleted"], false);
    EXPECT_TRUE(doc["last_modified"].is_string());
    char crc[11];
    std::snprintf(crc, sizeof crc, "0x%08x", storage::crc32c(body.data(), body.size()));
    EXPECT_EQ(doc["value_crc32c"], crc);
}

TEST(XattrLookup, WithExpiryAsTheSdkAsksForIt) {
    // get(key, {withExpiry: true}): $document.exptime, $document.flags, body.
    DocumentMeta meta = jsonMeta();
    meta.expiry = 1234;
    meta.flags = 7;
    const std::vector<Spec> specs{xspec(Opcode::Get, "$document.exptime"),
                                  xspec(Opcode::Get, "$document.flags"),
                                  spec(Opcode::WholeGet, "")};
    auto outcome = lookup(R"({"x":true})", meta, specs);
    ASSERT_EQ(outcome.status, Status::Success);
    EXPECT_EQ(outcome.results[0].value, "1234");
    EXPECT_EQ(outcome.results[1].value, "7");
    EXPECT_EQ(outcome.results[2].value, R"({"x":true})");
}

// Transactions compare the vBucket's clock with their records' CAS.
TEST(XattrLookup, VbucketVirtualXattrGivesTheClockInSeconds) {
    DocumentMeta meta = jsonMeta();
    meta.hlcNow = 1'700'000'123'456'789'000ull;
    const std::vector<Spec> specs{xspec(Opcode::Get, "$vbucket"),
                                  xspec(Opcode::Get, "$vbucket.HLC.now")};
    auto outcome = lookup(R"({"x":true})", meta, specs);
    ASSERT_EQ(outcome.status, Status::Success);
    EXPECT_EQ(nlohmann::json::parse(outcome.results[0].value),
              nlohmann::json::parse(R"({"HLC":{"now":"1700000123","mode":"real"}})"));
    EXPECT_EQ(outcome.results[1].value, R"("1700000123")");
}

TEST(XattrLookup, RawDocumentSaysRaw) {
    DocumentMeta meta;
    const std::vector<Spec> specs{xspec(Opcode::Get, "$document.datatype")};
    EXPECT_EQ(lookup("bin", meta, specs).results[0].value, R"(["raw"])");
}

TEST(XattrLookup, XtocListsTheStoredKeys) {
    const std::vector<Spec> specs{xspec(Opcode::Get, "$XTOC")};
    EXPECT_EQ(lookup(storedWithXattrs("{}"), xattrMeta(), specs).results[0].value,
              R"(["_sync","meta"])");
}

TEST(XattrLookup, UnknownVirtualXattrIsUnknownVattr) {
    const std::vector<Spec> specs{xspec(Opcode::Get, "$nope")};
    EXPECT_EQ(lookup("{}", jsonMeta(), specs).results[0].status, Status::XattrUnknownVattr);
}

TEST(XattrMutation, CreatesAnXattrOnAPlainDocument) {
    auto o = mutateOne(R"({"a":1})", xspec(Opcode::DictUpsert, "meta.x", "1", path_flag::MkdirP));
    ASSERT_EQ(o.status, Status::Success);
    EXPECT_EQ(o.newDatatype, kDatatypeJson | kDatatypeXattr);
    auto split = splitValue(o.newValue, o.newDatatype);
    ASSERT_TRUE(split);
    EXPECT_EQ(split->xattrs, (std::vector<XattrPair>{{"meta", R"({"x":1})"}}));
    EXPECT_EQ(split->body, R"({"a":1})");
}

TEST(XattrMutation, ChangesOneXattrAndKeepsTheOthersBytes) {
    DocumentMeta meta = xattrMeta();
    const std::vector<Spec> specs{xspec(Opcode::DictUpsert, "_sync.rev", R"("2-a")"),
                                  spec(Opcode::Counter, "n", "1")};
    auto o = mutate(storedWithXattrs(R"({"n":1})"), meta, specs, 0);
    ASSERT_EQ(o.status, Status::Success);
    auto split = splitValue(o.newValue, o.newDatatype);
    ASSERT_TRUE(split);
    ASSERT_EQ(split->xattrs.size(), 2u);
    EXPECT_EQ(split->xattrs[0].value, R"({"cas":"deadbeefcafefeed","rev":"2-a"})");
    EXPECT_EQ(split->xattrs[1], kPairs[1]);
    EXPECT_EQ(split->body, R"({"n":2})");
}

TEST(XattrMutation, DeletingTheLastXattrDropsTheXattrBit) {
    const std::vector<XattrPair> one{{"meta", "1"}};
    DocumentMeta meta = xattrMeta();
    const std::vector<Spec> specs{xspec(Opcode::Delete, "meta")};
    auto o = mutate(encodeXattrs(one) + "{}", meta, specs, 0);
    ASSERT_EQ(o.status, Status::Success);
    EXPECT_EQ(o.newDatatype, kDatatypeJson);
    EXPECT_EQ(o.newValue, "{}");
}

TEST(XattrMutation, VirtualXattrsCannotBeModified) {
    EXPECT_EQ(mutateOne("{}", xspec(Opcode::DictUpsert, "$document.x", "1")).status,
              Status::XattrCantModifyVattr);
}

TEST(XattrMutation, InvalidKeyIsXattrInvalid) {
    EXPECT_EQ(mutateOne("{}", xspec(Opcode::DictUpsert, "#bad", "1")).status, Status::XattrInvalid);
}

TEST(XattrMutation, XattrSpecsMustComeFirst) {
    const std::vector<Spec> specs{spec(Opcode::DictUpsert, "a", "1"),
                                  xspec(Opcode::DictUpsert, "m", "1")};
    EXPECT_EQ(mutate("{}", jsonMeta(), specs, 0).status, Status::InvalidXattrOrder);
}

TEST(XattrMutation, WholeDeleteKeepsOnlySystemXattrs) {
    const std::vector<Spec> specs{spec(Opcode::WholeDelete, "")};
    auto o = mutate(storedWithXattrs("{}"), xattrMeta(), specs, 0);
    ASSERT_EQ(o.status, Status::Success);
    EXPECT_TRUE(o.deleteDocument);
    EXPECT_TRUE(o.storeAsDeleted);
    EXPECT_EQ(o.newDatatype, kDatatypeXattr);
    auto split = splitValue(o.newValue, o.newDatatype);
    ASSERT_TRUE(split);
    EXPECT_EQ(split->xattrs, (std::vector<XattrPair>{kPairs[0]}));
    EXPECT_EQ(split->body, "");
}

TEST(XattrMutation, ReplaceBodyWithXattr) {
    const std::vector<Spec> specs{xspec(Opcode::ReplaceBodyWithXattr, "_sync")};
    auto o = mutate(storedWithXattrs(R"({"old":1})"), xattrMeta(), specs, 0);
    ASSERT_EQ(o.status, Status::Success);
    EXPECT_EQ(splitValue(o.newValue, o.newDatatype)->body, kPairs[0].value);
}

// Binary xattr values (HELLO 0x21): kept as Couchbase's base64 JSON
// string, returned as bytes to a GET with the flag and as the string to
// one without, and made the body by ReplaceBodyWithXattr with the flag.
TEST(BinaryXattr, IsStoredAsCouchbasesBase64StringAndReadBackAsBytes) {
    const std::string bytes("\x00\xff\x01not json", 11);
    EXPECT_EQ(encodeBinaryValue("hi"), R"("cb-content-base64-encoded:aGk=")");
    auto o = mutateOne(R"({"a":1})", xspec(Opcode::DictUpsert, "txn.op.bin", bytes,
                                           path_flag::MkdirP | path_flag::BinaryValue));
    ASSERT_EQ(o.status, Status::Success);
    auto split = splitValue(o.newValue, o.newDatatype);
    ASSERT_TRUE(split);
    ASSERT_EQ(split->xattrs.size(), 1u);
    EXPECT_EQ(split->xattrs[0].value, R"({"op":{"bin":)" + encodeBinaryValue(bytes) + "}}");

    DocumentMeta meta = jsonMeta();
    meta.datatype = o.newDatatype;
    const auto lookup1 = [&](std::uint8_t flags) {
        const std::vector<Spec> specs{xspec(Opcode::Get, "txn.op.bin", "", flags)};
        return lookup(o.newValue, meta, specs).results.at(0);
    };
    const auto asBytes = lookup1(path_flag::BinaryValue);
    EXPECT_EQ(asBytes.status, Status::Success);
    EXPECT_EQ(asBytes.value, bytes);
    EXPECT_EQ(lookup1(0).value, encodeBinaryValue(bytes)) << "without the flag: the string";
    const std::vector<Spec> plain{xspec(Opcode::Get, "txn.op", "", path_flag::BinaryValue)};
    EXPECT_EQ(lookup(o.newValue, meta, plain).results.at(0).status, Status::FieldNotBinaryValue);
}

TEST(BinaryXattr, AValueThatOnlyLooksEncodedIsRefusedOrNotBinary) {
    EXPECT_EQ(
        mutateOne("{}", xspec(Opcode::DictUpsert, "x", R"({"b":"cb-content-base64-encoded:===="})"))
            .status,
        Status::XattrInvalid);
    EXPECT_EQ(mutateOne("{}", xspec(Opcode::DictUpsert, "x", R"("cb-content-base64-encoded:aGk=")"))
                  .status,
              Status::Success)
        << "a well-encoded one may be written without the flag";
    // Stored by a plain SET with the XATTR bit, which nothing checks.
    const std::vector<XattrPair> stored{{"x", R"("cb-content-base64-encoded:====")"}};
    DocumentMeta meta = xattrMeta();
    const std::vector<Spec> specs{xspec(Opcode::Get, "x", "", path_flag::BinaryValue)};
    EXPECT_EQ(lookup(encodeXattrs(stored) + "{}", meta, specs).results.at(0).status,
              Status::FieldNotBinaryValue);
}

TEST(BinaryXattr, ReplaceBodyWithABinaryXattrMakesItTheBody) {
    const std::string bytes("\x01\x02\x03", 3);
    const std::vector<XattrPair> staged{{"txn", R"({"bin":)" + encodeBinaryValue(bytes) +
                                                    R"(,"json":)" +
                                                    encodeBinaryValue(R"({"k":1})") + "}"}};
    DocumentMeta meta = xattrMeta();
    const auto replace = [&](const std::string& path) {
        const std::vector<Spec> specs{
            xspec(Opcode::ReplaceBodyWithXattr, path, "", path_flag::BinaryValue)};
        return mutate(encodeXattrs(staged) + "{}", meta, specs, 0);
    };
    const auto binary = replace("txn.bin");
    ASSERT_EQ(binary.status, Status::Success);
    EXPECT_EQ(splitValue(binary.newValue, binary.newDatatype)->body, bytes);
    EXPECT_EQ(binary.newDatatype, kDatatypeXattr) << "not JSON";
    const auto json = replace("txn.json");
    ASSERT_EQ(json.status, Status::Success);
    EXPECT_EQ(splitValue(json.newValue, json.newDatatype)->body, R"({"k":1})");
    EXPECT_EQ(json.newDatatype, kDatatypeXattr | kDatatypeJson) << "bytes that are JSON";
    EXPECT_EQ(replace("txn").failedStatus, Status::FieldNotBinaryValue);
}

TEST(Tombstone, AccessDeletedMutatesXattrsAndStaysDeleted) {
    DocumentMeta meta = xattrMeta();
    meta.deleted = true;
    const std::vector<XattrPair> sys{{"_txn", "{}"}};
    const std::vector<Spec> specs{xspec(Opcode::DictUpsert, "_txn.id", "1")};
    auto o = mutate(encodeXattrs(sys), meta, specs, doc_flag::AccessDeleted);
    ASSERT_EQ(o.status, Status::SuccessDeleted);
    EXPECT_TRUE(o.storeAsDeleted);
    EXPECT_EQ(splitValue(o.newValue, o.newDatatype)->xattrs[0].value, R"({"id":1})");
}

TEST(Tombstone, BodyMutationWithoutReviveIsRefused) {
    DocumentMeta meta = jsonMeta();
    meta.deleted = true;
    const std::vector<Spec> specs{spec(Opcode::DictUpsert, "a", "1")};
    EXPECT_EQ(mutate("", meta, specs, doc_flag::AccessDeleted).status,
              Status::DeletedDocumentCantHaveValue);
}

TEST(Tombstone, ReviveMakesItAlive) {
    DocumentMeta meta = jsonMeta();
    meta.deleted = true;
    const std::vector<Spec> specs{spec(Opcode::DictUpsert, "a", "1")};
    auto o = mutate("", meta, specs, doc_flag::AccessDeleted | doc_flag::ReviveDocument);
    ASSERT_EQ(o.status, Status::Success);
    EXPECT_FALSE(o.storeAsDeleted);
    EXPECT_EQ(o.newValue, R"({"a":1})");
}

TEST(Tombstone, ReviveOfALiveDocumentIsRefused) {
    const std::vector<Spec> specs{xspec(Opcode::DictUpsert, "_a", "1")};
    EXPECT_EQ(
        mutate("{}", jsonMeta(), specs, doc_flag::AccessDeleted | doc_flag::ReviveDocument).status,
        Status::CanOnlyReviveDeletedDocuments);
}

TEST(Tombstone, CreateAsDeletedMakesAnXattrOnlyTombstone) {
    const std::vector<Spec> specs{xspec(Opcode::DictUpsert, "_txn", "{}")};
    auto o = mutate(std::nullopt, jsonMeta(), specs,
                    doc_flag::Add | doc_flag::CreateAsDeleted | doc_flag::AccessDeleted);
    ASSERT_EQ(o.status, Status::SuccessDeleted);
    EXPECT_TRUE(o.createDocument);
    EXPECT_TRUE(o.storeAsDeleted);
    EXPECT_EQ(o.newDatatype, kDatatypeXattr);
}

}  // namespace
}  // namespace kvexec::subdoc
