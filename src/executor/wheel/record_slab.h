// record_slab.h: where a shard's Records live.
//
// Records are carved from chunks of kChunkRecords cache-line-aligned
// slots, and a freed record's slot goes on a free list for the next one.
// Why not one allocation per record:
//   - Each record has its own cache lines: records of different shards
//     (re-armed by different threads) never share a line, as two malloc'd
//     120-byte blocks can.
//   - A shard's records lie together in creation order, so re-arming many
//     of them in turn reads memory sequentially (TimeoutAddCancel with a
//     million timeouts; at 16 threads each thread works in one shard).
//   - Freeing a record is a push on the free list, so nothing is freed to
//     the allocator under the shard lock.
// The cost: a shard keeps the slots of the most records it ever held at
// once (128 bytes each) until the pool is destroyed.
//
// Thread safety: none; the shard's mutex guards it.
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <utility>
#include <vector>

#include "executor/wheel/record.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define KVEXEC_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define KVEXEC_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define KVEXEC_POISON(p, n) ((void)(p), (void)(n))
#define KVEXEC_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace kvexec::wheel {

class RecordSlab {
  public:
    RecordSlab() = default;
    RecordSlab(const RecordSlab&) = delete;
    RecordSlab& operator=(const RecordSlab&) = delete;
    // Requires: every record made here was destroyed (shutdown does that).
    ~RecordSlab() = default;

    template <class... Args>
    Record* make(Args&&... args) {
        Slot* slot = takeSlot();
        KVEXEC_UNPOISON(slot, sizeof(Slot));
        return ::new (static_cast<void*>(slot->bytes)) Record(std::forward<Args>(args)...);
    }

    // Under AddressSanitizer a freed slot, but for its free-list link, is
    // poisoned: a use of a freed record traps as it would after free().
    void destroy(Record* r) noexcept {
        std::destroy_at(r);
        auto* slot = reinterpret_cast<Slot*>(r);
        ::new (static_cast<void*>(slot->bytes)) FreeLink{free_};
        KVEXEC_POISON(slot->bytes + sizeof(FreeLink), sizeof(Slot) - sizeof(FreeLink));
        free_ = slot;
    }

  private:
    static constexpr std::size_t kChunkRecords = 64;  // 8 KiB chunks
    struct alignas(64) Slot {
        alignas(Record) std::byte bytes[sizeof(Record)];
    };
    static_assert(sizeof(Slot) == 128, "a record is two cache lines (Record::prefetch)");
    struct FreeLink {
        Slot* next;
    };

    Slot* takeSlot() {
        if (free_ != nullptr) {
            Slot* slot = free_;
            free_ = std::launder(reinterpret_cast<FreeLink*>(slot->bytes))->next;
            return slot;
        }
        if (chunks_.empty() || used_ == kChunkRecords) {
            chunks_.push_back(std::make_unique<Slot[]>(kChunkRecords));
            used_ = 0;
        }
        return &chunks_.back()[used_++];
    }

    std::vector<std::unique_ptr<Slot[]>> chunks_;
    std::size_t used_ = 0;  // slots of the last chunk handed out
    Slot* free_ = nullptr;
};

}  // namespace kvexec::wheel

#undef KVEXEC_POISON
#undef KVEXEC_UNPOISON
