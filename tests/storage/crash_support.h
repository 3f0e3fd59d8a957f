// crash_support.h: what the SIGKILL crash tests share (tests/storage and
// tests/engine): the seed, the skip under TSan (which cannot fork), and
// reading the fixed-size reports a child process writes to a pipe.
#pragma once

#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <vector>

#if defined(__SANITIZE_THREAD__)
#define KVEXEC_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define KVEXEC_TSAN 1
#endif
#endif

namespace kvexec::test {

// KVEXEC_CRASH_SEED when it is set (to replay a failure), else a random one.
inline std::uint64_t crashSeed() {
    const char* env = std::getenv("KVEXEC_CRASH_SEED");
    return env ? std::strtoull(env, nullptr, 10) : std::random_device{}();
}

// Reads Reports from `fd` into `out` until `wanted` more have arrived
// (true) or the pipe closes (false); with `wanted` 0, to the pipe's end.
// Waiting 30 s for one fails the test. Each report is written with one
// write() of <= PIPE_BUF bytes, so it arrives whole.
template <class Report>
bool readReports(int fd, std::size_t wanted, std::vector<Report>& out) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    const std::size_t target = out.size() + wanted;
    while (wanted == 0 || out.size() < target) {
        pollfd p{fd, POLLIN, 0};
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) {
            ADD_FAILURE() << "no report from the child before the deadline";
            return false;
        }
        Report report{};
        const auto n = ::read(fd, &report, sizeof report);
        if (n == 0) {
            return false;
        }
        if (n == static_cast<ssize_t>(sizeof report)) {
            out.push_back(report);
        }
    }
    return true;
}

}  // namespace kvexec::test
