// The wire codec: single-path extras, multi-path spec bodies (including
// malformed and truncated ones) and the response bodies.
#include <gtest/gtest.h>

#include "helpers.h"
#include "subdoc/codec.h"

namespace kvexec::subdoc {
namespace {

using namespace test;

std::string bytes(std::initializer_list<int> values) {
    std::string out;
    for (int v : values) {
        out.push_back(static_cast<char>(v));
    }
    return out;
}

TEST(SinglePath, DecodesExtrasPathAndValue) {
    auto r = decodeSinglePath(0xc8, bytes({0, 21, path_flag::MkdirP}),
                              std::string("games.revolution.rank") + R"("Comandante")");
    ASSERT_EQ(r.status, Status::Success);
    EXPECT_EQ(r.kind, RequestKind::Mutation);
    ASSERT_EQ(r.specs.size(), 1u);
    EXPECT_EQ(r.specs[0].opcode, Opcode::DictUpsert);
    EXPECT_EQ(r.specs[0].flags, path_flag::MkdirP);
    EXPECT_EQ(r.specs[0].path, "games.revolution.rank");
    EXPECT_EQ(r.specs[0].value, R"("Comandante")");
    EXPECT_FALSE(r.expiry);
}

TEST(SinglePath, ExpiryAndDocFlagsByExtrasLength) {
    auto r = decodeSinglePath(0xc8, bytes({0, 1, 0, 0, 0, 1, 0, doc_flag::Mkdoc}), "a1");
    ASSERT_EQ(r.status, Status::Success);
    EXPECT_EQ(r.expiry, 256u);
    EXPECT_EQ(r.docFlags, doc_flag::Mkdoc);
    r = decodeSinglePath(0xc5, bytes({0, 1, 0, doc_flag::AccessDeleted}), "a");
    ASSERT_EQ(r.status, Status::Success);
    EXPECT_EQ(r.docFlags, doc_flag::AccessDeleted);
}

TEST(SinglePath, MalformedRequestsAreInvalidArguments) {
    EXPECT_EQ(decodeSinglePath(0xc5, bytes({0, 1}), "a").status, Status::InvalidArguments);
    EXPECT_EQ(decodeSinglePath(0xc5, bytes({0, 1, 0, 0, 0, 0, 0}), "a").status,
              Status::InvalidArguments);  // lookups take no expiry
    EXPECT_EQ(decodeSinglePath(0xc5, bytes({0, 9, 0}), "a").status, Status::InvalidArguments);
    EXPECT_EQ(decodeSinglePath(0xc5, bytes({0, 1, 0}), "ab").status,
              Status::InvalidArguments);  // a value on a lookup
    EXPECT_EQ(decodeSinglePath(0xc8, bytes({0, 1, 0}), "a").status,
              Status::InvalidArguments);  // no value on a dict upsert
    EXPECT_EQ(decodeSinglePath(0xc5, bytes({0, 0, 0}), "").status,
              Status::InvalidArguments);  // empty path
    EXPECT_EQ(decodeSinglePath(0xc5, bytes({0, 1, 0x02}), "a").status,
              Status::InvalidArguments);  // unknown flag
    EXPECT_EQ(decodeSinglePath(0x00, bytes({0, 0, 0}), "").status, Status::InvalidArguments);
    EXPECT_EQ(decodeSinglePath(0xd0, bytes({0, 0, 0}), "").status, Status::InvalidArguments);
}

TEST(SinglePath, MkdirPOnALookupIsInvalidArguments) {
    EXPECT_EQ(decodeSinglePath(0xc5, bytes({0, 1, path_flag::MkdirP}), "a").status,
              Status::InvalidArguments);
}

TEST(SinglePath, ArrayPushAcceptsTheEmptyPath) {
    EXPECT_EQ(decodeSinglePath(0xcb, bytes({0, 0, 0}), "1").status, Status::Success);
}

TEST(SinglePath, BinaryValueGoesWithXattrAndWithoutMacros) {
    using namespace path_flag;
    EXPECT_EQ(decodeSinglePath(0xc5, bytes({0, 1, Xattr | BinaryValue}), "a").status,
              Status::Success);
    EXPECT_EQ(decodeSinglePath(0xc5, bytes({0, 1, BinaryValue}), "a").status,
              Status::XattrInvalidFlagCombo);
    EXPECT_EQ(decodeSinglePath(0xc8, bytes({0, 1, Xattr | BinaryValue | ExpandMacros}),
                               "a\"${Mutation.CAS}\"")
                  .status,
              Status::XattrInvalidFlagCombo);
    EXPECT_EQ(decodeSinglePath(0xc6, bytes({0, 1, Xattr | BinaryValue}), "a").status,
              Status::InvalidArguments)
        << "EXISTS takes no BinaryValue";
}

// Expiry, then user flags, then doc flags, each optional, by length.
TEST(SinglePath, AMutationsExtrasMayCarryUserFlags) {
    const auto upsert = [](std::string extras) {
        return decodeSinglePath(0xc8, bytes({0, 1, 0}) + extras, "a1");
    };
    const std::string expiry = bytes({0, 0, 0, 9});
    const std::string userFlags = bytes({0x02, 0, 0, 0x06});
    const auto full = upsert(expiry + userFlags + bytes({doc_flag::Mkdoc}));
    ASSERT_EQ(full.status, Status::Success);
    EXPECT_EQ(full.expiry, 9u);
    EXPECT_EQ(full.userFlags, 0x02000006u);
    EXPECT_EQ(full.docFlags, doc_flag::Mkdoc);
    const auto noDocFlags = upsert(expiry + userFlags);
    EXPECT_EQ(noDocFlags.userFlags, 0x02000006u);
    EXPECT_EQ(noDocFlags.docFlags, 0);
    EXPECT_EQ(upsert(expiry).userFlags, std::nullopt);
    EXPECT_EQ(upsert(expiry + bytes({1, 2})).status, Status::InvalidArguments);
    EXPECT_EQ(decodeSinglePath(0xc5, bytes({0, 1, 0}) + expiry + userFlags, "a").status,
              Status::InvalidArguments)
        << "a lookup takes none";
}

TEST(MultiLookup, RoundTripsSpecs) {
    const std::vector<Spec> specs{xspec(Opcode::Get, "$document.exptime"),
                                  spec(Opcode::WholeGet, ""), spec(Opcode::Exists, "a.b")};
    auto r = decodeMultiLookup("", encodeLookupSpecs(specs));
    ASSERT_EQ(r.status, Status::Success);
    ASSERT_EQ(r.specs.size(), 3u);
    for (std::size_t i = 0; i < specs.size(); ++i) {
        EXPECT_EQ(r.specs[i].opcode, specs[i].opcode);
        EXPECT_EQ(r.specs[i].flags, specs[i].flags);
        EXPECT_EQ(r.specs[i].path, specs[i].path);
    }
}

TEST(MultiLookup, DocFlagsExtrasOnly) {
    const std::vector<Spec> specs{spec(Opcode::Get, "a")};
    EXPECT_EQ(
        decodeMultiLookup(bytes({doc_flag::AccessDeleted}), encodeLookupSpecs(specs)).docFlags,
        doc_flag::AccessDeleted);
    EXPECT_EQ(decodeMultiLookup(bytes({0, 0, 0, 1}), encodeLookupSpecs(specs)).status,
              Status::InvalidArguments);
    // The SDKs' lookupInAnyReplica, of a tombstone too.
    const auto replica = decodeMultiLookup(bytes({doc_flag::ReplicaRead | doc_flag::AccessDeleted}),
                                           encodeLookupSpecs(specs));
    EXPECT_EQ(replica.status, Status::Success);
    EXPECT_EQ(replica.docFlags, doc_flag::ReplicaRead | doc_flag::AccessDeleted);
}

TEST(MultiLookup, TruncatedSpecsAreInvalidArguments) {
    const std::vector<Spec> specs{spec(Opcode::Get, "abc"), spec(Opcode::Get, "def")};
    const std::string body = encodeLookupSpecs(specs);
    for (std::size_t cut = 1; cut < body.size(); ++cut) {
        if (cut == 7) {
            continue;  // exactly the first spec: a valid request
        }
        EXPECT_EQ(decodeMultiLookup("", body.substr(0, cut)).status, Status::InvalidArguments)
            << cut;
    }
}

TEST(MultiLookup, NoSpecsIsInvalidCombo) {
    EXPECT_EQ(decodeMultiLookup("", "").status, Status::InvalidCombo);
}

TEST(MultiLookup, SixteenSpecsFitSeventeenDoNot) {
    std::vector<Spec> specs(16, spec(Opcode::Get, "a"));
    EXPECT_EQ(decodeMultiLookup("", encodeLookupSpecs(specs)).status, Status::Success);
    specs.push_back(spec(Opcode::Get, "a"));
    EXPECT_EQ(decodeMultiLookup("", encodeLookupSpecs(specs)).status, Status::InvalidCombo);
}

TEST(MultiLookup, MutationOpcodeIsInvalidCombo) {
    const std::vector<Spec> specs{spec(Opcode::Get, "a"), spec(Opcode::Counter, "a", "")};
    EXPECT_EQ(decodeMultiLookup("", encodeLookupSpecs(specs)).status, Status::InvalidCombo);
}

TEST(MultiLookup, XattrAfterBodyIsInvalidXattrOrder) {
    const std::vector<Spec> specs{spec(Opcode::Get, "a"), xspec(Opcode::Get, "meta")};
    EXPECT_EQ(decodeMultiLookup("", encodeLookupSpecs(specs)).status, Status::InvalidXattrOrder);
}

TEST(MultiLookup, WholeGetWithAPathIsInvalidArguments) {
    const std::vector<Spec> specs{spec(Opcode::WholeGet, "a")};
    EXPECT_EQ(decodeMultiLookup("", encodeLookupSpecs(specs)).status, Status::InvalidArguments);
}

TEST(MultiMutation, RoundTripsSpecsAndExtras) {
    const std::vector<Spec> specs{xspec(Opcode::DictUpsert, "_t", "{}", path_flag::MkdirP),
                                  spec(Opcode::Counter, "n", "1"), spec(Opcode::Delete, "q")};
    auto r = decodeMultiMutation(bytes({0, 0, 0, 60, doc_flag::Mkdoc}), encodeMutationSpecs(specs));
    ASSERT_EQ(r.status, Status::Success);
    EXPECT_EQ(r.expiry, 60u);
    EXPECT_EQ(r.docFlags, doc_flag::Mkdoc);
    ASSERT_EQ(r.specs.size(), 3u);
    EXPECT_EQ(r.specs[1].value, "1");
    EXPECT_EQ(r.specs[2].path, "q");
}

TEST(MultiMutation, LookupOpcodeIsInvalidCombo) {
    const std::vector<Spec> specs{spec(Opcode::DictUpsert, "a", "1"), spec(Opcode::Get, "a")};
    EXPECT_EQ(decodeMultiMutation("", encodeMutationSpecs(specs)).status, Status::InvalidCombo);
}

TEST(MultiMutation, BodySpecAfterWholeDeleteIsInvalidCombo) {
    const std::vector<Spec> specs{spec(Opcode::WholeDelete, ""),
                                  spec(Opcode::DictUpsert, "a", "1")};
    EXPECT_EQ(decodeMultiMutation("", encodeMutationSpecs(specs)).status, Status::InvalidCombo);
}

TEST(MultiMutation, ValueLengthPastTheEndIsInvalidArguments) {
    std::string body = encodeMutationSpecs(std::vector<Spec>{spec(Opcode::DictUpsert, "a", "1")});
    body[7] = 2;  // value length 2, one byte present
    EXPECT_EQ(decodeMultiMutation("", body).status, Status::InvalidArguments);
    body[4] = static_cast<char>(0xff);  // a huge value length must not wrap
    EXPECT_EQ(decodeMultiMutation("", body).status, Status::InvalidArguments);
}

TEST(MultiMutation, BadDocFlagCombosAreInvalidArguments) {
    const std::string body =
        encodeMutationSpecs(std::vector<Spec>{xspec(Opcode::DictUpsert, "_a", "1")});
    EXPECT_EQ(decodeMultiMutation(bytes({doc_flag::Mkdoc | doc_flag::Add}), body).status,
              Status::InvalidArguments);
    // CreateAsDeleted alone is a replace of a tombstone's xattrs: valid here
    // (transactions restage an insert so), not in a single-path request.
    EXPECT_EQ(decodeMultiMutation(bytes({doc_flag::CreateAsDeleted}), body).status,
              Status::Success);
    EXPECT_EQ(
        decodeSinglePath(0xc8, std::string{0, 2, 0x04, doc_flag::CreateAsDeleted}, "_a1").status,
        Status::InvalidArguments);
    EXPECT_EQ(decodeSinglePath(
                  0xc8, std::string{0, 2, 0x04, doc_flag::CreateAsDeleted | doc_flag::Mkdoc}, "_a1")
                  .status,
              Status::Success);
    EXPECT_EQ(decodeMultiMutation(bytes({doc_flag::ReviveDocument}), body).status,
              Status::InvalidArguments);
    EXPECT_EQ(decodeMultiMutation(bytes({0x80}), body).status, Status::InvalidArguments);
    // A replica's copy is read, never written.
    EXPECT_EQ(decodeMultiMutation(bytes({doc_flag::ReplicaRead}), body).status,
              Status::InvalidArguments);
}

TEST(MultiMutation, ExtrasLengthsOtherThan014Or5AreInvalid) {
    const std::string body = encodeMutationSpecs(std::vector<Spec>{spec(Opcode::Delete, "a")});
    EXPECT_EQ(decodeMultiMutation(bytes({0, 0}), body).status, Status::InvalidArguments);
    EXPECT_EQ(decodeMultiMutation(bytes({0, 0, 0, 0, 0, 0}), body).status,
              Status::InvalidArguments);
}

TEST(Responses, LookupResultsBody) {
    const std::vector<SpecResult> results{{Status::Success, R"("mnunberg")"},
                                          {Status::PathNotFound, ""}};
    EXPECT_EQ(encodeLookupResults(results),
              bytes({0, 0, 0, 0, 0, 10}) + R"("mnunberg")" + bytes({0, 0xc0, 0, 0, 0, 0}));
}

TEST(Responses, MutationSuccessListsResultsWithValues) {
    MutationOutcome o;
    o.results = {{1, "42"}, {3, "7"}};
    EXPECT_EQ(encodeMutationResults(o),
              bytes({1, 0, 0, 0, 0, 0, 2}) + "42" + bytes({3, 0, 0, 0, 0, 0, 1}) + "7");
}

TEST(Responses, MutationFailureIsIndexAndStatus) {
    MutationOutcome o;
    o.status = Status::MultiPathFailure;
    o.failedIndex = 1;
    o.failedStatus = Status::PathMismatch;
    EXPECT_EQ(encodeMutationResults(o), bytes({1, 0, 0xc1}));
    EXPECT_EQ(singleMutationResponse(o).status, Status::PathMismatch);
}

TEST(Responses, SinglePathLookupTakesTheSpecsStatus) {
    LookupOutcome o{Status::MultiPathFailure, {{Status::PathNotFound, ""}}};
    EXPECT_EQ(singleLookupResponse(o).status, Status::PathNotFound);
    o = {Status::SuccessDeleted, {{Status::Success, "1"}}};
    EXPECT_EQ(singleLookupResponse(o).status, Status::SuccessDeleted);
    EXPECT_EQ(singleLookupResponse(o).value, "1");
}

TEST(Responses, SinglePathCounterReturnsItsValue) {
    const std::vector<Spec> specs{spec(Opcode::Counter, "n", "2")};
    auto r = singleMutationResponse(mutate(R"({"n":1})", jsonMeta(), specs, 0));
    EXPECT_EQ(r.status, Status::Success);
    EXPECT_EQ(r.value, "3");
}

}  // namespace
}  // namespace kvexec::subdoc
