// ready_lane.cc: one lane of a type's ready records: a list per priority.
#include "executor/wheel/ready_lane.h"

#include <algorithm>
#include <cassert>

namespace kvexec::wheel {

struct ReadyLaneLayout {
    static constexpr bool firstLineHoldsTheWrites() {
        return sizeof(detail::Mutex) + sizeof(std::size_t) + sizeof(std::atomic<Clock::rep>) +
                   sizeof(std::atomic<int>) <=
               64;
    }
};
static_assert(ReadyLaneLayout::firstLineHoldsTheWrites(),
              "ReadyLane: the mutex, size and head no longer share a cache line");

ReadyLane::PriorityList& ReadyLane::listFor(int priority) {
    auto it = std::lower_bound(lists_.begin(), lists_.end(), priority,
                               [](const PriorityList& l, int p) { return l.priority < p; });
    if (it == lists_.end() || it->priority != priority) {
        it = lists_.insert(it, PriorityList{priority});
    }
    return *it;
}

// The head that popLocked() would take, for workers choosing a lane.
void ReadyLane::publishHeadLocked() {
    Head h;
    for (const PriorityList& list : lists_) {
        if (list.head != nullptr) {
            h = {list.priority, list.head->key.time_since_epoch().count()};
            break;
        }
    }
    headPriority_.store(h.priority, std::memory_order_relaxed);
    headKey_.store(h.key, std::memory_order_relaxed);
}

void ReadyLane::pushLocked(Record& r) {
    assert(r.loadState() != Record::State::Ready && r.readyPrev == nullptr &&
           r.readyNext == nullptr &&
           "ReadyLane: a record pushed while already linked (queued twice)");
    assert(!r.armed() && "ReadyLane: a record pushed while still armed in the wheel");
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
    publishHeadLocked();
}

void ReadyLane::detachLocked(Record& r, PriorityList& list) {
    assert(r.loadState() == Record::State::Ready &&
           "ReadyLane: a record unlinked that is not linked");
    assert((r.readyPrev != nullptr ? r.readyPrev->readyNext : list.head) == &r &&
           (r.readyNext != nullptr ? r.readyNext->readyPrev : list.tail) == &r &&
           "ReadyLane: a record unlinked from a list it is not in");
    (r.readyPrev != nullptr ? r.readyPrev->readyNext : list.head) = r.readyNext;
    (r.readyNext != nullptr ? r.readyNext->readyPrev : list.tail) = r.readyPrev;
    r.readyPrev = r.readyNext = nullptr;
    --size_;
    publishHeadLocked();
}

// The caller holds the record's shard lock too and arms or frees it next,
// so no one sees it as Timer before it is.
void ReadyLane::unlinkLocked(Record& r) {
    detachLocked(r, listFor(r.task->priority()));
    r.setState(Record::State::Timer);
}

// Straight from Ready to Running: a reader under the shard lock alone must
// never see a worker's record in another state.
Record* ReadyLane::popLocked() {
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

void ReadyLane::clearLocked() {
    for (PriorityList& list : lists_) {
        for (Record* r = list.head; r != nullptr; r = r->readyNext) {
            r->setState(Record::State::Running);  // unlinked; about to be freed
        }
        list.head = list.tail = nullptr;
    }
    size_ = 0;
    publishHeadLocked();
}

}  // namespace kvexec::wheel
