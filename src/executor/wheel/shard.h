// shard.h: one slice of the Wheel backend's tasks, chosen by task id.
//
// Each shard has its own mutex, its own id -> Record map and its own timing
// wheel, so that callers re-arming different tasks (TimeoutAddCancel from
// several front-end threads) rarely meet on a lock.
//
// Thread safety: everything here, and the shard-guarded fields of its
// records (record.h), requires `mutex`.
#pragma once

#include <cassert>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "executor/thread_annotations.h"
#include "executor/wheel/record.h"
#include "kvexec/timer_wheel.h"

namespace kvexec::wheel {

// A task's shard is id % kShardCount, so id / kShardCount numbers a
// shard's ids densely: tasks created one after another land in neighbouring
// buckets, and re-arming a million timeouts in turn reads one bucket line per
// eight re-arms instead of one per re-arm (the 1M/1k flatness of
// TimeoutAddCancel went from about 0.5 to about 0.75).
inline constexpr std::size_t kShardCount = 16;
struct ShardIdHash {
    std::size_t operator()(TaskId id) const noexcept { return id / kShardCount; }
};

struct Shard {
    using Records = std::unordered_map<TaskId, Record, ShardIdHash>;
    using Node = Records::node_type;
    // Spare nodes kept per shard: enough for the tasks that come and go at
    // once (one-shot jobs), small against a pool's footprint.
    static constexpr std::size_t kMaxSpareNodes = 32;

    Shard() : wheel(Clock::now(), std::chrono::milliseconds(1)) {}

    Record* findLocked(TaskId id) REQUIRES(mutex) {
        auto it = records.find(id);
        return it == records.end() ? nullptr : &it->second;
    }

    // A new record for `task`, in a spare node when there is one: a
    // one-shot task then costs no allocation under this lock.
    Record& addLocked(TaskPtr task, detail::OwnerState& owner) REQUIRES(mutex) {
        const TaskId id = task->id();
        if (spareNodes.empty()) {
            return records.try_emplace(id, std::move(task), owner, *this).first->second;
        }
        Node node = std::move(spareNodes.back());
        spareNodes.pop_back();
        node.key() = id;
        std::destroy_at(&node.mapped());
        std::construct_at(&node.mapped(), std::move(task), owner, *this);
        return records.insert(std::move(node)).position->second;
    }

    // Takes the record of `id` out of the map (its task already moved out).
    // Kept as a spare, or handed back to be freed once the lock is released:
    // a free() can wait on the allocator's own lock, which must not happen
    // while callers queue on this one.
    Node removeLocked(TaskId id) REQUIRES(mutex) {
        Node node = records.extract(id);
        if (spareNodes.size() < kMaxSpareNodes) {
            spareNodes.push_back(std::move(node));
            return {};
        }
        return node;
    }

    detail::Mutex mutex;
    // Records live in the map's nodes (stable addresses, one allocation,
    // one cache miss fewer per lookup than a pointer to a separate record).
    Records records GUARDED_BY(mutex);
    std::vector<Node> spareNodes GUARDED_BY(mutex);
    TimerWheel wheel GUARDED_BY(mutex);
};

// Tells the analysis that `r`'s shard lock is the one held: `r` was found
// in `s` (checked when assertions are on), so r.shard is s. The Locked
// steps of WheelPool require r.shard.mutex.
inline void heldFor(const Shard& s, const Record& r) REQUIRES(s.mutex)
    ASSERT_CAPABILITY(r.shard.mutex) {
    assert(&r.shard == &s);
    (void)s;
    (void)r;
}

}  // namespace kvexec::wheel
