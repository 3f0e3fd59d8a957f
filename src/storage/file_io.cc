// file_io.cc: FileOps calls that throw a StorageError naming the file and offset.
#include "storage/file_io.h"

#include <fcntl.h>

#include <cerrno>
#include <cstring>

namespace kvexec::storage::io {

void throwIo(std::string_view op, const std::string& path, int negErrno,
             std::optional<std::uint64_t> offset) {
    const int err = -negErrno;
    std::string msg = "kvexec storage: " + std::string(op) + " of " + path;
    if (offset) {
        msg += " at offset " + std::to_string(*offset);
    }
    msg += " failed: ";
    msg += std::strerror(err);
    throw StorageError(StorageError::Kind::Io, msg, path, offset, err);
}

void throwCorrupt(const std::string& path, std::uint64_t offset, std::string_view why) {
    throw StorageError(StorageError::Kind::Corruption,
                       "kvexec storage: " + path + " is corrupt at offset " +
                           std::to_string(offset) + ": " + std::string(why),
                       path, offset);
}

void writeAll(FileOps& ops, int fd, const std::string& path, std::string_view data,
              std::uint64_t offset) {
    while (!data.empty()) {
        const ssize_t n = ops.pwrite(fd, data.data(), data.size(), static_cast<off_t>(offset));
        if (n < 0) {
            throwIo("write", path, static_cast<int>(n), offset);
        }
        if (n == 0) {
            throwIo("write (no progress)", path, -EIO, offset);
        }
        data.remove_prefix(static_cast<std::size_t>(n));
        offset += static_cast<std::uint64_t>(n);
    }
}

std::size_t readSome(FileOps& ops, int fd, const std::string& path, char* out, std::size_t size,
                     std::uint64_t offset) {
    std::size_t done = 0;
    while (done < size) {
        const ssize_t n = ops.pread(fd, out + done, size - done, static_cast<off_t>(offset + done));
        if (n < 0) {
            throwIo("read", path, static_cast<int>(n), offset + done);
        }
        if (n == 0) {
            break;
        }
        done += static_cast<std::size_t>(n);
    }
    return done;
}

void readAll(FileOps& ops, int fd, const std::string& path, char* out, std::size_t size,
             std::uint64_t offset) {
    if (readSome(ops, fd, path, out, size, offset) != size) {
        throwCorrupt(path, offset, "unexpected end of file");
    }
}

void sync(FileOps& ops, int fd, const std::string& path) {
    if (const int r = ops.fdatasync(fd); r < 0) {
        throwIo("fdatasync", path, r);
    }
}

void truncate(FileOps& ops, int fd, const std::string& path, std::uint64_t length) {
    if (const int r = ops.ftruncate(fd, static_cast<off_t>(length)); r < 0) {
        throwIo("truncate", path, r, length);
    }
}

std::uint64_t size(FileOps& ops, int fd, const std::string& path) {
    const off_t s = ops.size(fd);
    if (s < 0) {
        throwIo("stat", path, static_cast<int>(s));
    }
    return static_cast<std::uint64_t>(s);
}

}  // namespace kvexec::storage::io
