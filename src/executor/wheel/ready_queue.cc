// ready_queue.cc: the Wheel's per-type ready lists (one per priority) and idle-worker list.
#include "executor/wheel/ready_queue.h"

#include <algorithm>
#include <cassert>

namespace kvexec::wheel {

ReadyQueue::PriorityList& ReadyQueue::listFor(int priority) {
    auto it = std::lower_bound(lists_.begin(), lists_.end(), priority,
                               [](const PriorityList& l, int p) { return l.priority < p; });
    if (it == lists_.end() || it->priority != priority) {
        it = lists_.insert(it, PriorityList{priority});
    }
    return *it;
}

void ReadyQueue::pushLocked(Record& r) {
    assert(!r.inReadyList && r.readyPrev == nullptr && r.readyNext == nullptr &&
           "ReadyQueue: a record pushed while already linked (queued twice)");
    assert(!r.armed() && "ReadyQueue: a record pushed while still armed in the wheel");
    PriorityList& list = listFor(r.task->priority());
    Record* after = list.tail;
    while (after != nullptr && after->key > r.key) {
        after = after->readyPrev;
    }
    r.readyPrev = after;
    r.readyNext = after != nullptr ? after->readyNext : list.head;
    (r.readyNext != nullptr ? r.readyNext->readyPrev : list.tail) = &r;
    (after != nullptr ? after->readyNext : list.head) = &r;
    r.inReadyList = true;
    ++size_;
}

void ReadyQueue::unlinkLocked(Record& r) {
    PriorityList& list = listFor(r.task->priority());
    assert(r.inReadyList && "ReadyQueue: a record unlinked that is not linked");
    assert((r.readyPrev != nullptr ? r.readyPrev->readyNext : list.head) == &r &&
           (r.readyNext != nullptr ? r.readyNext->readyPrev : list.tail) == &r &&
           "ReadyQueue: a record unlinked from a list it is not in");
    (r.readyPrev != nullptr ? r.readyPrev->readyNext : list.head) = r.readyNext;
    (r.readyNext != nullptr ? r.readyNext->readyPrev : list.tail) = r.readyPrev;
    r.readyPrev = r.readyNext = nullptr;
    r.inReadyList = false;
    --size_;
}

Record* ReadyQueue::popLocked() {
    for (PriorityList& list : lists_) {
        if (list.head != nullptr) {
            Record* r = list.head;
            unlinkLocked(*r);
            return r;
        }
    }
    return nullptr;
}

void ReadyQueue::clearLocked() {
    for (PriorityList& list : lists_) {
        for (Record* r = list.head; r != nullptr; r = r->readyNext) {
            r->inReadyList = false;
        }
        list.head = list.tail = nullptr;
    }
    size_ = 0;
}

Parker* ReadyQueue::takeIdleLocked() {
    if (idle_.empty()) {
        return nullptr;
    }
    Parker* p = idle_.back();
    idle_.pop_back();
    return p;
}

std::vector<Parker*> ReadyQueue::takeAllIdleLocked() {
    std::vector<Parker*> all;
    all.swap(idle_);
    return all;
}

Parker& ReadyQueue::parkerLocked(std::size_t index) {
    while (parkers_.size() <= index) {
        parkers_.push_back(std::make_unique<Parker>());
    }
    return *parkers_[index];
}

}  // namespace kvexec::wheel
