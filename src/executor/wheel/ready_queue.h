// ready_queue.h: the due tasks of one TaskType, and its idle workers.
//
// Records are kept in intrusive lists, one per priority (lower first), each
// sorted by key (wake time). Insertion scans from the tail: tasks mostly
// become due in wake-time order, so it is O(1) in practice; unlink is O(1).
// Idle workers enlist here; a producer that queues work takes the most
// recently idle one (the likeliest to be still spinning) to unpark.
//
// Thread safety: every member ending in Locked requires `mutex`; so do the
// public fields.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "executor/wheel/parker.h"
#include "executor/wheel/record.h"

namespace kvexec::wheel {

class ReadyQueue {
  public:
    void pushLocked(Record& r);
    Record* popLocked();
    void unlinkLocked(Record& r);
    std::size_t sizeLocked() const { return size_; }
    // Forgets every record (shutdown; the records are about to be freed).
    void clearLocked();

    void enlistIdleLocked(Parker& p) { idle_.push_back(&p); }
    // The most recently idle worker, taken off the idle list; or null.
    Parker* takeIdleLocked();
    std::vector<Parker*> takeAllIdleLocked();
    std::size_t idleLocked() const { return idle_.size(); }
    // The parker of worker `index`, made on first use; lives as long as this.
    Parker& parkerLocked(std::size_t index);

    mutable std::mutex mutex;
    std::size_t targetThreads = 0;  // workers with index >= this exit
    bool stopping = false;

  private:
    struct PriorityList {
        int priority;
        Record* head = nullptr;
        Record* tail = nullptr;
    };
    PriorityList& listFor(int priority);

    std::vector<PriorityList> lists_;  // sorted by priority, lowest first
    std::size_t size_ = 0;
    std::vector<Parker*> idle_;
    std::vector<std::unique_ptr<Parker>> parkers_;
};

}  // namespace kvexec::wheel
