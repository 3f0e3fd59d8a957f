#include "subdoc/status.h"

namespace kvexec::subdoc {

const char* statusName(Status status) {
    switch (status) {
        case Status::Success:
            return "Success";
        case Status::KeyNotFound:
            return "KeyNotFound";
        case Status::KeyExists:
            return "KeyExists";
        case Status::ValueTooLarge:
            return "ValueTooLarge";
        case Status::InvalidArguments:
            return "InvalidArguments";
        case Status::NotStored:
            return "NotStored";
        case Status::Internal:
            return "Internal";
        case Status::NotSupported:
            return "NotSupported";
        case Status::XattrInvalid:
            return "XattrInvalid";
        case Status::PathNotFound:
            return "PathNotFound";
        case Status::PathMismatch:
            return "PathMismatch";
        case Status::PathInvalid:
            return "PathInvalid";
        case Status::PathTooBig:
            return "PathTooBig";
        case Status::DocTooDeep:
            return "DocTooDeep";
        case Status::ValueCantInsert:
            return "ValueCantInsert";
        case Status::DocNotJson:
            return "DocNotJson";
        case Status::NumRange:
            return "NumRange";
        case Status::DeltaInvalid:
            return "DeltaInvalid";
        case Status::PathExists:
            return "PathExists";
        case Status::ValueTooDeep:
            return "ValueTooDeep";
        case Status::InvalidCombo:
            return "InvalidCombo";
        case Status::MultiPathFailure:
            return "MultiPathFailure";
        case Status::SuccessDeleted:
            return "SuccessDeleted";
        case Status::XattrInvalidFlagCombo:
            return "XattrInvalidFlagCombo";
        case Status::XattrInvalidKeyCombo:
            return "XattrInvalidKeyCombo";
        case Status::XattrUnknownMacro:
            return "XattrUnknownMacro";
        case Status::XattrUnknownVattr:
            return "XattrUnknownVattr";
        case Status::XattrCantModifyVattr:
            return "XattrCantModifyVattr";
        case Status::MultiPathFailureDeleted:
            return "MultiPathFailureDeleted";
        case Status::InvalidXattrOrder:
            return "InvalidXattrOrder";
        case Status::XattrUnknownVattrMacro:
            return "XattrUnknownVattrMacro";
        case Status::CanOnlyReviveDeletedDocuments:
            return "CanOnlyReviveDeletedDocuments";
        case Status::DeletedDocumentCantHaveValue:
            return "DeletedDocumentCantHaveValue";
        case Status::FieldNotBinaryValue:
            return "FieldNotBinaryValue";
    }
    return "Unknown";
}

}  // namespace kvexec::subdoc
