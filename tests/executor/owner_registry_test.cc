// The owner registry's admission stripes (the Wheel's schedule() path):
// a task counted in through one core's stripe and out on another's, and
// unregistering while threads admit through every stripe at once.
#include <gtest/gtest.h>

#include <atomic>
#include <optional>
#include <thread>
#include <vector>

#include "executor/common/owner_registry.h"
#include "executor/test_support.h"

namespace kvexec::test {
namespace {

using detail::OwnerRegistry;
using detail::OwnerState;

// A registry with `owner` registered, a task of it to admit, and the
// steps of unregistering the owner, each under the registry's lock.
struct RegisteredOwner {
    explicit RegisteredOwner(std::size_t stripes) : registry(stripes) {
        registry.registerOwner(owner);
    }

    std::optional<OwnerRegistry::Registration> beginUnregister() {
        detail::MutexLock lock(registry.mutex);
        return registry.beginUnregisterLocked(owner);
    }
    void awaitDrained(OwnerRegistry::Registration registration) {
        detail::UniqueLock lock(registry.mutex);
        registry.awaitDrainedLocked(owner, registration, lock);
    }

    OwnerRegistry registry;
    TestOwner owner;
    TaskPtr task = makeTask(owner, [](LambdaTask&) { return false; });
};

TEST(StripedCount, SumsEveryStripe) {
    detail::StripedCount count(4);
    count.add(0);
    count.add(3);
    count.add(3);
    EXPECT_EQ(count.sum(), 3u);
}

TEST(OwnerRegistry, ATaskCountedInOnOneStripeAndOutOnAnotherLeavesNoneHeld) {
    RegisteredOwner o(4);
    OwnerState* state = o.registry.admit(*o.task);
    ASSERT_NE(state, nullptr);
    EXPECT_EQ(state->held(), 1u);
    state->released.add(state->released.stripes() - 1);  // another core's stripe
    EXPECT_EQ(state->held(), 0u);
}

TEST(OwnerRegistry, AnOwnerNotRegisteredIsRefusedWithItsName) {
    OwnerRegistry registry(4);
    TestOwner owner("unknown-bucket");
    auto task = makeTask(owner, [](LambdaTask&) { return false; });
    EXPECT_EQ(registry.admit(*task), nullptr);
    EXPECT_NE(std::string(registry.refusedError(*task).what()).find("unknown-bucket"),
              std::string::npos);
}

// Threads admit and count out through their cores' stripes while the
// owner is unregistered. Unregistering must wait for every task admitted
// before it began (the owner's state is freed once it returns: under ASan
// a late count would be a use after free), and refuse every one after.
TEST(OwnerRegistry, UnregisteringWaitsForAdmissionsThroughEveryStripeAndRefusesLaterOnes) {
    for (int round = 0; round < 20; ++round) {
        RegisteredOwner o(8);
        std::atomic<bool> unregistered{false};
        std::atomic<int> admitted{0};
        std::atomic<int> admittedAfterUnregister{0};
        std::vector<std::thread> admitters;
        for (int t = 0; t < 4; ++t) {
            admitters.emplace_back([&] {
                for (int refusals = 0; refusals < 100;) {
                    const bool after = unregistered.load();
                    if (OwnerState* state = o.registry.admit(*o.task)) {
                        admitted.fetch_add(1);
                        if (after) {
                            admittedAfterUnregister.fetch_add(1);
                        }
                        o.registry.uncount(*state);
                    } else {
                        ++refusals;
                    }
                }
            });
        }
        ASSERT_TRUE(waitForYielding([&] { return admitted.load() > 200; }));
        const auto registration = o.beginUnregister();
        ASSERT_TRUE(registration.has_value());
        o.awaitDrained(*registration);
        unregistered = true;
        for (auto& t : admitters) {
            t.join();
        }
        EXPECT_EQ(admittedAfterUnregister.load(), 0) << "round " << round;
        EXPECT_EQ(o.registry.count(), 0u);
    }
}

// Two threads unregister one owner; the first to see its tasks drained
// forgets it, and the owner is registered again before the second looks.
// The second must return and leave the new registration alone (before, it
// forgot that one too; with admission through the stripes, while tasks
// were being admitted to it).
TEST(OwnerRegistry, ASecondUnregisteringLeavesTheNextRegistrationAlone) {
    RegisteredOwner o(4);
    OwnerState* state = o.registry.admit(*o.task);
    ASSERT_NE(state, nullptr);
    const auto first = o.beginUnregister();
    const auto second = o.beginUnregister();
    ASSERT_TRUE(first.has_value());
    ASSERT_EQ(first, second);
    o.registry.uncount(*state);
    o.awaitDrained(*first);
    EXPECT_EQ(o.registry.count(), 0u);
    o.registry.registerOwner(o.owner);
    o.awaitDrained(*second);
    EXPECT_EQ(o.registry.count(), 1u);
    OwnerState* again = o.registry.admit(*o.task);
    ASSERT_NE(again, nullptr) << "the owner's new registration was forgotten";
    o.registry.uncount(*again);
}

}  // namespace
}  // namespace kvexec::test
