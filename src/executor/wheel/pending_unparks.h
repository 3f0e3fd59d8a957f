// pending_unparks.h: the idle workers a locked section took off the idle
// set (ReadyQueue::takeIdle, takeIdleForHandOff), to unpark once its locks
// are released.
//
// A taken worker is in no idle set any more: nothing but this list will
// unpark it, and one that is never unparked sleeps through every later
// hand-off and through shutdown. So the list never drops one: add() cannot
// fail (when the list cannot grow, it unparks the worker at once, under the
// caller's locks: a store, and a futex wake only if it sleeps, never a
// wait), and the destructor unparks whatever an exception left in it.
//
// Nearly always one worker: the first is kept inline, so that a wake or a
// one-shot run allocates nothing.
//
// Thread safety: none; one per locked section, on its caller's stack.
#pragma once

#include <new>
#include <utility>
#include <vector>

#include "executor/wheel/parker.h"

namespace kvexec::wheel {

class PendingUnparks {
  public:
    PendingUnparks() = default;
    PendingUnparks(const PendingUnparks&) = delete;
    PendingUnparks& operator=(const PendingUnparks&) = delete;
    ~PendingUnparks() { unparkAll(); }

    void add(Parker* worker) noexcept {
        if (first_ == nullptr) {
            first_ = worker;
            return;
        }
        try {
            more_.push_back(worker);
        } catch (const std::bad_alloc&) {
            worker->unpark();
        }
    }

    void unparkAll() noexcept {
        if (first_ != nullptr) {
            std::exchange(first_, nullptr)->unpark();
        }
        for (Parker* worker : more_) {
            worker->unpark();
        }
        more_.clear();
    }

  private:
    Parker* first_ = nullptr;
    std::vector<Parker*> more_;
};

}  // namespace kvexec::wheel
