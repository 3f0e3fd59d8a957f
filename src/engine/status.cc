// status.cc: the names of Status, DurabilityLevel and StoreOperation.
#include "kvexec/engine/status.h"

#include "kvexec/engine/item.h"
#include "kvexec/engine/operations.h"

namespace kvexec::engine {

std::string_view to_string(Status status) {
    switch (status) {
        case Status::Success:
            return "Success";
        case Status::KeyNotFound:
            return "KeyNotFound";
        case Status::KeyExists:
            return "KeyExists";
        case Status::TooBig:
            return "TooBig";
        case Status::Invalid:
            return "Invalid";
        case Status::NotStored:
            return "NotStored";
        case Status::DeltaBadValue:
            return "DeltaBadValue";
        case Status::NotMyVbucket:
            return "NotMyVbucket";
        case Status::Locked:
            return "Locked";
        case Status::NotLocked:
            return "NotLocked";
        case Status::NoMemory:
            return "NoMemory";
        case Status::NotSupported:
            return "NotSupported";
        case Status::Internal:
            return "Internal";
        case Status::UnknownCollection:
            return "UnknownCollection";
        case Status::TempFail:
            return "TempFail";
        case Status::DurabilityInvalidLevel:
            return "DurabilityInvalidLevel";
        case Status::DurabilityImpossible:
            return "DurabilityImpossible";
        case Status::SyncWriteInProgress:
            return "SyncWriteInProgress";
        case Status::SyncWriteAmbiguous:
            return "SyncWriteAmbiguous";
        case Status::SyncWriteReCommitInProgress:
            return "SyncWriteReCommitInProgress";
        case Status::RangeScanCancelled:
            return "RangeScanCancelled";
        case Status::Busy:
            return "Busy";
        case Status::VbUuidNotEqual:
            return "VbUuidNotEqual";
    }
    return "Unknown";
}

std::string_view to_string(DurabilityLevel level) {
    switch (level) {
        case DurabilityLevel::None:
            return "None";
        case DurabilityLevel::Majority:
            return "Majority";
        case DurabilityLevel::MajorityAndPersistToActive:
            return "MajorityAndPersistToActive";
        case DurabilityLevel::PersistToMajority:
            return "PersistToMajority";
    }
    return "Unknown";
}

std::string_view to_string(StoreOperation op) {
    switch (op) {
        case StoreOperation::Set:
            return "Set";
        case StoreOperation::Add:
            return "Add";
        case StoreOperation::Replace:
            return "Replace";
        case StoreOperation::Append:
            return "Append";
        case StoreOperation::Prepend:
            return "Prepend";
    }
    return "Unknown";
}

}  // namespace kvexec::engine
