// id_table.h: a shard's index from task id to the Record that holds it.
//
// Why not std::unordered_map: among a million tasks a lookup there reads
// the bucket, then the node *before* the wanted one (libstdc++ buckets
// point at their predecessor), then the node: dependent cache misses one
// after another; and it divides by a prime on every lookup. Here a lookup
// reads one slot, which holds the id, the value and a companion pointer
// (the record's task), so the caller can fetch value and companion at once.
//
// Layout: open addressing, linear probing in Robin Hood order, power-of-two
// capacity, at most half full; erase shifts later entries back (no
// tombstones). A lookup, an insert and an erase touch the probe run of one
// home slot, not the whole run of occupied slots around it. The home slot
// of an id is id / Spread (a shard's ids are Spread apart, see shard.h)
// modulo the capacity: tasks created one after another sit in neighbouring
// slots, and re-arming many of them in turn walks the table sequentially,
// which the CPU prefetches.
// (A hash that scatters the slots made TimeoutAddCancel with 1,000,000
// timeouts a third slower: a miss per lookup.) The cost: ids that repeat
// with a period of a power of two share home slots, and their probe runs
// grow to about half that period. A server's ids come from one counter
// shared by every pool and thread, which hands each thread blocks of
// consecutive ids of growing size (task.cc), so such a period is not
// expected.
//
// Thread safety: none; the shard's mutex guards it. Stores raw pointers and
// owns nothing.
#pragma once

#include <bit>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace kvexec::wheel {

template <class T, class Companion, std::uint64_t Spread>
class IdTable {
  public:
    struct Hit {
        T* value = nullptr;  // null: not present
        Companion* companion = nullptr;
    };

    IdTable() : slots_(kMinCapacity) {}

    std::size_t size() const noexcept { return size_; }

    Hit find(std::uint64_t id) const noexcept {
        const std::size_t i = locate(id);
        return i == kAbsent ? Hit{} : Hit{slots_[i].value, slots_[i].companion};
    }

    // Requires: `id` is not present, value != nullptr, and every id in the
    // table leaves the same remainder modulo Spread (one shard's ids).
    void insert(std::uint64_t id, T* value, Companion* companion) {
        assert(value != nullptr && find(id).value == nullptr);
        if (2 * (size_ + 1) > slots_.size()) {
            rehash(2 * slots_.size());
        }
        place(Slot{id, value, companion});
        ++size_;
    }

    // Removes `id`; returns its value, or nullptr if it was not present.
    T* erase(std::uint64_t id) noexcept {
        const std::size_t i = locate(id);
        if (i == kAbsent) {
            return nullptr;
        }
        T* value = std::exchange(slots_[i].value, nullptr);
        closeGap(i);
        --size_;
        // Shrinking keeps a walk (forEach) proportional to size. It
        // allocates; if that fails the table just stays larger.
        if (slots_.size() > kMinCapacity && 8 * size_ < slots_.size()) {
            try {
                rehash(slots_.size() / 2);
            } catch (...) {
            }
        }
        return value;
    }

    // f(T&) for every value; f must not insert or erase.
    template <class F>
    void forEach(F&& f) const {
        for (const Slot& s : slots_) {
            if (s.value != nullptr) {
                f(*s.value);
            }
        }
    }

    // Empties the table, returning every value.
    std::vector<T*> takeAll() {
        std::vector<T*> all;
        all.reserve(size_);
        forEach([&](T& value) { all.push_back(&value); });
        slots_.assign(kMinCapacity, Slot{});
        size_ = 0;
        return all;
    }

  private:
    struct Slot {
        std::uint64_t id = 0;
        T* value = nullptr;  // null: empty
        Companion* companion = nullptr;
    };
    static constexpr std::size_t kMinCapacity = 16;
    static constexpr std::size_t kAbsent = ~std::size_t{0};

    std::size_t mask() const noexcept { return slots_.size() - 1; }
    std::size_t next(std::size_t i) const noexcept { return (i + 1) & mask(); }
    std::size_t home(std::uint64_t id) const noexcept {
        return static_cast<std::size_t>(id / Spread) & mask();
    }

    std::size_t distance(std::size_t i) const noexcept { return (i - home(slots_[i].id)) & mask(); }

    // The slot holding `id`, or kAbsent. Robin Hood order: an entry never
    // lies closer to its home than the entries it passed, so the search
    // stops at the first one closer to its own home than `id` would be.
    std::size_t locate(std::uint64_t id) const noexcept {
        for (std::size_t i = home(id), d = 0;; i = next(i), ++d) {
            if (slots_[i].value == nullptr) {
                return kAbsent;
            }
            if (slots_[i].id == id) {
                return i;
            }
            if (distance(i) < d) {
                return kAbsent;
            }
        }
    }

    // Robin Hood insertion: an entry passing one that is closer to its
    // home takes that slot, and the displaced one moves on.
    void place(Slot s) noexcept {
        for (std::size_t i = home(s.id), d = 0;; i = next(i), ++d) {
            if (slots_[i].value == nullptr) {
                slots_[i] = s;
                return;
            }
            if (const std::size_t held = distance(i); held < d) {
                std::swap(s, slots_[i]);
                d = held;
            }
        }
    }

    // Slot `gap` was just emptied: the entries after it that are not at
    // their home move back one slot each. It stops at an empty slot or at
    // an entry at its home, so erasing among a long run of neighbouring ids
    // (each at its home) moves nothing.
    void closeGap(std::size_t gap) noexcept {
        for (std::size_t j = next(gap); slots_[j].value != nullptr && distance(j) > 0;
             j = next(j)) {
            slots_[gap] = std::exchange(slots_[j], Slot{});
            gap = j;
        }
    }

    void rehash(std::size_t capacity) {
        assert(std::has_single_bit(capacity));
        std::vector<Slot> old(capacity);
        old.swap(slots_);
        for (const Slot& s : old) {
            if (s.value != nullptr) {
                place(s);
            }
        }
    }

    std::vector<Slot> slots_;
    std::size_t size_ = 0;
};

}  // namespace kvexec::wheel
