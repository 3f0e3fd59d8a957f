// task_queue.cc: the Classic (CB3) per-type future and ready heaps.
#include "executor/classic/task_queue.h"

#include <algorithm>

#include "executor/task_access.h"

namespace kvexec::classic {

namespace {
using detail::TaskAccess;

// std heaps put the "largest" on top: invert to get the earliest / best.
bool laterKey(const Entry* a, const Entry* b) {
    return a->key > b->key;
}

bool worseReady(const Entry* a, const Entry* b) {
    if (a->task->priority() != b->task->priority()) {
        return a->task->priority() > b->task->priority();
    }
    return a->key > b->key;
}

void eraseFromHeap(std::vector<Entry*>& heap, Entry* e, bool (*cmp)(const Entry*, const Entry*)) {
    auto it = std::find(heap.begin(), heap.end(), e);
    if (it != heap.end()) {
        heap.erase(it);
        std::make_heap(heap.begin(), heap.end(), cmp);
    }
}
}  // namespace

bool TaskQueue::pushLocked(Entry& e, Clock::time_point now) {
    if (e.key <= now) {
        e.where = Entry::Where::Ready;
        TaskAccess::setStateUnlessDead(*e.task, TaskState::Running);
        ready_.push_back(&e);
        std::push_heap(ready_.begin(), ready_.end(), worseReady);
        return sleeping > 0;
    }
    e.where = Entry::Where::Future;
    TaskAccess::setStateUnlessDead(*e.task, TaskState::Snoozed);
    future_.push_back(&e);
    std::push_heap(future_.begin(), future_.end(), laterKey);
    return sleeping > 0 && future_.front() == &e;
}

void TaskQueue::moveDueLocked(Clock::time_point now) {
    while (!future_.empty() && future_.front()->key <= now) {
        std::pop_heap(future_.begin(), future_.end(), laterKey);
        Entry* e = future_.back();
        future_.pop_back();
        e->where = Entry::Where::Ready;
        TaskAccess::setStateUnlessDead(*e->task, TaskState::Running);
        ready_.push_back(e);
        std::push_heap(ready_.begin(), ready_.end(), worseReady);
    }
}

Entry* TaskQueue::takeReadyAtLocked(std::size_t index) {
    Entry* e = ready_[index];
    if (index == 0) {
        std::pop_heap(ready_.begin(), ready_.end(), worseReady);
        ready_.pop_back();
    } else {
        ready_.erase(ready_.begin() + static_cast<std::ptrdiff_t>(index));
        std::make_heap(ready_.begin(), ready_.end(), worseReady);
    }
    e->where = Entry::Where::Running;
    return e;
}

Entry* TaskQueue::popReadyLocked(Clock::time_point now) {
    moveDueLocked(now);
    return ready_.empty() ? nullptr : takeReadyAtLocked(0);
}

void TaskQueue::removeLocked(Entry& e) {
    if (e.where == Entry::Where::Future) {
        eraseFromHeap(future_, &e, laterKey);
    } else if (e.where == Entry::Where::Ready) {
        eraseFromHeap(ready_, &e, worseReady);
    }
}

bool TaskQueue::rekeyLocked(Entry& e, Clock::time_point key, Clock::time_point now) {
    if (e.where == Entry::Where::Future && key > now) {
        // CB3: update the wake time in place and rebuild the heap.
        e.key = key;
        std::make_heap(future_.begin(), future_.end(), laterKey);
        TaskAccess::setStateUnlessDead(*e.task, TaskState::Snoozed);
        return sleeping > 0 && future_.front() == &e;
    }
    removeLocked(e);
    e.key = key;
    return pushLocked(e, now);
}

Clock::time_point TaskQueue::nextWakeLocked() const {
    return future_.empty() ? Clock::time_point::max() : future_.front()->key;
}

}  // namespace kvexec::classic
