// test_support.h: helpers shared by the executor tests: an owner that
// records what the pool tells it, a one-shot gate, and waits with deadlines
// (tests never sleep and hope).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "kvexec/executor_pool.h"
#include "kvexec/task.h"
#include "kvexec/taskable.h"
#include "support/wait.h"

namespace kvexec::test {

using namespace std::chrono_literals;

// How long a test waits for something that should happen at once. Generous:
// sanitizers and a loaded 2-core CI machine are slow; a pass is fast anyway.
inline constexpr auto kDeadline = 20s;

// Polls `done` every millisecond until it holds or the deadline passes.
template <class Pred>
bool waitFor(Pred done, std::chrono::milliseconds deadline = kDeadline) {
    return waitUntil(done, deadline);
}

// Like waitFor, but yields between polls: for tests that wait thousands of
// times for something that takes microseconds.
template <class Pred>
bool waitForYielding(Pred done, std::chrono::milliseconds deadline = kDeadline) {
    return pollUntil(done, deadline, [] { std::this_thread::yield(); });
}

class TestOwner : public Taskable {
  public:
    explicit TestOwner(std::string name = "bucket") : name_(std::move(name)) {}
    const std::string& name() const override { return name_; }
    void onTaskException(const Task& task, std::exception_ptr) override {
        std::lock_guard lock(mutex_);
        exceptionTasks_.push_back(task.id());
        exceptionSawDead_ = exceptionSawDead_ && task.isDead();
        exceptions.fetch_add(1);
    }
    std::vector<TaskId> exceptionTasks() const {
        std::lock_guard lock(mutex_);
        return exceptionTasks_;
    }
    bool exceptionSawDead() const {
        std::lock_guard lock(mutex_);
        return exceptionSawDead_;
    }
    std::atomic<int> exceptions{0};

  private:
    std::string name_;
    mutable std::mutex mutex_;
    std::vector<TaskId> exceptionTasks_;
    bool exceptionSawDead_ = true;
};

// A one-shot gate: wait() blocks until open() (or the deadline).
class Gate {
  public:
    // Notifies under the lock: a waiter may destroy the gate as soon as
    // wait() returns.
    void open() {
        std::lock_guard lock(mutex_);
        open_ = true;
        cv_.notify_all();
    }
    bool wait(std::chrono::milliseconds deadline = kDeadline) {
        std::unique_lock lock(mutex_);
        return cv_.wait_for(lock, deadline, [&] { return open_; });
    }
    bool isOpen() const {
        std::lock_guard lock(mutex_);
        return open_;
    }

  private:
    mutable std::mutex mutex_;
    std::condition_variable cv_;
    bool open_ = false;
};

inline TaskPtr makeTask(Taskable& owner, LambdaTask::Fn fn, TaskType type = TaskType::NonIO,
                        int priority = 0, Clock::duration sleep = Clock::duration::zero(),
                        bool blockShutdown = false, std::string description = "test task") {
    return std::make_shared<LambdaTask>(owner, type, std::move(description), std::move(fn),
                                        priority, sleep, blockShutdown);
}

// A task that counts its runs and then returns `again`.
inline TaskPtr countingTask(Taskable& owner, std::atomic<int>& runs, bool again = false,
                            TaskType type = TaskType::NonIO, Clock::duration sleep = {}) {
    return makeTask(
        owner,
        [&runs, again](LambdaTask&) {
            runs.fetch_add(1);
            return again;
        },
        type, 0, sleep);
}

// A task that snoozes itself forever after each run (a flusher).
inline TaskPtr sleeperTask(Taskable& owner, std::atomic<int>& runs,
                           TaskType type = TaskType::NonIO) {
    return makeTask(
        owner,
        [&runs](LambdaTask& self) {
            runs.fetch_add(1);
            self.snooze(kForever);
            return true;
        },
        type, 0, kForever);
}

}  // namespace kvexec::test
