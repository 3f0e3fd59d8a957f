// child_process.h: runs a program as a child for the end-to-end tests:
// its stdout is read through a pipe with a deadline, it is stopped by its
// PID (SIGTERM) and its exit status is collected. No shell, no sleeps
// without a deadline.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace kvexec::pillowfight::test {

class ChildProcess {
  public:
    explicit ChildProcess(const std::vector<std::string>& argv) {
        int fds[2];
        if (pipe(fds) != 0) {
            throw std::runtime_error("pipe failed");
        }
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
        posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
        posix_spawn_file_actions_addclose(&actions, fds[0]);
        std::vector<char*> args;
        for (const auto& a : argv) {
            args.push_back(const_cast<char*>(a.c_str()));
        }
        args.push_back(nullptr);
        const int rc = posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), environ);
        posix_spawn_file_actions_destroy(&actions);
        close(fds[1]);
        out_ = fds[0];
        if (rc != 0) {
            close(out_);
            throw std::runtime_error("cannot start " + argv[0]);
        }
    }
    ~ChildProcess() {
        if (pid_ > 0 && !status_) {
            kill(pid_, SIGKILL);
            waitpid(pid_, nullptr, 0);
        }
        close(out_);
    }
    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;

    // Reads output until a line starting with `prefix` arrives; returns
    // that line, or nullopt at EOF or the deadline.
    std::optional<std::string> waitForLine(const std::string& prefix,
                                           std::chrono::milliseconds deadline) {
        const auto until = std::chrono::steady_clock::now() + deadline;
        for (;;) {
            std::size_t start = 0;
            for (std::size_t nl; (nl = output_.find('\n', start)) != std::string::npos;
                 start = nl + 1) {
                if (output_.compare(start, prefix.size(), prefix) == 0) {
                    return output_.substr(start, nl - start);
                }
            }
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                until - std::chrono::steady_clock::now());
            if (left.count() <= 0 || !readSome(left)) {
                return std::nullopt;
            }
        }
    }

    // Reads everything until EOF and returns the exit status (or -1 when
    // the deadline passes first).
    int wait(std::chrono::milliseconds deadline) {
        const auto until = std::chrono::steady_clock::now() + deadline;
        for (;;) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                until - std::chrono::steady_clock::now());
            if (left.count() <= 0) {
                return -1;
            }
            if (!readSome(left)) {
                break;  // EOF
            }
        }
        int status = 0;
        waitpid(pid_, &status, 0);
        status_ = status;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }

    void terminate() { kill(pid_, SIGTERM); }
    const std::string& output() const { return output_; }

  private:
    // False at EOF or when nothing came within `wait`.
    bool readSome(std::chrono::milliseconds wait) {
        pollfd p{out_, POLLIN, 0};
        if (poll(&p, 1, static_cast<int>(wait.count())) <= 0) {
            return false;
        }
        char buffer[4096];
        const ssize_t n = read(out_, buffer, sizeof buffer);
        if (n <= 0) {
            return false;
        }
        output_.append(buffer, static_cast<std::size_t>(n));
        return true;
    }

    pid_t pid_ = -1;
    int out_ = -1;
    std::string output_;
    std::optional<int> status_;
};

}  // namespace kvexec::pillowfight::test
