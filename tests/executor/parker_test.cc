// parker_test.cc: the Wheel backend's idle-worker parker: an unpark is
// never lost whether it comes before, during or after the spin, and the
// pool-wide cap on spinning workers holds.
#include "executor/wheel/parker.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "executor/test_support.h"

namespace kvexec::wheel {
namespace {

using test::waitFor;

// Like waitFor, but yields instead of sleeping 1 ms: the hand-off test
// waits thousands of times for something that takes microseconds.
template <class Pred>
bool yieldUntil(Pred done) {
    const auto until = std::chrono::steady_clock::now() + test::kDeadline;
    while (!done()) {
        if (std::chrono::steady_clock::now() > until) {
            return done();
        }
        std::this_thread::yield();
    }
    return true;
}

TEST(Parker, AnUnparkBeforeParkMakesParkReturnAtOnce) {
    SpinGate gate;
    Parker p;
    p.prepare();
    p.unpark();
    p.park(gate);  // would hang if the unpark were lost
    SUCCEED();
}

// Many rounds of a producer unparking a worker at varying moments: while it
// spins, while it falls asleep, after it sleeps. Every round must end.
TEST(Parker, NoUnparkIsLostInThousandsOfHandOffs) {
    SpinGate gate;
    Parker p;
    std::atomic<int> round{0};
    std::atomic<bool> prepared{false};
    constexpr int kRounds = 3000;
    std::thread worker([&] {
        for (int i = 0; i < kRounds; ++i) {
            p.prepare();
            prepared.store(true, std::memory_order_release);
            p.park(gate);
            round.fetch_add(1, std::memory_order_release);
        }
    });
    for (int i = 0; i < kRounds; ++i) {
        ASSERT_TRUE(
            yieldUntil([&] { return prepared.exchange(false, std::memory_order_acq_rel); }));
        if (i % 3 == 1) {
            std::this_thread::yield();
        } else if (i % 97 == 0) {
            // Late enough that the worker has stopped spinning and sleeps.
            std::this_thread::sleep_for(std::chrono::microseconds(300));
        }
        p.unpark();
        ASSERT_TRUE(yieldUntil([&] { return round.load(std::memory_order_acquire) == i + 1; }))
            << "round " << i << " never woke";
    }
    worker.join();
}

TEST(SpinGate, AdmitsAtMostItsLimitAtOnce) {
    SpinGate gate;
    ASSERT_GE(gate.limit(), 1u);
    for (unsigned i = 0; i < gate.limit(); ++i) {
        EXPECT_TRUE(gate.tryEnter());
    }
    EXPECT_FALSE(gate.tryEnter());
    gate.leave();
    EXPECT_TRUE(gate.tryEnter());
    for (unsigned i = 0; i < gate.limit(); ++i) {
        gate.leave();
    }
    EXPECT_TRUE(gate.tryEnter());
    gate.leave();
}

// With the gate full a worker does not spin: it sleeps, and an unpark from
// another thread still wakes it.
TEST(Parker, AWorkerDeniedASpinSleepsAndStillWakes) {
    SpinGate gate;
    for (unsigned i = 0; i < gate.limit(); ++i) {
        ASSERT_TRUE(gate.tryEnter());
    }
    Parker p;
    std::atomic<bool> woke{false};
    p.prepare();
    std::thread worker([&] {
        p.park(gate);
        woke.store(true);
    });
    p.unpark();
    EXPECT_TRUE(waitFor([&] { return woke.load(); }));
    worker.join();
    for (unsigned i = 0; i < gate.limit(); ++i) {
        gate.leave();
    }
}

}  // namespace
}  // namespace kvexec::wheel
