// kvexec/timer_wheel.h: a hashed hierarchical timing wheel.
//
// What it is for
// --------------
// The executor keeps one timeout per sleeping task, and most of
// them are re-armed far more often than they fire: a vBucket's SyncWrite
// timeout moves later with every write that completes. A heap pays O(log n)
// for every such move and its cache behaviour degrades as n grows; the wheel
// pays O(1) for arm, re-arm and cancel whatever the number of entries, and
// its owner sleeps exactly until nextExpiry() instead of ticking.
//
// Ground rules (thread safety)
// ----------------------------
// TimerWheel is a single-owner structure and is NOT thread safe. Every call
// on a wheel (arm, cancel, advance, nextExpiry, size, ...) and every call on
// an Entry that is armed in it (armed(), deadline()) must be serialised by
// the owner; e.g. the Wheel executor backend holds its mutex around all of
// them. The onExpired callback of advance() runs on the calling thread with
// the owner's lock still held (the wheel does not know about the lock), so
// it may use the wheel (see "Callback rules" below) but must not block on
// another thread that needs that lock.
//
// Time
// ----
// Time is kept as ticks: tick k is the time point start + k * resolution.
//   - A deadline d is rounded UP to the grid: its tick is
//     ceil((d - start) / resolution) (0 for d <= start). Call the time of
//     that tick roundUp(d); 0 <= roundUp(d) - d < resolution.
//   - advance(now) moves the wheel to tick floor((now - start) / resolution)
//     and fires every entry whose tick is <= that, i.e. every entry with
//     roundUp(d) <= now, which is the same as d <= the grid point at or
//     before now.
// Hence:
//   - Never early: an entry is only fired once advance() has been passed a
//     now >= d (by this call, or an earlier one if time went backwards).
//   - Lateness bound: an entry is fired by the first advance(now) with
//     now >= roundUp(d); if the owner calls advance() at nextExpiry() (or
//     later), an entry fires at most (resolution - 1ns) after its deadline
//     plus however late the owner's advance() call itself is.
//   - An entry armed with d <= currentTime() is due at once: it fires on the
//     next advance() call, whatever `now` that call passes.
//   - Time going backwards is ignored: advance(now) with now earlier than
//     currentTime() moves nothing (it still fires entries that are due).
//
// Levels (resolution R; the executor uses R = 1 ms)
// -------------------------------------------------
// Each level has 64 slots and a 64-bit occupancy mask (bit s set iff slot s
// is not empty). An entry with tick t is stored, relative to the current
// tick e, in the lowest level k such that t and e agree on all bits above
// bit 6(k+1)-1 (t and e lie in the same 64^(k+1)-tick block), in slot
// (t >> 6k) & 63. When e reaches the start of a level-k slot (k > 0), the
// slot is cascaded: its entries are re-stored in lower levels.
//
//   | level | slot width       | span (64 slots)   | with R = 1 ms          |
//   |-------|------------------|-------------------|------------------------|
//   |   0   | R                | 64 R              | 1 ms / 64 ms           |
//   |   1   | 64 R             | 64^2 R            | 64 ms / 4.1 s          |
//   |   2   | 64^2 R           | 64^3 R            | 4.1 s / 4.4 min        |
//   |   3   | 64^3 R           | 64^4 R            | 4.4 min / 4.7 h        |
//   |   4   | 64^4 R           | 64^5 R            | 4.7 h / 12.4 days      |
//   |   5   | 64^5 R           | 64^6 R = 2^36 R   | 12.4 days / 2.18 years |
//   | overflow list            | beyond            | > 2.18 years           |
//
// Far future and forever
// ----------------------
//   - Entries whose tick lies beyond the current 2^36-tick block of level 5
//     wait in an overflow list. When the levels are empty and the wheel
//     reaches the next 2^36-tick block (every 2.18 years at R = 1 ms), or
//     directly the block of the earliest overflow entry, the overflow list
//     is re-sorted into the levels (O(entries in it)). They are never fired
//     early: like every entry they fire only once their own tick is reached.
//   - kForever: an entry armed with deadline == Clock::time_point::max()
//     (what now + kForever saturates to) is kept out of the wheel entirely,
//     in no list at all: it is only marked and counted. It counts as armed
//     (armed(), size(), cancel() and re-arm work as for any entry) but it
//     is never fired and nextExpiry() ignores it. Linking it into a list
//     would write its neighbours, other tasks' entries, on every arm and
//     cancel: a task snoozed forever and woken at once does both on every
//     round trip, on whichever core runs it. Deadlines within one
//     resolution of time_point::max() round up past it and may likewise
//     never fire (that is never early, and no steady_clock reaches them).
//
// Callback rules (advance)
// ------------------------
// advance(now, onExpired) calls onExpired(Entry&) once per fired entry, in
// non-decreasing tick order, after unlinking it (entry.armed() is false in
// the callback). While the callback runs, currentTime() is the tick being
// processed. The callback may:
//   - re-arm or cancel the entry passed in, arm, re-arm or cancel any other
//     entry (including ones due in this same advance(), which then do not
//     fire), and destroy the entry passed in or any entry it has cancelled;
//   - an entry it arms with a deadline in (currentTime(), now] fires later in
//     this same advance() call; one it arms with a deadline <=
//     currentTime() fires on the NEXT advance() call (so a callback that
//     re-arms its own entry for "now" cannot loop forever).
// The callback must not call advance() (asserted in debug builds). If it
// throws, the exception propagates out of advance() and the wheel stays
// consistent: entries that were due and not yet fired stay armed and fire on
// a later advance().
//
// Costs
// -----
// arm / re-arm / cancel: O(1). nextExpiry(): O(levels) (one count-trailing-
// zeros per level). advance(): O(fired + cascaded entries + occupied slots
// passed); each entry is cascaded at most once per level on its way down.
// Memory: sizeof(Entry) == 40 bytes on 64-bit; the wheel itself ~9 KiB.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cassert>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>

namespace kvexec {

class TimerWheel {
  public:
    // The executor's kvexec::Clock (task.h) is this same type.
    using Clock = std::chrono::steady_clock;

    static constexpr unsigned kSlotBits = 6;
    static constexpr unsigned kSlotsPerLevel = 1u << kSlotBits;  // 64
    static constexpr unsigned kLevels = 6;
    // Ticks covered by all levels together (one level-5 block): 2^36.
    static constexpr std::uint64_t kWheelSpanTicks = std::uint64_t{1} << (kSlotBits * kLevels);

  private:
    // Doubly linked, circular list node. Every list has a sentinel node owned
    // by the wheel, so unlinking an entry needs no knowledge of its list.
    struct Links {
        Links* prev = nullptr;
        Links* next = nullptr;
    };

  public:
    // Entry: the intrusive hook the user embeds (or inherits). Arming it
    // allocates nothing. It must not be destroyed while armed (asserted in
    // debug builds) and cannot be copied or moved (the wheel points at it).
    class Entry : private Links {
      public:
        Entry() noexcept = default;
        Entry(const Entry&) = delete;
        Entry& operator=(const Entry&) = delete;
        ~Entry() { assert(!armed() && "TimerWheel::Entry destroyed while armed: cancel it first"); }

        // armed: true from arm() until it fires or is cancelled.
        bool armed() const noexcept { return where_ != kNowhere; }
        // deadline: the deadline of the last arm() (exact, not rounded).
        Clock::time_point deadline() const noexcept { return deadline_; }

      private:
        friend class TimerWheel;
        Clock::time_point deadline_{};
        std::uint64_t tick_ = 0;         // deadline rounded up to a tick
        std::uint8_t where_ = kNowhere;  // a level (0..5), a list below, or kForever
        std::uint8_t slot_ = 0;          // slot within the level
    };

    // TimerWheel: tick 0 is `start`; one tick is `resolution` (> 0).
    explicit TimerWheel(Clock::time_point start = Clock::now(),
                        Clock::duration resolution = std::chrono::milliseconds(1)) noexcept
        : start_(start), resolution_(static_cast<std::uint64_t>(resolution.count())) {
        assert(resolution.count() > 0);
        for (auto& level : levels_) {
            for (auto& slot : level.slots) {
                initList(slot);
            }
            level.minTick.fill(kNoTick);
        }
        initList(pending_);
        initList(overflow_);
    }

    // The wheel is pointed at by its entries and its lists point at
    // themselves: it stays where it was built.
    TimerWheel(const TimerWheel&) = delete;
    TimerWheel& operator=(const TimerWheel&) = delete;

    // ~TimerWheel: requires that no entry is armed (asserted): armed entries
    // point into the wheel, so the owner cancels them first.
    ~TimerWheel() { assert(size_ == 0 && "TimerWheel destroyed with armed entries"); }

    // arm: (re-)arms `e` to fire at `deadline`; if it was armed, the old
    // deadline is forgotten. O(1), allocates nothing. deadline ==
    // time_point::max() means never (kForever). Requires: `e` is not armed
    // in another wheel.
    void arm(Entry& e, Clock::time_point deadline) noexcept {
        if (e.armed()) {
            if (rearmInPlace(e, deadline)) {
                return;
            }
            unlink(e);
        }
        e.deadline_ = deadline;
        ++size_;
        if (deadline == Clock::time_point::max()) {
            e.where_ = kForever;  // linked nowhere: see "Far future and forever"
            return;
        }
        e.tick_ = tickAtOrAfter(deadline);
        if (e.tick_ <= elapsed_) {
            pushBack(pending_, e, kPending);  // due now: fires on the next advance()
        } else {
            place(e);
        }
    }

    // cancel: disarms `e`. O(1). Returns false (and does nothing) if `e` was
    // not armed, e.g. because it already fired. Requires: `e` is not armed
    // in another wheel.
    bool cancel(Entry& e) noexcept {
        if (!e.armed()) {
            return false;
        }
        unlink(e);
        return true;
    }

    // advance: moves the wheel to `now` and calls onExpired(Entry&) for every
    // entry that is due (see "Time" and "Callback rules" above). Returns the
    // number of entries fired.
    template <class F>
    std::size_t advance(Clock::time_point now, F&& onExpired) {
        assert(!advancing_ && "TimerWheel::advance() called from its own callback");
        AdvanceGuard guard(*this);
        const std::uint64_t target = std::max(elapsed_, tickAtOrBefore(now));

        std::size_t fired = firePending(guard.batch, onExpired);
        while (const auto ev = nextEvent()) {
            if (ev->tick > target) {
                break;
            }
            elapsed_ = ev->tick;
            if (ev->where == 0) {
                fired += fireSlot(ev->slot, onExpired);
            } else if (ev->where < kLevels) {
                cascade(levels_[ev->where], ev->slot);
            } else {
                cascadeOverflow();
            }
        }
        // No slot starts in (elapsed_, target]: every stored entry still lies
        // in the same blocks relative to target, so the jump keeps the
        // placement invariant.
        elapsed_ = target;
        return fired;
    }

    // nextExpiry: the earliest time at which advance() has work to do, or
    // nullopt if nothing can ever fire (empty, or only kForever entries).
    //   - Never later than roundUp(d) of the earliest armed deadline d (or
    //     currentTime() if that is later: see below), so an owner that sleeps
    //     until then never fires anything late.
    //   - Never earlier than currentTime().
    //   - Exact (== roundUp(d)) unless the earliest entry of a level > 0 slot
    //     (or of the overflow list) was cancelled or re-armed since the slot
    //     last filled; then it may be early, and the advance() at that time
    //     cascades the slot so that the next answer is exact again. So "sleep
    //     until nextExpiry(), advance()" fires the earliest entry in one step,
    //     or in two after such a cancellation (a spurious wake-up, never a
    //     late one).
    //   - currentTime() if entries are due (armed with a deadline already
    //     past): the owner should advance() at once.
    // O(kLevels).
    std::optional<Clock::time_point> nextExpiry() const noexcept {
        if (!isEmpty(pending_)) {
            return timeOfTick(elapsed_);
        }
        const auto ev = nextEvent();
        if (!ev) {
            return std::nullopt;
        }
        // The slot cannot fire before its earliest entry (a lower bound kept
        // on insertion; see Level::minTick).
        const std::uint64_t hint =
            ev->where < kLevels ? levels_[ev->where].minTick[ev->slot] : overflowMinTick_;
        return timeOfTick(std::max(ev->tick, hint));
    }

    // size: the number of armed entries, kForever ones included.
    std::size_t size() const noexcept { return size_; }
    bool empty() const noexcept { return size_ == 0; }

    // currentTime: the time of the wheel's current tick (start() until the
    // first advance(); in a callback, the tick being processed). Entries
    // armed with a deadline at or before it are due at once.
    Clock::time_point currentTime() const noexcept { return timeOfTick(elapsed_); }
    Clock::time_point start() const noexcept { return start_; }
    Clock::duration resolution() const noexcept {
        return Clock::duration(static_cast<Clock::rep>(resolution_));
    }

  private:
    // Entry::where_ values beyond the levels 0..kLevels-1.
    static constexpr std::uint8_t kOverflow = kLevels;
    static constexpr std::uint8_t kPending = kLevels + 1;  // due: fire on next advance()
    static constexpr std::uint8_t kForever = kLevels + 2;  // never fires; in no list
    static constexpr std::uint8_t kNowhere = 0xff;         // not armed
    static constexpr std::uint64_t kNoTick = std::numeric_limits<std::uint64_t>::max();
    static constexpr std::uint64_t kSlotMask = kSlotsPerLevel - 1;

    struct Level {
        std::array<Links, kSlotsPerLevel> slots;
        std::uint64_t occupied = 0;  // bit s set iff slots[s] is not empty
        // minTick[s]: a lower bound of the ticks in slots[s]: the minimum
        // inserted since the slot was last empty. Cancelling does not raise it
        // (that would need a scan), so it is exact unless the minimum left.
        // Only nextExpiry() reads it, to avoid a wake-up per level on the way
        // down; advance() never does (slots cascade at their start).
        std::array<std::uint64_t, kSlotsPerLevel> minTick;
    };

    // Event: the next thing advance() must do: fire level-0 slot, cascade a
    // level-k slot, or re-sort the overflow list; at `tick`.
    struct Event {
        std::uint8_t where;
        unsigned slot;
        std::uint64_t tick;
    };

    // AdvanceGuard: flags re-entrant advance() and, if a callback throws,
    // returns the unfired part of the pending batch to the pending list.
    struct AdvanceGuard {
        explicit AdvanceGuard(TimerWheel& w) noexcept : wheel(w) {
            wheel.advancing_ = true;
            initList(batch);
        }
        ~AdvanceGuard() {
            spliceBack(wheel.pending_, batch);
            wheel.advancing_ = false;
        }
        AdvanceGuard(const AdvanceGuard&) = delete;
        AdvanceGuard& operator=(const AdvanceGuard&) = delete;
        TimerWheel& wheel;
        Links batch;
    };

    // ---- intrusive list helpers -------------------------------------------

    static void initList(Links& head) noexcept { head.prev = head.next = &head; }
    static bool isEmpty(const Links& head) noexcept { return head.next == &head; }
    static Entry& asEntry(Links* node) noexcept { return *static_cast<Entry*>(node); }

    static void pushBack(Links& head, Entry& e, std::uint8_t where) noexcept {
        Links& node = e;
        node.prev = head.prev;
        node.next = &head;
        head.prev->next = &node;
        head.prev = &node;
        e.where_ = where;
    }

    // spliceBack: moves all of `from` to the end of `to`; `from` ends empty.
    static void spliceBack(Links& to, Links& from) noexcept {
        if (isEmpty(from)) {
            return;
        }
        from.next->prev = to.prev;
        to.prev->next = from.next;
        from.prev->next = &to;
        to.prev = from.prev;
        initList(from);
    }

    // ---- ticks ------------------------------------------------------------

    // Nanosecond offset of t from start_ (t >= start_), computed unsigned so
    // that it cannot overflow for any pair of time points.
    std::uint64_t offsetFromStart(Clock::time_point t) const noexcept {
        return static_cast<std::uint64_t>(t.time_since_epoch().count()) -
               static_cast<std::uint64_t>(start_.time_since_epoch().count());
    }

    // tickAtOrAfter: the tick of a deadline (rounded up; never early).
    std::uint64_t tickAtOrAfter(Clock::time_point t) const noexcept {
        if (t <= start_) {
            return 0;
        }
        const std::uint64_t off = offsetFromStart(t);
        return off / resolution_ + (off % resolution_ != 0 ? 1 : 0);
    }

    // tickAtOrBefore: the tick reached at time `now` (rounded down).
    std::uint64_t tickAtOrBefore(Clock::time_point now) const noexcept {
        return now <= start_ ? 0 : offsetFromStart(now) / resolution_;
    }

    // timeOfTick: start_ + tick * resolution, saturating at time_point::max().
    Clock::time_point timeOfTick(std::uint64_t tick) const noexcept {
        constexpr Clock::rep kMaxRep = std::numeric_limits<Clock::rep>::max();
        if (tick > static_cast<std::uint64_t>(kMaxRep) / resolution_) {
            return Clock::time_point::max();
        }
        const auto offset = static_cast<Clock::rep>(tick * resolution_);
        const Clock::rep startRep = start_.time_since_epoch().count();
        if (startRep > 0 && offset > kMaxRep - startRep) {
            return Clock::time_point::max();
        }
        return start_ + Clock::duration(offset);
    }

    // levelFor: the level for `tick` relative to the current tick (>= 0 ...
    // kLevels-1, or kOverflow): the 6-bit group of the highest bit in which
    // they differ. "| kSlotMask" maps equal ticks (and same-block) to 0.
    static unsigned levelFor(std::uint64_t elapsed, std::uint64_t tick) noexcept {
        const std::uint64_t diff = (elapsed ^ tick) | kSlotMask;
        const unsigned highestBit = 63 - static_cast<unsigned>(std::countl_zero(diff));
        const unsigned level = highestBit / kSlotBits;
        return level < kLevels ? level : kOverflow;
    }

    // slotStart: first tick of slot `slot` of level `level` in the block of
    // elapsed_. All stored level-k entries lie in that block (levelFor).
    std::uint64_t slotStart(unsigned level, unsigned slot) const noexcept {
        const unsigned width = kSlotBits * level;
        const std::uint64_t blockMask = (std::uint64_t{1} << (width + kSlotBits)) - 1;
        return (elapsed_ & ~blockMask) | (std::uint64_t{slot} << width);
    }

    // ---- placement --------------------------------------------------------

    // place: stores an armed entry with tick_ >= elapsed_ in its level/slot
    // (tick_ == elapsed_ only while cascading: level 0, fired this advance).
    void place(Entry& e) noexcept {
        const unsigned level = levelFor(elapsed_, e.tick_);
        if (level == kOverflow) {
            pushBack(overflow_, e, kOverflow);
            overflowMinTick_ = std::min(overflowMinTick_, e.tick_);
            return;
        }
        const auto slot = static_cast<unsigned>((e.tick_ >> (kSlotBits * level)) & kSlotMask);
        Level& l = levels_[level];
        pushBack(l.slots[slot], e, static_cast<std::uint8_t>(level));
        e.slot_ = static_cast<std::uint8_t>(slot);
        l.occupied |= std::uint64_t{1} << slot;
        l.minTick[slot] = std::min(l.minTick[slot], e.tick_);
    }

    // rearmInPlace: re-arms an entry whose new tick belongs in the level and
    // slot that already hold it by changing its deadline only: the slot is
    // processed (fired, or cascaded by tick_) no later than the new tick,
    // so nothing fires late, and no list neighbour is touched. Timeouts
    // re-armed again and again mostly move within a coarse slot (4 s wide
    // at level 2), and among many armed entries each neighbour touched is
    // a cache miss. False (nothing changed) otherwise.
    bool rearmInPlace(Entry& e, Clock::time_point deadline) noexcept {
        if (e.where_ >= kLevels || deadline == Clock::time_point::max()) {
            return false;
        }
        const std::uint64_t tick = tickAtOrAfter(deadline);
        if (tick <= elapsed_ || levelFor(elapsed_, tick) != e.where_ ||
            ((tick >> (kSlotBits * e.where_)) & kSlotMask) != e.slot_) {
            return false;
        }
        e.deadline_ = deadline;
        e.tick_ = tick;
        std::uint64_t& minTick = levels_[e.where_].minTick[e.slot_];
        minTick = std::min(minTick, tick);
        return true;
    }

    // unlink: removes an armed entry from whatever list holds it and keeps
    // the occupancy masks and lower bounds in step.
    void unlink(Entry& e) noexcept {
        if (e.where_ == kForever) {
            e.where_ = kNowhere;
            --size_;
            return;
        }
        Links& node = e;
        node.prev->next = node.next;
        node.next->prev = node.prev;
        node.prev = node.next = nullptr;
        if (e.where_ < kLevels) {
            Level& l = levels_[e.where_];
            if (isEmpty(l.slots[e.slot_])) {
                l.occupied &= ~(std::uint64_t{1} << e.slot_);
                l.minTick[e.slot_] = kNoTick;
            }
        } else if (e.where_ == kOverflow && isEmpty(overflow_)) {
            overflowMinTick_ = kNoTick;
        }
        e.where_ = kNowhere;
        --size_;
    }

    // ---- advancing --------------------------------------------------------

    // nextEvent: the lowest occupied slot of the lowest non-empty level. A
    // level's entries all precede those of the levels above (they lie in the
    // current block of the level above), and within a level no slot below
    // the current one is occupied (passed slots were cascaded), so the lowest
    // set bit is the earliest slot.
    std::optional<Event> nextEvent() const noexcept {
        for (unsigned k = 0; k < kLevels; ++k) {
            if (const std::uint64_t occ = levels_[k].occupied; occ != 0) {
                const auto slot = static_cast<unsigned>(std::countr_zero(occ));
                return Event{static_cast<std::uint8_t>(k), slot, slotStart(k, slot)};
            }
        }
        if (!isEmpty(overflow_)) {
            // Re-sorted when the wheel enters the next level-5 block, or
            // straight to the block of its earliest entry: the levels are empty,
            // so no block in between has anything to do (this keeps a jump of
            // years cheap at a fine resolution).
            const std::uint64_t nextBlock = (elapsed_ | (kWheelSpanTicks - 1)) + 1;
            const std::uint64_t minBlock = overflowMinTick_ & ~(kWheelSpanTicks - 1);
            return Event{kOverflow, 0, std::max(nextBlock, minBlock)};
        }
        return std::nullopt;
    }

    // fireOne: unlinks the entry, then hands it to the callback (which may
    // therefore re-arm or destroy it).
    template <class F>
    void fireOne(Entry& e, F& onExpired) {
        unlink(e);
        onExpired(e);
    }

    // firePending: fires the entries that were due before this advance().
    // They are moved to `batch` (the AdvanceGuard's: if a callback throws,
    // the rest goes back to pending_) so that entries the callbacks arm as
    // due wait for the next advance() instead of looping here.
    template <class F>
    std::size_t firePending(Links& batch, F& onExpired) {
        spliceBack(batch, pending_);
        std::size_t fired = 0;
        while (!isEmpty(batch)) {
            fireOne(asEntry(batch.next), onExpired);
            ++fired;
        }
        return fired;
    }

    // fireSlot: fires level-0 slot `slot` (all its entries have tick ==
    // elapsed_). Callbacks cannot add to it: entries armed at <= elapsed_ go
    // to pending_, later ones to other slots or levels.
    template <class F>
    std::size_t fireSlot(unsigned slot, F& onExpired) {
        Links& head = levels_[0].slots[slot];
        std::size_t fired = 0;
        while (!isEmpty(head)) {
            fireOne(asEntry(head.next), onExpired);
            ++fired;
        }
        return fired;
    }

    // cascade: re-stores the entries of a level-k slot whose start elapsed_
    // has reached; each lands in a lower level.
    void cascade(Level& level, unsigned slot) noexcept {
        Links taken;
        initList(taken);
        spliceBack(taken, level.slots[slot]);
        level.occupied &= ~(std::uint64_t{1} << slot);
        level.minTick[slot] = kNoTick;
        restore(taken);
    }

    // cascadeOverflow: at the start of a new level-5 block, re-sorts the
    // overflow list; entries still beyond this block go back to it.
    void cascadeOverflow() noexcept {
        Links taken;
        initList(taken);
        spliceBack(taken, overflow_);
        overflowMinTick_ = kNoTick;
        restore(taken);
    }

    // restore: places every entry of `taken` again (relative to elapsed_).
    void restore(Links& taken) noexcept {
        while (!isEmpty(taken)) {
            Entry& e = asEntry(taken.next);
            Links& node = e;
            taken.next = node.next;
            node.next->prev = &taken;
            place(e);
        }
    }

    Clock::time_point start_;
    std::uint64_t resolution_;   // nanoseconds per tick
    std::uint64_t elapsed_ = 0;  // the current tick
    std::size_t size_ = 0;
    std::array<Level, kLevels> levels_;
    Links pending_;   // due entries (armed at or before elapsed_)
    Links overflow_;  // beyond the current level-5 block
    std::uint64_t overflowMinTick_ = kNoTick;
    bool advancing_ = false;
};

}  // namespace kvexec
