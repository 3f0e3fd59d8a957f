#include "subdoc/validate.h"

#include "subdoc/binary_value.h"
#include "subdoc/path.h"

namespace kvexec::subdoc {

namespace {

Status validateDocFlags(std::uint8_t docFlags, RequestKind kind) {
    using namespace doc_flag;
    if ((docFlags & Mkdoc) && (docFlags & Add)) {
        return Status::InvalidArguments;
    }
    if ((docFlags & ReviveDocument) &&
        (!(docFlags & AccessDeleted) || (docFlags & CreateAsDeleted))) {
        return Status::InvalidArguments;
    }
    if (kind == RequestKind::Lookup && (docFlags & ~(AccessDeleted | ReplicaRead)) != 0) {
        return Status::InvalidArguments;
    }
    // A replica's copy is only read.
    if (kind == RequestKind::Mutation &&
        (docFlags & ~(Mkdoc | Add | AccessDeleted | CreateAsDeleted | ReviveDocument)) != 0) {
        return Status::InvalidArguments;
    }
    return Status::Success;
}

// A value that holds a binary value's marker (binary_value.h) must hold
// one that decodes, as kv_engine checks: else a later BinaryValue GET of
// it would find bytes nobody can read.
bool isWellEncodedIfBinary(std::string_view value) {
    const auto start = value.find(kBinaryValuePrefix);
    if (start == std::string_view::npos) {
        return true;
    }
    const auto end = value.find('"', start);
    return end != std::string_view::npos &&
           decodeBinaryValue(value.substr(start, end - start)).has_value();
}

Status validateXattrSpec(const Spec& spec, const OpcodeTraits& traits) {
    const std::string_view key = xattrKeyOf(spec.path);
    if (!isValidXattrKey(key)) {
        return Status::XattrInvalid;
    }
    if (traits.mutation && isVirtualXattr(key)) {
        return Status::XattrCantModifyVattr;
    }
    if ((spec.flags & path_flag::ExpandMacros) && !isKnownMacro(spec.value)) {
        return Status::XattrUnknownMacro;
    }
    if (traits.mutation && !(spec.flags & path_flag::BinaryValue) &&
        !isWellEncodedIfBinary(spec.value)) {
        return Status::XattrInvalid;
    }
    return Status::Success;
}

Status validateSpec(const Spec& spec, RequestKind kind) {
    const auto traits = traitsOf(static_cast<std::uint8_t>(spec.opcode));
    if (!traits || traits->mutation != (kind == RequestKind::Mutation)) {
        return Status::InvalidCombo;
    }
    // Doc flags are checked per request (validateDocFlags), not per opcode:
    // an upsert-document request may well hold a delete or replace spec.
    if ((spec.flags & ~traits->validFlags) != 0) {
        return Status::InvalidArguments;
    }
    // Macros and binary values are xattrs', and a value is one or the other.
    const std::uint8_t xattrOnly = path_flag::ExpandMacros | path_flag::BinaryValue;
    if ((spec.flags & xattrOnly) != 0 &&
        (!spec.isXattr() || (spec.flags & xattrOnly) == xattrOnly)) {
        return Status::XattrInvalidFlagCombo;
    }
    if (spec.opcode == Opcode::ReplaceBodyWithXattr && !spec.isXattr()) {
        return Status::InvalidArguments;
    }
    if (traits->needsValue == spec.value.empty()) {
        return Status::InvalidArguments;
    }
    if (spec.path.size() > kMaxPathLength || (traits->wholeDoc && !spec.path.empty())) {
        return Status::InvalidArguments;
    }
    if (spec.isXattr()) {
        return validateXattrSpec(spec, *traits);
    }
    if (!traits->allowsEmptyPath && spec.path.empty()) {
        return Status::InvalidArguments;
    }
    return Status::Success;
}

}  // namespace

bool isKnownMacro(std::string_view value) {
    if (value == R"("${Mutation.CAS}")" || value == R"("${Mutation.seqno}")" ||
        value == R"("${Mutation.value_crc32c}")" || value == R"("${$document}")") {
        return true;
    }
    return value.starts_with(R"("${$document.)") && value.ends_with(R"(}")");
}

Status validateRequest(std::span<const Spec> specs, RequestKind kind, std::uint8_t docFlags) {
    if (specs.empty() || specs.size() > kMaxSpecs) {
        return Status::InvalidCombo;
    }
    if (Status s = validateDocFlags(docFlags, kind); s != Status::Success) {
        return s;
    }
    bool sawBody = false;
    bool sawWholeDelete = false;
    for (const Spec& spec : specs) {
        if (Status s = validateSpec(spec, kind); s != Status::Success) {
            return s;
        }
        if (spec.isXattr() && sawBody) {
            return Status::InvalidXattrOrder;
        }
        if (!spec.isXattr() && sawWholeDelete) {
            return Status::InvalidCombo;
        }
        if (!spec.isXattr() && (docFlags & doc_flag::CreateAsDeleted)) {
            return Status::InvalidArguments;  // a tombstone has no body
        }
        sawBody = sawBody || !spec.isXattr();
        sawWholeDelete = sawWholeDelete || spec.opcode == Opcode::WholeDelete;
    }
    return Status::Success;
}

}  // namespace kvexec::subdoc
