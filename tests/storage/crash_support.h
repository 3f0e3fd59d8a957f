// crash_support.h: what the SIGKILL crash tests share (tests/storage and
// tests/engine): the seed, the skip under TSan (which cannot fork),
// reading the fixed-size reports a child process writes to a pipe, and
// one round of fork, report, kill at a random moment.
#pragma once

#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <thread>
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

template <class Report>
struct CrashRound {
    bool forked = false;          // the pipe and the child were made
    bool aliveAtKill = false;     // the child was still reporting when killed
    int status = 0;               // waitpid's for the child
    std::vector<Report> reports;  // every report it wrote, also after the kill
};

// Forks `child` (called with the pipe's write end; it must not return),
// reads 1 + rng() % maxReports of its reports, then, half the time, waits
// up to `maxDelay` (a random moment), SIGKILLs it and reads what it had
// written before it died. A failure to pipe, fork or reap is a test
// failure (forked false for the first two).
template <class Report, class Child>
CrashRound<Report> crashRound(std::mt19937_64& rng, std::size_t maxReports,
                              std::chrono::microseconds maxDelay, Child child) {
    CrashRound<Report> round;
    int fds[2];
    if (::pipe(fds) != 0) {
        ADD_FAILURE() << "pipe failed";
        return round;
    }
    const pid_t pid = ::fork();
    if (pid < 0) {
        ADD_FAILURE() << "fork failed";
        return round;
    }
    if (pid == 0) {
        ::close(fds[0]);
        child(fds[1]);
    }
    round.forked = true;
    ::close(fds[1]);
    round.aliveAtKill = readReports(fds[0], 1 + rng() % maxReports, round.reports);
    if (rng() % 2) {
        std::this_thread::sleep_for(
            std::chrono::microseconds(rng() % static_cast<std::uint64_t>(maxDelay.count())));
    }
    ::kill(pid, SIGKILL);
    EXPECT_EQ(::waitpid(pid, &round.status, 0), pid);
    readReports(fds[0], 0, round.reports);  // written before it died
    ::close(fds[0]);
    return round;
}

}  // namespace kvexec::test
