// kvexec/storage/file_ops.h: the seam between the store and the operating
// system's file calls.
//
// KVStore and FileCache perform every open, read, write, sync, truncate,
// rename, unlink and close through a FileOps, so tests can substitute one
// that injects ENOSPC, EIO, short writes or EMFILE at chosen moments.
// Convention: each call returns its POSIX result on success (a descriptor, a
// byte count, 0) and -errno on failure; it never throws and never sets a
// meaningful errno for the caller.
//
// Thread safety: an implementation must allow concurrent calls from any
// threads (the POSIX one is stateless).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <memory>
#include <string>

namespace kvexec::storage {

class FileOps {
  public:
    virtual ~FileOps() = default;

    // flags and mode as for open(2); O_CLOEXEC is added by the caller.
    virtual int open(const std::string& path, int flags, mode_t mode) = 0;
    virtual int close(int fd) = 0;
    virtual ssize_t pread(int fd, void* buf, std::size_t count, off_t offset) = 0;
    virtual ssize_t pwrite(int fd, const void* buf, std::size_t count, off_t offset) = 0;
    virtual int fdatasync(int fd) = 0;
    virtual int ftruncate(int fd, off_t length) = 0;
    // The file's size in bytes (>= 0), or -errno.
    virtual off_t size(int fd) = 0;
    virtual int rename(const std::string& from, const std::string& to) = 0;
    virtual int unlink(const std::string& path) = 0;
    // fsync() of a directory, so that creates, renames and unlinks in it are
    // durable.
    virtual int syncDirectory(const std::string& path) = 0;
};

// The real thing: direct POSIX calls, retried on EINTR.
std::shared_ptr<FileOps> posixFileOps();

}  // namespace kvexec::storage
