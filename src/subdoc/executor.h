// subdoc/executor.h: runs a sub-document request against a stored
// document: lookups (single GET/EXISTS/GET_COUNT or MULTI_LOOKUP) and
// mutations (single-path mutations or MULTI_MUTATION, all or nothing).
//
// The library never touches the engine: the caller reads the stored bytes
// and their metadata, calls lookup() or mutate(), and for a mutation stores
// MutationOutcome::newValue itself (with a CAS check against the value it
// read, retrying on a conflict), after expandMacros() when the outcome has
// macro slots.
//
// Pure functions over their arguments. Safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "subdoc/document_meta.h"
#include "subdoc/spec.h"
#include "subdoc/status.h"

namespace kvexec::subdoc {

struct SpecResult {
    Status status = Status::Success;
    std::string value;
};

struct LookupOutcome {
    // Success or MultiPathFailure (SuccessDeleted / MultiPathFailureDeleted
    // when meta.deleted), with one result per spec; or a request-level
    // error (see validateRequest; Internal for a corrupt xattr blob) and
    // no results.
    Status status = Status::Success;
    std::vector<SpecResult> results;
};

// Runs lookup specs over `stored` (the bytes as stored: xattr blob first
// when meta.datatype has the XATTR bit). Per-spec statuses include
// DocNotJson (a body spec on a body that is not JSON; the datatype's JSON
// bit is not trusted either way), DocTooDeep, PathNotFound, PathMismatch,
// XattrUnknownVattr. A whole-document GET returns the body bytes as they
// are, JSON or not. The caller decides whether a tombstone may be read
// (AccessDeleted) before calling; `docFlags` is accepted for validation.
LookupOutcome lookup(std::string_view stored, const DocumentMeta& meta, std::span<const Spec> specs,
                     std::uint8_t docFlags = 0);

// A place in MutationOutcome::newValue where a macro's value must be
// written once the new CAS and seqno are known: 18 bytes ("0x" and 16 hex
// digits), inside a JSON string whose quotes are already there.
enum class MacroKind : std::uint8_t { Cas, Seqno };
struct MacroSlot {
    std::size_t offset = 0;
    MacroKind kind = MacroKind::Cas;
};

struct MutationOutcome {
    // Success (SuccessDeleted when the result is a tombstone that was not
    // deleted by this request), MultiPathFailure (MultiPathFailureDeleted on
    // a tombstone) with failedIndex/failedStatus, or a document-level error:
    // KeyNotFound (no document and neither Mkdoc nor Add), KeyExists (Add on
    // an existing document), CanOnlyReviveDeletedDocuments,
    // DeletedDocumentCantHaveValue, Internal (corrupt xattr blob, or the
    // request errors of validateRequest).
    Status status = Status::Success;
    std::size_t failedIndex = 0;
    Status failedStatus = Status::Success;
    std::string newValue;          // the bytes to store: xattr blob + body
    std::uint8_t newDatatype = 0;  // JSON bit when the body is JSON, XATTR bit when xattrs exist
    bool createDocument = false;   // no document existed: store with add semantics
    bool storeAsDeleted = false;   // store newValue as a tombstone (xattrs only)
    bool deleteDocument = false;   // a whole-document DELETE ran: newValue holds only
                                   // the system xattrs (empty: remove the document)
    // (spec index, value) for the specs that return one (COUNTER).
    std::vector<std::pair<std::uint8_t, std::string>> results;
    // Where ${Mutation.CAS} / ${Mutation.seqno} must be written; empty when
    // no spec used them. ${Mutation.value_crc32c} is already expanded.
    std::vector<MacroSlot> macros;
};

// Runs mutation specs. `stored` is nullopt when the document does not
// exist. On any failure newValue is empty and nothing must be stored.
MutationOutcome mutate(std::optional<std::string_view> stored, const DocumentMeta& meta,
                       std::span<const Spec> specs, std::uint8_t docFlags);

// Writes the new CAS and seqno into the macro slots of `newValue`.
void expandMacros(std::string& newValue, std::span<const MacroSlot> slots, std::uint64_t cas,
                  std::uint64_t seqno);
inline void expandMacros(MutationOutcome& outcome, std::uint64_t cas, std::uint64_t seqno) {
    expandMacros(outcome.newValue, outcome.macros, cas, seqno);
}

}  // namespace kvexec::subdoc
