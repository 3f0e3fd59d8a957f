// striped_count.h: a count that threads on many cores add to at once, kept
// as one cache line per stripe so that they do not all write one line. The
// tasks an owner has in a pool are two of them: every schedule() adds to
// one, every worker that drops a task to the other (owner_registry.h).
// Callers pick the stripe, as a rule the one of the core they run on.
//
// Thread safety: add() and sum() from any thread. Both are seq_cst (the
// owners' drain protocol pairs them with another seq_cst variable). sum()
// reads the stripes one after another: while adds go on it may miss some,
// never count one twice, so it is exact once adds have stopped and is
// otherwise at most the count.
#pragma once

#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace kvexec::detail {

class StripedCount {
  public:
    explicit StripedCount(std::size_t stripes)
        : stripes_(stripes), slots_(std::make_unique<Slot[]>(stripes)) {
        assert(stripes >= 1);
    }

    std::size_t stripes() const noexcept { return stripes_; }

    // Requires: stripe < stripes().
    void add(std::size_t stripe) noexcept {
        assert(stripe < stripes_);
        slots_[stripe].value.fetch_add(1);
    }

    std::uint64_t sum() const noexcept {
        std::uint64_t total = 0;
        for (std::size_t i = 0; i < stripes_; ++i) {
            total += slots_[i].value.load();
        }
        return total;
    }

  private:
    struct alignas(64) Slot {
        std::atomic<std::uint64_t> value{0};
    };
    std::size_t stripes_;
    std::unique_ptr<Slot[]> slots_;
};

}  // namespace kvexec::detail
