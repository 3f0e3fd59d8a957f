// Macro expansion in xattrs (ExpandMacros): ${Mutation.CAS} and
// ${Mutation.seqno} become slots the caller fills after the store;
// ${Mutation.value_crc32c} and ${$document...} are written directly.
#include <gtest/gtest.h>

#include "helpers.h"
#include "storage/crc32c.h"
#include "subdoc/xattr.h"

namespace kvexec::subdoc {
namespace {

using namespace test;

constexpr std::uint8_t kMacro = path_flag::ExpandMacros | path_flag::MkdirP;

std::vector<XattrPair> xattrsOf(const MutationOutcome& o) {
    return splitValue(o.newValue, o.newDatatype)->xattrs;
}

TEST(Macros, CasAndSeqnoAreSlotsFilledByExpandMacros) {
    const std::vector<Spec> specs{
        xspec(Opcode::DictUpsert, "_txn.cas", R"("${Mutation.CAS}")", kMacro),
        xspec(Opcode::DictUpsert, "_txn.seq", R"("${Mutation.seqno}")", kMacro)};
    auto o = mutate(R"({"a":1})", jsonMeta(), specs, 0);
    ASSERT_EQ(o.status, Status::Success);
    ASSERT_EQ(o.macros.size(), 2u);
    expandMacros(o, 0x1122334455667788ull, 5);
    EXPECT_EQ(xattrsOf(o)[0].value, R"({"cas":"0x8877665544332211","seq":"0x0000000000000005"})");
    EXPECT_EQ(splitValue(o.newValue, o.newDatatype)->body, R"({"a":1})");
}

TEST(Macros, UserTextLikeATokenIsNotExpanded) {
    DocumentMeta meta = jsonMeta();
    meta.datatype |= kDatatypeXattr;
    const std::vector<XattrPair> stored{{"_txn", R"({"t":"~kvxC0000000000000"})"}};
    const std::vector<Spec> specs{
        xspec(Opcode::DictUpsert, "_txn.cas", R"("${Mutation.CAS}")", kMacro)};
    auto o = mutate(encodeXattrs(stored) + "{}", meta, specs, 0);
    ASSERT_EQ(o.status, Status::Success);
    ASSERT_EQ(o.macros.size(), 1u);
    expandMacros(o, 1, 1);
    EXPECT_EQ(xattrsOf(o)[0].value, R"({"t":"~kvxC0000000000000","cas":"0x0100000000000000"})");
}

TEST(Macros, ValueCrc32cIsTheNewBodysChecksum) {
    const std::vector<Spec> specs{
        xspec(Opcode::DictUpsert, "_txn.crc", R"("${Mutation.value_crc32c}")", kMacro),
        spec(Opcode::DictUpsert, "b", "2")};
    auto o = mutate(R"({"a":1})", jsonMeta(), specs, 0);
    ASSERT_EQ(o.status, Status::Success);
    EXPECT_TRUE(o.macros.empty());
    char crc[11];
    const std::string_view body = R"({"a":1,"b":2})";
    std::snprintf(crc, sizeof crc, "0x%08x", storage::crc32c(body.data(), body.size()));
    EXPECT_EQ(xattrsOf(o)[0].value, std::string(R"({"crc":")") + crc + R"("})");
}

TEST(Macros, DocumentMacrosExpandToThePreviousMetadata) {
    DocumentMeta meta = jsonMeta();
    meta.cas = 0xabc;
    meta.expiry = 99;
    const std::vector<Spec> specs{
        xspec(Opcode::DictUpsert, "_p.cas", R"("${$document.CAS}")", kMacro),
        xspec(Opcode::DictUpsert, "_p.exp", R"("${$document.exptime}")", kMacro)};
    auto o = mutate("{}", meta, specs, 0);
    ASSERT_EQ(o.status, Status::Success);
    EXPECT_EQ(xattrsOf(o)[0].value, R"({"cas":"0x0000000000000abc","exp":99})");
}

TEST(Macros, UnknownDocumentFieldIsUnknownVattrMacro) {
    auto o = mutateOne("{}", xspec(Opcode::DictUpsert, "_p", R"("${$document.nope}")", kMacro));
    EXPECT_EQ(statusOf(o), Status::XattrUnknownVattrMacro);
}

TEST(Macros, UnknownMacroIsRefused) {
    EXPECT_EQ(mutateOne("{}", xspec(Opcode::DictUpsert, "_p", R"("${Nope}")", kMacro)).status,
              Status::XattrUnknownMacro);
}

TEST(Macros, ExpandMacrosWithoutXattrIsAnInvalidFlagCombo) {
    EXPECT_EQ(mutateOne("{}", spec(Opcode::DictUpsert, "p", R"("${Mutation.CAS}")",
                                   path_flag::ExpandMacros))
                  .status,
              Status::XattrInvalidFlagCombo);
}

}  // namespace
}  // namespace kvexec::subdoc
