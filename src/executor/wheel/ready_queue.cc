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
    assert(r.loadState() != Record::State::Ready && r.readyPrev == nullptr &&
           r.readyNext == nullptr &&
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
    r.setState(Record::State::Ready);
    ++size_;
}

void ReadyQueue::detachLocked(Record& r, PriorityList& list) {
    assert(r.loadState() == Record::State::Ready &&
           "ReadyQueue: a record unlinked that is not linked");
    assert((r.readyPrev != nullptr ? r.readyPrev->readyNext : list.head) == &r &&
           (r.readyNext != nullptr ? r.readyNext->readyPrev : list.tail) == &r &&
           "ReadyQueue: a record unlinked from a list it is not in");
    (r.readyPrev != nullptr ? r.readyPrev->readyNext : list.head) = r.readyNext;
    (r.readyNext != nullptr ? r.readyNext->readyPrev : list.tail) = r.readyPrev;
    r.readyPrev = r.readyNext = nullptr;
    --size_;
}

// The caller holds the record's shard lock too and arms or frees it next,
// so no one sees it as Timer before it is.
void ReadyQueue::unlinkLocked(Record& r) {
    detachLocked(r, listFor(r.task->priority()));
    r.setState(Record::State::Timer);
}

// Straight from Ready to Running: a reader under the shard lock alone must
// never see a worker's record in another state.
Record* ReadyQueue::popLocked() {
    for (PriorityList& list : lists_) {
        if (list.head != nullptr) {
            Record* r = list.head;
            detachLocked(*r, list);  // not by its priority: that reads the task
            r->setState(Record::State::Running);
            return r;
        }
    }
    return nullptr;
}

void ReadyQueue::clearLocked() {
    for (PriorityList& list : lists_) {
        for (Record* r = list.head; r != nullptr; r = r->readyNext) {
            r->setState(Record::State::Running);  // unlinked; about to be freed
        }
        list.head = list.tail = nullptr;
    }
    size_ = 0;
}

// The idle workers are two stacks linked through their parkers: enlisting
// and taking one write the parker the worker and its waker touch anyway.
// Wakers take a spinning worker first: a store wakes it, where a sleeper
// costs a futex wake, and on a VM the time until its vCPU runs again.
// (With more workers than cores only one may spin: taking the most
// recently idle worker, wherever it was, woke sleepers while the spinner
// spun on; LongLivedScheduleRun Tasks:64 at 4 threads on 2 vCPUs, ten runs
// each, read 182-541k items/s, median ~240k, that way and 322-542k, median
// ~510k, this way.)
void ReadyQueue::enlistIdleLocked(Parker& p, bool spinning) {
    Parker*& top = spinning ? idleSpinning_ : idleSleeping_;
    p.nextIdle_ = top;
    top = &p;
}

Parker* ReadyQueue::takeIdleLocked() {
    Parker*& top = idleSpinning_ != nullptr ? idleSpinning_ : idleSleeping_;
    Parker* p = top;
    if (p != nullptr) {
        top = p->nextIdle_;
        p->nextIdle_ = nullptr;
    }
    return p;
}

std::size_t ReadyQueue::idleLocked() const {
    std::size_t n = 0;
    for (const Parker* top : {idleSpinning_, idleSleeping_}) {
        for (const Parker* p = top; p != nullptr; p = p->nextIdle_) {
            ++n;
        }
    }
    return n;
}

std::vector<Parker*> ReadyQueue::takeAllIdleLocked() {
    std::vector<Parker*> all;
    while (Parker* p = takeIdleLocked()) {
        all.push_back(p);
    }
    return all;
}

std::uint64_t ReadyQueue::runsLocked() const {
    std::uint64_t runs = 0;
    for (const auto& p : parkers_) {
        runs += p->runs();
    }
    return runs;
}

Parker& ReadyQueue::parkerLocked(std::size_t index) {
    while (parkers_.size() <= index) {
        parkers_.push_back(std::make_unique<Parker>());
    }
    return *parkers_[index];
}

}  // namespace kvexec::wheel
