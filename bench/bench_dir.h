// bench_dir.h: a fresh directory for one benchmark run, removed after it.
// Under $KVEXEC_BENCH_DIR if set, else /var/tmp (a real disk: /tmp may be
// tmpfs, where fdatasync costs nothing and the numbers would lie).
//
// Thread safety: made and destroyed by one thread; path() from any.
#pragma once

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>

namespace kvexec::bench {

class BenchDir {
  public:
    // prefix names the directory: <base>/<prefix>-XXXXXX.
    explicit BenchDir(std::string_view prefix) {
        const char* base = std::getenv("KVEXEC_BENCH_DIR");
        std::string pattern =
            std::string(base ? base : "/var/tmp") + "/" + std::string(prefix) + "-XXXXXX";
        if (::mkdtemp(pattern.data()) == nullptr) {
            throw std::runtime_error("mkdtemp failed for " + pattern);
        }
        path_ = pattern;
    }
    ~BenchDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    BenchDir(const BenchDir&) = delete;
    BenchDir& operator=(const BenchDir&) = delete;

    const std::filesystem::path& path() const { return path_; }

  private:
    std::filesystem::path path_;
};

}  // namespace kvexec::bench
