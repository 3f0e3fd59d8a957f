// The Wheel backend's record slab (src/executor/wheel/record_slab.h):
// records get distinct, cache-line-aligned slots; a freed slot is the next
// one handed out; and under AddressSanitizer a freed record is poisoned,
// so a use after its task was dropped traps as a use after free() would.
#include "executor/wheel/record_slab.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <vector>

#include "executor/test_support.h"
#include "executor/wheel/shard.h"

namespace kvexec::wheel {
namespace {

using kvexec::test::makeTask;
using kvexec::test::TestOwner;

struct SlabWorld {
    TestOwner owner;
    detail::OwnerState ownerState{1, 1};
    Shard shard;
    RecordSlab slab;

    Record* make() {
        return slab.make(makeTask(owner, [](LambdaTask&) { return false; }), ownerState, shard);
    }
};

TEST(RecordSlab, RecordsGetTheirOwnLinesAndFreedSlotsComeBack) {
    SlabWorld w;
    std::vector<Record*> made;
    std::set<std::uintptr_t> lines;
    for (int i = 0; i < 200; ++i) {  // more than one chunk
        Record* r = w.make();
        const auto address = reinterpret_cast<std::uintptr_t>(r);
        EXPECT_EQ(address % 64, 0u);
        lines.insert(address / 64);
        lines.insert(address / 64 + 1);
        made.push_back(r);
    }
    EXPECT_EQ(lines.size(), 2 * made.size()) << "two records share a cache line";
    Record* freed = made[17];
    w.slab.destroy(freed);
    Record* again = w.make();
    EXPECT_EQ(again, freed);
    for (Record* r : made) {
        w.slab.destroy(r);
    }
}

#if defined(__SANITIZE_ADDRESS__)
TEST(RecordSlab, UseOfAFreedRecordTrapsUnderAddressSanitizer) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    SlabWorld w;
    Record* r = w.make();
    w.slab.destroy(r);
    auto readKey = [](const Record* rec) {
        return *reinterpret_cast<const volatile std::int64_t*>(&rec->key);
    };
    EXPECT_DEATH(readKey(r), "use-after-poison");
}
#endif

}  // namespace
}  // namespace kvexec::wheel
