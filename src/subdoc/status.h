// subdoc/status.h: the memcached binary-protocol status codes that the
// sub-document library produces, with their wire values (kv_engine's
// include/mcbp/protocol/status.h; docs/BinaryProtocol.md points there).
//
// Constants and pure functions. Safe from any thread.
#pragma once

#include <cstdint>

namespace kvexec::subdoc {

enum class Status : std::uint16_t {
    Success = 0x00,
    KeyNotFound = 0x01,       // the document does not exist
    KeyExists = 0x02,         // the Add doc flag on an existing document
    ValueTooLarge = 0x03,     // E2BIG (the caller's item size limit)
    InvalidArguments = 0x04,  // EINVAL: a malformed request
    NotStored = 0x05,
    Internal = 0x84,      // the stored value is corrupt (a broken xattr blob)
    NotSupported = 0x83,  // a feature this library refuses
    XattrInvalid = 0x87,  // XATTR_EINVAL: an xattr key breaks the naming rules

    PathNotFound = 0xc0,
    PathMismatch = 0xc1,
    PathInvalid = 0xc2,
    PathTooBig = 0xc3,  // more than 32 components or 1024 bytes
    DocTooDeep = 0xc4,
    ValueCantInsert = 0xc5,
    DocNotJson = 0xc6,
    NumRange = 0xc7,  // the existing number is not an int64
    DeltaInvalid = 0xc8,
    PathExists = 0xc9,
    ValueTooDeep = 0xca,
    InvalidCombo = 0xcb,
    MultiPathFailure = 0xcc,
    SuccessDeleted = 0xcd,
    XattrInvalidFlagCombo = 0xce,
    XattrInvalidKeyCombo = 0xcf,
    XattrUnknownMacro = 0xd0,
    XattrUnknownVattr = 0xd1,
    XattrCantModifyVattr = 0xd2,
    MultiPathFailureDeleted = 0xd3,
    InvalidXattrOrder = 0xd4,
    XattrUnknownVattrMacro = 0xd5,
    CanOnlyReviveDeletedDocuments = 0xd6,
    DeletedDocumentCantHaveValue = 0xd7,
    FieldNotBinaryValue = 0xd8,  // a BinaryValue GET of an xattr no binary value was stored in
};

// The status as a short name ("PathNotFound"), for logs and test output.
const char* statusName(Status status);

constexpr std::uint16_t wireValue(Status status) {
    return static_cast<std::uint16_t>(status);
}

}  // namespace kvexec::subdoc
