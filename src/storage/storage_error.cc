// storage_error.cc: StorageError and the names of SyncMode.
#include "kvexec/storage/storage_error.h"

#include <utility>

#include "kvexec/storage/types.h"

namespace kvexec::storage {

StorageError::StorageError(Kind kind, const std::string& message, std::string path,
                           std::optional<std::uint64_t> offset, int sysError)
    : std::runtime_error(message),
      kind_(kind),
      path_(std::move(path)),
      offset_(offset),
      sysError_(sysError) {}

std::string_view to_string(SyncMode mode) {
    switch (mode) {
        case SyncMode::None:
            return "none";
        case SyncMode::Fdatasync:
            return "fdatasync";
    }
    return "?";
}

}  // namespace kvexec::storage
