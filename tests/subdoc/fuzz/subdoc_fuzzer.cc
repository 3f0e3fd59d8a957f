// libFuzzer target for the sub-document library: the codec's decoders on
// arbitrary request bytes, then lookup() and mutate() of what they accept
// against an arbitrary stored value (with and without an xattr blob, live,
// missing or deleted), and the response encoders. Any crash, sanitizer
// report, hang or broken invariant is a bug.
//
// Input layout: byte 0 picks the datatype, doc flags and deleted state;
// bytes 1-2 (big-endian) the stored value's length; then the stored value;
// the rest is the request value (multi-path specs), also tried as a
// single-path request whose extras are its first 3 bytes.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "subdoc/codec.h"
#include "subdoc/executor.h"
#include "subdoc/path.h"
#include "subdoc/xattr.h"

using namespace kvexec::subdoc;

namespace {

void check(bool invariant, const char* what) {
    if (!invariant) {
        std::fprintf(stderr, "subdoc invariant broken: %s\n", what);
        std::abort();
    }
}

void runLookup(std::string_view stored, const DocumentMeta& meta, const DecodedRequest& r) {
    const LookupOutcome outcome = lookup(stored, meta, r.specs, r.docFlags);
    const bool ran = outcome.status == Status::Success ||
                     outcome.status == Status::MultiPathFailure ||
                     outcome.status == Status::SuccessDeleted ||
                     outcome.status == Status::MultiPathFailureDeleted;
    check(!ran || outcome.results.size() == r.specs.size(), "one lookup result per spec");
    check(ran || outcome.results.empty(), "results on a request-level error");
    (void)encodeLookupResults(outcome.results);
    (void)singleLookupResponse(outcome);
}

void runMutation(std::optional<std::string_view> stored, const DocumentMeta& meta,
                 const DecodedRequest& r) {
    MutationOutcome outcome = mutate(stored, meta, r.specs, r.docFlags);
    (void)encodeMutationResults(outcome);
    (void)singleMutationResponse(outcome);
    if (outcome.status != Status::Success && outcome.status != Status::SuccessDeleted) {
        check(outcome.newValue.empty(), "a failed mutation left a value to store");
        return;
    }
    check(outcome.failedStatus == Status::Success, "success with a failed spec");
    const std::string before = outcome.newValue;
    expandMacros(outcome, 0x0123456789abcdefull, 42);
    check(outcome.newValue.size() == before.size(), "macro expansion changed the size");
    // What mutate() stores must read back: a well-formed blob, JSON when
    // the datatype says so.
    auto split = splitValue(outcome.newValue, outcome.newDatatype);
    check(split.has_value(), "mutate() wrote a corrupt xattr blob");
    check(((outcome.newDatatype & kDatatypeXattr) != 0) == !split->xattrs.empty(),
          "XATTR bit disagrees with the xattrs");
    // A key mutate() wrote must be valid; one the stored value already had
    // is kept as it was (a client's SET with the XATTR bit can store any
    // key: garbage in, the same garbage out).
    std::set<std::string, std::less<>> storedKeys;
    if (const auto old = stored ? splitValue(*stored, meta.datatype) : std::nullopt) {
        for (const auto& x : old->xattrs) {
            storedKeys.emplace(x.key);
        }
    }
    for (const auto& x : split->xattrs) {
        check(isValidXattrKey(x.key) || storedKeys.contains(x.key),
              "mutate() stored an invalid xattr key");
    }
    DocumentMeta next = meta;
    next.datatype = outcome.newDatatype;
    next.deleted = outcome.storeAsDeleted;
    const std::vector<Spec> whole{Spec{Opcode::WholeGet, 0, {}, {}}};
    const LookupOutcome readBack = lookup(outcome.newValue, next, whole, doc_flag::AccessDeleted);
    check(readBack.status != Status::Internal, "stored value does not split");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 3) {
        return 0;
    }
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    const std::uint8_t control = data[0];
    const std::size_t storedLength =
        std::min<std::size_t>(size - 3, (static_cast<std::size_t>(data[1]) << 8) | data[2]);
    const std::string_view stored = input.substr(3, storedLength);
    const std::string_view request = input.substr(3 + storedLength);

    DocumentMeta meta;
    meta.cas = 0x1600000000000000ull + size;
    meta.seqno = size;
    meta.datatype = control & (kDatatypeJson | kDatatypeXattr);
    meta.deleted = (control & 0x80) != 0;
    const std::uint8_t extraFlags = (control >> 3) & 0x0f;  // ORed into the decoded doc flags

    const std::string_view extras = request.substr(0, std::min<std::size_t>(request.size(), 1));
    DecodedRequest lookupRequest = decodeMultiLookup({}, request);
    if (lookupRequest.status == Status::Success) {
        runLookup(stored, meta, lookupRequest);
    }
    for (std::string_view ext : {std::string_view{}, extras}) {
        DecodedRequest r = decodeMultiMutation(ext, ext.empty() ? request : request.substr(1));
        if (r.status != Status::Success) {
            continue;
        }
        r.docFlags |= extraFlags;
        runMutation(stored, meta, r);
        runMutation(std::nullopt, meta, r);
    }
    if (request.size() >= 4) {
        const DecodedRequest single = decodeSinglePath(static_cast<std::uint8_t>(request[0]),
                                                       request.substr(1, 3), request.substr(4));
        if (single.status == Status::Success) {
            if (single.kind == RequestKind::Lookup) {
                runLookup(stored, meta, single);
            } else {
                runMutation(stored, meta, single);
            }
        }
    }
    (void)parsePath(request);
    (void)parseXattrPath(request);
    return 0;
}
