#include "engine/durable_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>

namespace kvexec::engine {
namespace {

void check(bool ok, const std::string& what) {
    if (!ok) {
        throw std::system_error(errno, std::generic_category(), what);
    }
}

void writeAndSync(const std::filesystem::path& path, const std::string& bytes) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    check(fd >= 0, "open " + path.string());
    std::size_t done = 0;
    bool ok = true;
    while (ok && done < bytes.size()) {
        const auto n = ::write(fd, bytes.data() + done, bytes.size() - done);
        ok = n > 0 || (n < 0 && errno == EINTR);
        done += n > 0 ? static_cast<std::size_t>(n) : 0;
    }
    ok = ok && ::fsync(fd) == 0;
    const int saved = errno;
    ::close(fd);
    errno = saved;
    check(ok, "write " + path.string());
}

void syncDirectory(const std::filesystem::path& dir) {
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    check(fd >= 0, "open " + dir.string());
    const bool ok = ::fsync(fd) == 0;
    ::close(fd);
    check(ok, "fsync " + dir.string());
}

}  // namespace

std::optional<std::string> readFileIfPresent(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        if (!std::filesystem::exists(path)) {
            return std::nullopt;
        }
        throw std::runtime_error("cannot read " + path.string());
    }
    std::stringstream bytes;
    bytes << in.rdbuf();
    return bytes.str();
}

void replaceFileDurably(const std::filesystem::path& path, const std::string& bytes) {
    auto temporary = path;
    temporary += ".tmp";
    writeAndSync(temporary, bytes);
    check(::rename(temporary.c_str(), path.c_str()) == 0, "rename " + temporary.string());
    syncDirectory(path.parent_path());
}

}  // namespace kvexec::engine
