// parker_test.cc: the Wheel backend's idle-worker parker: an unpark is
// never lost whether it comes before, during or after the spin, the
// pool-wide cap on spinning workers holds, and the workers a locked section
// took are unparked even when it throws (PendingUnparks).
#include "executor/wheel/parker.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "executor/test_support.h"
#include "executor/wheel/pending_unparks.h"

namespace kvexec::wheel {
namespace {

using test::waitFor;
using test::waitForYielding;

TEST(Parker, AnUnparkBeforeParkMakesParkReturnAtOnce) {
    SpinGate gate;
    Parker p;
    p.prepare();
    ASSERT_TRUE(p.claimSpin(gate, SpinMode::Pause));
    p.unpark();
    p.park(gate, SpinMode::Pause, [](bool) { return true; });  // would hang if the unpark were lost
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
            p.claimSpin(gate, SpinMode::Pause);  // spins while spinning pays
            prepared.store(true, std::memory_order_release);
            p.park(gate, SpinMode::Pause, [](bool) { return true; });
            round.fetch_add(1, std::memory_order_release);
        }
    });
    for (int i = 0; i < kRounds; ++i) {
        ASSERT_TRUE(
            waitForYielding([&] { return prepared.exchange(false, std::memory_order_acq_rel); }));
        if (i % 3 == 1) {
            std::this_thread::yield();
        } else if (i % 97 == 0) {
            // Late enough that the worker has stopped spinning and sleeps.
            std::this_thread::sleep_for(std::chrono::microseconds(300));
        }
        p.unpark();
        ASSERT_TRUE(waitForYielding([&] { return round.load(std::memory_order_acquire) == i + 1; }))
            << "round " << i << " never woke";
    }
    worker.join();
}

// Yield spinners up to one per core, Pause spinners up to half the cores,
// counted together.
TEST(SpinGate, AdmitsAtMostItsLimitAtOnce) {
    SpinGate gate;
    ASSERT_GE(gate.limit(SpinMode::Pause), 1u);
    ASSERT_GE(gate.limit(SpinMode::Yield), gate.limit(SpinMode::Pause));
    for (unsigned i = 0; i < gate.limit(SpinMode::Pause); ++i) {
        EXPECT_TRUE(gate.tryEnter(SpinMode::Pause));
    }
    EXPECT_FALSE(gate.tryEnter(SpinMode::Pause));
    const unsigned moreYielding = gate.limit(SpinMode::Yield) - gate.limit(SpinMode::Pause);
    for (unsigned i = 0; i < moreYielding; ++i) {
        EXPECT_TRUE(gate.tryEnter(SpinMode::Yield));
    }
    EXPECT_FALSE(gate.tryEnter(SpinMode::Yield));
    gate.leave();
    EXPECT_TRUE(gate.tryEnter(SpinMode::Yield));
    for (unsigned i = 0; i < gate.limit(SpinMode::Yield); ++i) {
        gate.leave();
    }
    EXPECT_TRUE(gate.tryEnter(SpinMode::Pause));
    gate.leave();
}

// With the gate full a worker does not spin but goes straight to sleep();
// an unpark from another thread, before or after it falls asleep, still
// wakes it. (The sleeping case is forced in NoUnparkIsLostInThousandsOfHandOffs.)
TEST(Parker, AWorkerDeniedASpinSleepsAndStillWakes) {
    SpinGate gate;
    for (unsigned i = 0; i < gate.limit(SpinMode::Yield); ++i) {
        ASSERT_TRUE(gate.tryEnter(SpinMode::Yield));
    }
    Parker p;
    std::atomic<bool> woke{false};
    p.prepare();
    EXPECT_FALSE(p.claimSpin(gate, SpinMode::Pause));
    std::thread worker([&] {
        p.park(gate, SpinMode::Pause, [](bool) { return true; });
        woke.store(true);
    });
    p.unpark();
    EXPECT_TRUE(waitFor([&] { return woke.load(); }));
    worker.join();
    for (unsigned i = 0; i < gate.limit(SpinMode::Yield); ++i) {
        gate.leave();
    }
}

// `p` claims a spin, and the rest of the gate's places are taken: a place
// is free again only if `p` gives its own back. The caller leaves every
// place at the end.
void claimTheLastPlace(SpinGate& gate, Parker& p) {
    p.prepare();
    ASSERT_TRUE(p.claimSpin(gate, SpinMode::Pause));
    for (unsigned i = 1; i < gate.limit(SpinMode::Pause); ++i) {
        ASSERT_TRUE(gate.tryEnter(SpinMode::Pause));
    }
}

// A worker that will spin holds its place in the gate from claimSpin(),
// when it enlists: the cap counts it while wakers may already prefer it. A
// spin that catches work keeps the place through the run that follows (a
// busy hand-off loop writes the gate's line only when a spin ends without
// work); leaveGate() gives it back, and the next claim takes it again.
TEST(Parker, AClaimedSpinHoldsAPlaceInTheGateUntilTheWorkerLeavesIt) {
    SpinGate gate;
    Parker p;
    ASSERT_NO_FATAL_FAILURE(claimTheLastPlace(gate, p));
    EXPECT_FALSE(gate.tryEnter(SpinMode::Pause));
    p.unpark();
    p.park(gate, SpinMode::Pause, [](bool) { return true; });
    EXPECT_FALSE(gate.tryEnter(SpinMode::Pause)) << "a caught spin keeps its place";
    p.prepare();
    EXPECT_TRUE(p.claimSpin(gate, SpinMode::Pause)) << "its own place serves the next spin";
    p.unpark();
    p.park(gate, SpinMode::Pause, [](bool) { return true; });
    p.leaveGate(gate);
    EXPECT_TRUE(gate.tryEnter(SpinMode::Pause));
    for (unsigned i = 0; i < gate.limit(SpinMode::Pause); ++i) {
        gate.leave();
    }
}

// A worker about to run a task whose last run was long gives its place
// back, so that idle workers of every type may spin while it runs; before
// a short run it keeps the place (a busy hand-off loop writes nothing).
TEST(Parker, AWorkerAboutToRunALongTaskGivesItsPlaceBack) {
    SpinGate gate;
    Parker p;
    ASSERT_NO_FATAL_FAILURE(claimTheLastPlace(gate, p));
    p.unpark();
    p.park(gate, SpinMode::Pause, [](bool) { return true; });  // a caught spin
    p.beforeRun(gate, Parker::kLongRun / 10);
    EXPECT_FALSE(gate.tryEnter(SpinMode::Pause)) << "a short run keeps the place";
    p.beforeRun(gate, Parker::kLongRun);
    EXPECT_TRUE(gate.tryEnter(SpinMode::Pause)) << "a long run gives it back";
    p.beforeRun(gate, Parker::kLongRun);  // no place: leaves nothing
    EXPECT_FALSE(gate.tryEnter(SpinMode::Pause)) << "a place was given back twice";
    for (unsigned i = 0; i < gate.limit(SpinMode::Pause); ++i) {
        gate.leave();
    }
}

// A spin that ends without work gives the place back before the worker
// sleeps.
TEST(Parker, ASpinThatCatchesNothingGivesItsPlaceBack) {
    SpinGate gate;
    Parker p;
    ASSERT_NO_FATAL_FAILURE(claimTheLastPlace(gate, p));
    std::atomic<bool> aboutToSleep{false};
    bool placeFreeBeforeSleep = false;
    std::thread worker([&] {
        p.park(gate, SpinMode::Pause, [&](bool spun) {
            EXPECT_TRUE(spun);
            placeFreeBeforeSleep = gate.tryEnter(SpinMode::Pause);
            aboutToSleep.store(true);
            return true;
        });
    });
    // Unparked only once the spin has ended without work.
    EXPECT_TRUE(waitFor([&] { return aboutToSleep.load(); }));
    p.unpark();
    worker.join();
    EXPECT_TRUE(placeFreeBeforeSleep);
    for (unsigned i = 0; i < gate.limit(SpinMode::Pause); ++i) {
        gate.leave();
    }
}

// A locked section that took idle workers and then threw must still unpark
// them: they are off the idle set, and nothing else would wake them.
TEST(PendingUnparks, AnExceptionAfterTakingWorkersStillUnparksThem) {
    SpinGate gate;
    Parker parkers[2];
    std::atomic<int> woke{0};
    std::thread workers[2];
    for (std::size_t i = 0; i < 2; ++i) {
        parkers[i].prepare();  // no claimSpin(): it goes straight to sleep
        workers[i] = std::thread([&p = parkers[i], &gate, &woke] {
            p.park(gate, SpinMode::Pause, [](bool) { return true; });
            woke.fetch_add(1);
        });
    }
    try {
        PendingUnparks pending;
        pending.add(&parkers[0]);
        pending.add(&parkers[1]);  // the second goes to the list's vector
        throw std::runtime_error("a locked section failed");
    } catch (const std::runtime_error&) {
    }
    EXPECT_TRUE(waitFor([&] { return woke.load() == 2; })) << "a taken worker was never unparked";
    for (std::size_t i = 0; i < 2; ++i) {
        parkers[i].unpark();  // ends a lost worker, so that the test fails rather than hangs
        workers[i].join();
    }
}

}  // namespace
}  // namespace kvexec::wheel
