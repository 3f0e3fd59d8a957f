// The POSIX FileOps: direct system calls, retried on EINTR, errors as -errno.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "kvexec/storage/file_ops.h"

namespace kvexec::storage {
namespace {

template <typename Call>
auto retryOnEintr(Call call) {
    for (;;) {
        auto r = call();
        if (r >= 0) {
            return r;
        }
        if (errno != EINTR) {
            return static_cast<decltype(r)>(-errno);
        }
    }
}

class PosixFileOps final : public FileOps {
  public:
    int open(const std::string& path, int flags, mode_t mode) override {
        return retryOnEintr([&] { return ::open(path.c_str(), flags, mode); });
    }
    int close(int fd) override {
        // close() must not be retried on EINTR on Linux: the fd is gone.
        return ::close(fd) == 0 ? 0 : -errno;
    }
    ssize_t pread(int fd, void* buf, std::size_t count, off_t offset) override {
        return retryOnEintr([&] { return ::pread(fd, buf, count, offset); });
    }
    ssize_t pwrite(int fd, const void* buf, std::size_t count, off_t offset) override {
        return retryOnEintr([&] { return ::pwrite(fd, buf, count, offset); });
    }
    int fdatasync(int fd) override {
        return retryOnEintr([&] { return ::fdatasync(fd); });
    }
    int ftruncate(int fd, off_t length) override {
        return retryOnEintr([&] { return ::ftruncate(fd, length); });
    }
    off_t size(int fd) override {
        struct stat st {};
        if (::fstat(fd, &st) != 0) {
            return -errno;
        }
        return st.st_size;
    }
    int rename(const std::string& from, const std::string& to) override {
        return ::rename(from.c_str(), to.c_str()) == 0 ? 0 : -errno;
    }
    int unlink(const std::string& path) override {
        return ::unlink(path.c_str()) == 0 ? 0 : -errno;
    }
    int syncDirectory(const std::string& path) override {
        const int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
        if (fd < 0) {
            return fd;
        }
        const int r = retryOnEintr([&] { return ::fsync(fd); });
        close(fd);
        return r;
    }
};

}  // namespace

std::shared_ptr<FileOps> posixFileOps() {
    static const auto ops = std::make_shared<PosixFileOps>();
    return ops;
}

}  // namespace kvexec::storage
