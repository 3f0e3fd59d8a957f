// Extended attributes in a value (kvexec/engine/xattrs.h): the blob is
// found by its length prefix, and mutations that change only the body keep
// it, as Couchbase keeps a document's xattrs across a plain set.
#include <gtest/gtest.h>

#include "engine_test_support.h"
#include "kvexec/engine/xattrs.h"
#include "manual_bucket_fixture.h"

namespace kvexec::engine {
namespace {

using test::getNow;
using test::setRequest;
using test::storeNow;

// A blob holding one pair, {"meta": "x"}: u32 total, then u32 pair length,
// key, NUL, value, NUL.
std::string blob() {
    const std::string pair = std::string("meta") + '\0' + "\"x\"" + '\0';
    std::string b(4, '\0');
    b += std::string{0, 0, 0, static_cast<char>(pair.size())} + pair;
    b[3] = static_cast<char>(b.size() - 4);
    return b;
}

TEST(Xattrs, TheBlobIsFoundByItsLengthAndOnlyWithTheXattrBit) {
    const std::string value = blob() + "{\"a\":1}";
    EXPECT_EQ(xattrBlob(value, kDatatypeXattr | kDatatypeJson), blob());
    EXPECT_EQ(documentBody(value, kDatatypeXattr), "{\"a\":1}");
    EXPECT_EQ(documentBody(value, kDatatypeJson), value);
    EXPECT_EQ(documentBody("ab", kDatatypeXattr), "ab");       // too short for a length
    const std::string lying = std::string{0, 0, 1, 0} + "xy";  // claims 256 bytes
    EXPECT_EQ(xattrBlob(lying, kDatatypeXattr), lying);
    EXPECT_EQ(documentBody(lying, kDatatypeXattr), "");
}

class XattrMutationsTest : public ManualBucketTest {
  protected:
    void SetUp() override {
        ManualBucketTest::SetUp();
        auto request = setRequest(0, "doc", blob() + "10");
        request.datatype = kDatatypeXattr;
        ASSERT_EQ(storeNow(*bucket, request)->status, Status::Success);
    }
    std::string body() {
        const auto got = getNow(*bucket, 0, "doc");
        EXPECT_EQ(xattrBlob(got.item.value, got.item.meta.datatype), blob());
        return std::string(documentBody(got.item.value, got.item.meta.datatype));
    }
};

TEST_F(XattrMutationsTest, ASetOfTheBodyAloneKeepsTheXattrs) {
    auto request = setRequest(0, "doc", "{\"b\":2}");
    request.datatype = kDatatypeJson;
    ASSERT_EQ(storeNow(*bucket, request)->status, Status::Success);
    EXPECT_EQ(body(), "{\"b\":2}");
    EXPECT_EQ(getNow(*bucket, 0, "doc").item.meta.datatype, kDatatypeJson | kDatatypeXattr);
}

TEST_F(XattrMutationsTest, AppendPrependAndCountersChangeTheBodyOnly) {
    auto append = setRequest(0, "doc", "0");
    append.operation = StoreOperation::Append;
    storeNow(*bucket, append);
    auto prepend = setRequest(0, "doc", "1");
    prepend.operation = StoreOperation::Prepend;
    storeNow(*bucket, prepend);
    EXPECT_EQ(body(), "1100");
    ArithmeticRequest incr;
    incr.key = "doc";
    incr.delta = 5;
    ArithmeticResult result;
    bucket->arithmetic(incr, [&](const ArithmeticResult& r) { result = r; });
    ASSERT_EQ(result.status, Status::Success);
    EXPECT_EQ(result.value, 1105u);
    EXPECT_EQ(body(), "1105");
}

TEST_F(XattrMutationsTest, AValueThatBringsItsOwnXattrsReplacesThem) {
    auto request = setRequest(0, "doc", std::string{0, 0, 0, 0} + "plain");
    request.datatype = kDatatypeXattr;
    ASSERT_EQ(storeNow(*bucket, request)->status, Status::Success);
    const auto got = getNow(*bucket, 0, "doc");
    EXPECT_EQ(documentBody(got.item.value, got.item.meta.datatype), "plain");
    EXPECT_EQ(xattrBlob(got.item.value, got.item.meta.datatype).size(), 4u);
}

TEST_F(XattrMutationsTest, BeforeQueueWritesTheWritesOwnCasAndSeqnoIntoTheValue) {
    auto request = setRequest(0, "stamped", "cas=################ seqno=####");
    request.beforeQueue = [](std::string& value, std::uint64_t cas, Seqno seqno) {
        value.replace(4, 16, std::to_string(cas).substr(0, 16));
        value.replace(27, 4, std::to_string(seqno + 1000));
    };
    const auto stored = storeNow(*bucket, request);
    ASSERT_EQ(stored->status, Status::Success);
    const auto got = getNow(*bucket, 0, "stamped");
    EXPECT_EQ(got.item.value, "cas=" + std::to_string(stored->cas).substr(0, 16) +
                                  " seqno=" + std::to_string(stored->token.seqno + 1000));
}

}  // namespace
}  // namespace kvexec::engine
