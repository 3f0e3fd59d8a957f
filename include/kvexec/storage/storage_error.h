// kvexec/storage/storage_error.h: the one exception type of the storage
// layer.
//
// Error policy: every storage operation either succeeds or throws
// StorageError (std::invalid_argument for caller mistakes such as a vbid out
// of range or seqnos that do not increase). The message names the
// operation, the file and, where it applies, the byte offset; kind() and
// sysError() let callers react without parsing it. A failed operation leaves
// the store consistent: nothing it half-wrote is ever served, and the same
// call may be retried once the cause has cleared.
//
// Thread safety: immutable after construction.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace kvexec::storage {

class StorageError : public std::runtime_error {
  public:
    enum class Kind {
        Io,                // a file operation failed (sysError() says why)
        Corruption,        // a file's contents are invalid (offset() says where)
        NoSuchVBucket,     // the vBucket does not exist (or was deleted)
        OutOfFileHandles,  // EMFILE/ENFILE even after evicting a cached handle
    };

    StorageError(Kind kind, const std::string& message, std::string path = {},
                 std::optional<std::uint64_t> offset = {}, int sysError = 0);

    Kind kind() const noexcept { return kind_; }
    const std::string& path() const noexcept { return path_; }
    std::optional<std::uint64_t> offset() const noexcept { return offset_; }
    int sysError() const noexcept { return sysError_; }  // errno, or 0

  private:
    Kind kind_;
    std::string path_;
    std::optional<std::uint64_t> offset_;
    int sysError_;
};

}  // namespace kvexec::storage
