// storage/file_io.h: FileOps calls that throw StorageError with the file,
// the offset and the reason in the message, and loop over short transfers.
//
// Thread safety: as the FileOps used.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "kvexec/storage/file_ops.h"
#include "kvexec/storage/storage_error.h"

namespace kvexec::storage::io {

[[noreturn]] void throwIo(std::string_view op, const std::string& path, int negErrno,
                          std::optional<std::uint64_t> offset = {});
[[noreturn]] void throwCorrupt(const std::string& path, std::uint64_t offset, std::string_view why);

// Writes all of data at offset; a short write is continued, an error or a
// write that makes no progress throws.
void writeAll(FileOps& ops, int fd, const std::string& path, std::string_view data,
              std::uint64_t offset);
// Reads exactly size bytes at offset; throws on error or end of file.
void readAll(FileOps& ops, int fd, const std::string& path, char* out, std::size_t size,
             std::uint64_t offset);
// Reads up to size bytes; returns how many (fewer only at end of file).
std::size_t readSome(FileOps& ops, int fd, const std::string& path, char* out, std::size_t size,
                     std::uint64_t offset);

void sync(FileOps& ops, int fd, const std::string& path);
void truncate(FileOps& ops, int fd, const std::string& path, std::uint64_t length);
std::uint64_t size(FileOps& ops, int fd, const std::string& path);

}  // namespace kvexec::storage::io
