// Unit tests of kvexec::TimerWheel (include/kvexec/timer_wheel.h), one test
// per rule of its header. Time is driven explicitly: the wheel only sees the
// time points the tests pass, so nothing here sleeps.
#include <kvexec/timer_wheel.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace kvexec {
namespace {

using namespace std::chrono_literals;
using Clock = TimerWheel::Clock;
using TimePoint = Clock::time_point;

// An arbitrary, fixed start: tests are reproducible and independent of the
// machine's uptime.
const TimePoint kStart = TimePoint(std::chrono::hours(1000));

struct Timer : TimerWheel::Entry {
    explicit Timer(int i = 0) : id(i) {}
    int id;
};

// Recorder: an onExpired callback that remembers what fired and when.
struct Fired {
    int id;
    TimePoint deadline;
    TimePoint wheelTime;  // currentTime() during the callback
};

class TimerWheelTest : public ::testing::Test {
  protected:
    // advanceTo: advances and returns what fired, checking the callback-time
    // rules that hold for every fired entry.
    std::vector<Fired> advanceTo(TimePoint now) {
        std::vector<Fired> fired;
        const std::size_t n = wheel.advance(now, [&](TimerWheel::Entry& e) {
            EXPECT_FALSE(e.armed()) << "an entry is unlinked before its callback";
            EXPECT_LE(e.deadline(), now) << "fired early";
            EXPECT_LE(e.deadline(), wheel.currentTime()) << "fired before the wheel's tick";
            fired.push_back({static_cast<Timer&>(e).id, e.deadline(), wheel.currentTime()});
        });
        EXPECT_EQ(n, fired.size());
        return fired;
    }

    static std::vector<int> ids(const std::vector<Fired>& fired) {
        std::vector<int> out;
        for (const auto& f : fired) {
            out.push_back(f.id);
        }
        return out;
    }

    TimerWheel wheel{kStart};
};

TEST_F(TimerWheelTest, EmptyWheelHasNoNextExpiry) {
    EXPECT_TRUE(wheel.empty());
    EXPECT_EQ(wheel.size(), 0u);
    EXPECT_EQ(wheel.nextExpiry(), std::nullopt);
    EXPECT_TRUE(advanceTo(kStart + 1h).empty());
    EXPECT_EQ(wheel.currentTime(), kStart + 1h);
}

TEST_F(TimerWheelTest, EntryIsSmall) {
    static_assert(sizeof(TimerWheel::Entry) <= 40);
    TimerWheel::Entry e;
    EXPECT_FALSE(e.armed());
}

TEST_F(TimerWheelTest, FiresAtDeadlineNeverBefore) {
    Timer t(1);
    wheel.arm(t, kStart + 10ms);
    EXPECT_TRUE(t.armed());
    EXPECT_EQ(t.deadline(), kStart + 10ms);
    EXPECT_EQ(wheel.nextExpiry(), kStart + 10ms);
    EXPECT_TRUE(advanceTo(kStart + 10ms - 1ns).empty());
    EXPECT_TRUE(t.armed());
    EXPECT_EQ(ids(advanceTo(kStart + 10ms)), std::vector<int>{1});
    EXPECT_FALSE(t.armed());
    EXPECT_TRUE(wheel.empty());
}

TEST_F(TimerWheelTest, DeadlineIsRoundedUpToTheResolution) {
    Timer t(1);
    wheel.arm(t, kStart + 10ms + 300us);
    EXPECT_EQ(wheel.nextExpiry(), kStart + 11ms) << "roundUp(d), never earlier than needed";
    EXPECT_TRUE(advanceTo(kStart + 10ms + 999us).empty()) << "d passed, but not its tick";
    const auto fired = advanceTo(kStart + 11ms);
    ASSERT_EQ(ids(fired), std::vector<int>{1});
    EXPECT_LT(fired[0].wheelTime - fired[0].deadline, wheel.resolution()) << "lateness bound";
}

TEST_F(TimerWheelTest, DeadlineBeforeStartIsDueAtOnce) {
    Timer t(1);
    wheel.arm(t, kStart - 5s);
    EXPECT_EQ(wheel.nextExpiry(), kStart);
    EXPECT_EQ(ids(advanceTo(kStart)), std::vector<int>{1});
}

TEST_F(TimerWheelTest, ArmedAtOrBeforeCurrentTimeFiresOnNextAdvance) {
    advanceTo(kStart + 100ms);
    Timer past(1), now(2);
    wheel.arm(past, kStart + 50ms);
    wheel.arm(now, kStart + 100ms);
    EXPECT_EQ(wheel.nextExpiry(), wheel.currentTime()) << "due entries: advance at once";
    EXPECT_EQ(ids(advanceTo(kStart + 100ms)), (std::vector<int>{1, 2}))
        << "fires even though time did not move";
}

TEST_F(TimerWheelTest, TimeGoingBackwardsIsIgnored) {
    Timer t(1);
    wheel.arm(t, kStart + 200ms);
    advanceTo(kStart + 150ms);
    EXPECT_TRUE(advanceTo(kStart + 10ms).empty());
    EXPECT_EQ(wheel.currentTime(), kStart + 150ms) << "the wheel does not move back";
    EXPECT_TRUE(advanceTo(kStart - 1h).empty()) << "not even before start";
    EXPECT_EQ(ids(advanceTo(kStart + 200ms)), std::vector<int>{1});
}

TEST_F(TimerWheelTest, FiresInDeadlineOrderAcrossLevels) {
    // Deadlines (ms) on both sides of every level boundary, armed in an order
    // unrelated to their deadlines.
    const std::vector<std::int64_t> ms = {
        68719476735, 1, 4096,       63,         64,   4095,     65,          262143, 262144, 0,
        16777216,    2, 1073741823, 1073741824, 4097, 16777215, 68719476736, 5000,   127,    128};
    std::vector<std::unique_ptr<Timer>> timers;
    for (std::size_t i = 0; i < ms.size(); ++i) {
        timers.push_back(std::make_unique<Timer>(static_cast<int>(i)));
        wheel.arm(*timers.back(), kStart + std::chrono::milliseconds(ms[i]));
    }
    const auto fired = advanceTo(kStart + std::chrono::milliseconds(68719476736));
    ASSERT_EQ(fired.size(), ms.size());
    for (std::size_t i = 1; i < fired.size(); ++i) {
        EXPECT_LE(fired[i - 1].deadline, fired[i].deadline) << "position " << i;
    }
    for (const auto& f : fired) {
        EXPECT_EQ(f.wheelTime, f.deadline) << "fired at its own tick, id " << f.id;
    }
}

// Every level cascades down to level 0 and fires at the exact tick, and
// nextExpiry() leads there in one step (no cancellations: the hint is exact).
TEST_F(TimerWheelTest, CascadesFromEveryLevelAndFiresOnTime) {
    for (unsigned level = 0; level <= TimerWheel::kLevels; ++level) {
        const std::uint64_t ticks = (std::uint64_t{1} << (6 * level)) * 3 + 17;
        const TimePoint deadline = wheel.currentTime() + std::chrono::milliseconds(ticks);
        Timer t(static_cast<int>(level));
        wheel.arm(t, deadline);
        ASSERT_EQ(wheel.nextExpiry(), deadline) << "level " << level;
        EXPECT_TRUE(advanceTo(deadline - 1ms).empty()) << "level " << level;
        ASSERT_EQ(wheel.nextExpiry(), deadline) << "level " << level;
        EXPECT_EQ(ids(advanceTo(deadline)), std::vector<int>{static_cast<int>(level)});
    }
}

// The executor's timer thread: sleep until nextExpiry(), advance(), repeat.
// Without cancellations every step fires the earliest entries, at their tick.
TEST_F(TimerWheelTest, SleepingUntilNextExpiryFiresTheEarliestEntry) {
    std::vector<std::unique_ptr<Timer>> timers;
    std::uint64_t x = 12345;
    for (int i = 0; i < 2000; ++i) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        const auto offset = std::chrono::microseconds((x >> 20) % 20'000'000'000ULL);
        timers.push_back(std::make_unique<Timer>(i));
        wheel.arm(*timers.back(), kStart + offset);
    }
    std::size_t total = 0;
    while (auto next = wheel.nextExpiry()) {
        const auto fired = advanceTo(*next);
        ASSERT_FALSE(fired.empty()) << "a wake-up without work at " << next->time_since_epoch();
        for (const auto& f : fired) {
            EXPECT_EQ(f.wheelTime, *next);
            EXPECT_LT(*next - f.deadline, wheel.resolution());
        }
        total += fired.size();
    }
    EXPECT_EQ(total, timers.size());
}

// Cancelling the earliest entry of a higher-level slot leaves nextExpiry()
// early (never late); the advance() there cascades and it is exact again.
TEST_F(TimerWheelTest, NextExpiryAfterCancelIsEarlyNeverLate) {
    Timer first(1), second(2);
    wheel.arm(first, kStart + 10s);
    wheel.arm(second, kStart + 11s);  // same level-2 slot (4.096 s wide)
    wheel.cancel(first);
    const auto early = wheel.nextExpiry();
    ASSERT_TRUE(early);
    EXPECT_LE(*early, kStart + 11s);
    int steps = 0;
    for (auto next = early; next && *next < kStart + 11s; next = wheel.nextExpiry()) {
        EXPECT_TRUE(advanceTo(*next).empty());
        ASSERT_LE(++steps, 1) << "one spurious wake-up, then exact";
    }
    EXPECT_EQ(wheel.nextExpiry(), kStart + 11s);
    EXPECT_EQ(ids(advanceTo(kStart + 11s)), std::vector<int>{2});
}

TEST_F(TimerWheelTest, RearmLaterMovesTheDeadline) {
    Timer t(1);
    wheel.arm(t, kStart + 5ms);
    wheel.arm(t, kStart + 30s);
    EXPECT_EQ(wheel.size(), 1u) << "re-arm does not duplicate";
    EXPECT_EQ(t.deadline(), kStart + 30s);
    EXPECT_TRUE(advanceTo(kStart + 30s - 1ms).empty());
    EXPECT_EQ(ids(advanceTo(kStart + 30s)), std::vector<int>{1});
}

TEST_F(TimerWheelTest, RearmEarlierMovesTheDeadline) {
    Timer t(1);
    wheel.arm(t, kStart + 30s);
    advanceTo(kStart + 1s);
    wheel.arm(t, kStart + 1s + 3ms);
    EXPECT_EQ(wheel.nextExpiry(), kStart + 1s + 3ms);
    EXPECT_EQ(ids(advanceTo(kStart + 1s + 3ms)), std::vector<int>{1});
    EXPECT_TRUE(advanceTo(kStart + 31s).empty()) << "the old deadline is forgotten";
}

// Ticks 16384..20479 (ms after start) are one level-2 slot, so every
// re-arm below moves the entry within the slot that holds it.
TEST_F(TimerWheelTest, RearmWithinItsSlotKeepsTheExactDeadline) {
    Timer t(1);
    wheel.arm(t, kStart + 20s);
    wheel.arm(t, kStart + 17s);
    wheel.arm(t, kStart + 20400ms);
    wheel.arm(t, kStart + 18s);
    EXPECT_EQ(wheel.size(), 1u);
    EXPECT_EQ(t.deadline(), kStart + 18s);
    ASSERT_TRUE(wheel.nextExpiry().has_value());
    EXPECT_LE(*wheel.nextExpiry(), kStart + 18s) << "would sleep past the deadline";
    EXPECT_TRUE(advanceTo(kStart + 18s - 1ms).empty());
    EXPECT_EQ(ids(advanceTo(kStart + 18s)), std::vector<int>{1});
    EXPECT_TRUE(advanceTo(kStart + 30s).empty()) << "the earlier deadlines are forgotten";
}

TEST_F(TimerWheelTest, CancelPreventsFiring) {
    Timer a(1), b(2);
    wheel.arm(a, kStart + 5ms);
    wheel.arm(b, kStart + 5ms);
    EXPECT_TRUE(wheel.cancel(a));
    EXPECT_FALSE(a.armed());
    EXPECT_FALSE(wheel.cancel(a)) << "not armed any more";
    EXPECT_EQ(wheel.size(), 1u);
    EXPECT_EQ(ids(advanceTo(kStart + 1s)), std::vector<int>{2});
    EXPECT_FALSE(wheel.cancel(b)) << "already fired";
    EXPECT_EQ(wheel.nextExpiry(), std::nullopt);
}

TEST_F(TimerWheelTest, CancelOfLastEntryClearsNextExpiry) {
    Timer t(1);
    const std::vector<std::chrono::milliseconds> delays = {1ms,     100ms,     10s,       1000s,
                                                           100000s, 10000000s, 100000000s};
    for (const auto d : delays) {
        wheel.arm(t, kStart + d);
        EXPECT_TRUE(wheel.nextExpiry());
        EXPECT_TRUE(wheel.cancel(t));
        EXPECT_EQ(wheel.nextExpiry(), std::nullopt) << d.count();
    }
}

TEST_F(TimerWheelTest, CallbackMayRearmItsOwnEntry) {
    Timer t(1);
    wheel.arm(t, kStart + 10ms);
    std::vector<TimePoint> firedAt;
    auto periodic = [&](TimerWheel::Entry& e) {
        firedAt.push_back(wheel.currentTime());
        wheel.arm(e, wheel.currentTime() + 10ms);
    };
    EXPECT_EQ(wheel.advance(kStart + 45ms, periodic), 4u) << "10, 20, 30, 40 in one call";
    EXPECT_EQ(firedAt,
              (std::vector<TimePoint>{kStart + 10ms, kStart + 20ms, kStart + 30ms, kStart + 40ms}));
    EXPECT_TRUE(t.armed());
    EXPECT_EQ(t.deadline(), kStart + 50ms);
    wheel.cancel(t);
}

TEST_F(TimerWheelTest, CallbackRearmingForNowFiresOnTheNextAdvance) {
    Timer t(1);
    wheel.arm(t, kStart + 10ms);
    int calls = 0;
    auto again = [&](TimerWheel::Entry& e) {
        ++calls;
        wheel.arm(e, wheel.currentTime());  // due at once: must not loop here
    };
    EXPECT_EQ(wheel.advance(kStart + 10ms, again), 1u);
    EXPECT_EQ(wheel.nextExpiry(), wheel.currentTime());
    EXPECT_EQ(wheel.advance(kStart + 10ms, again), 1u);
    EXPECT_EQ(calls, 2);
    wheel.cancel(t);
}

TEST_F(TimerWheelTest, CallbackMayCancelOthersDueInTheSameAdvance) {
    Timer a(1), b(2), c(3);
    wheel.arm(a, kStart + 5ms);
    wheel.arm(b, kStart + 5ms);   // same slot as a
    wheel.arm(c, kStart + 70ms);  // another level, also due in this advance
    const auto fired = wheel.advance(kStart + 100ms, [&](TimerWheel::Entry& e) {
        EXPECT_EQ(&e, static_cast<TimerWheel::Entry*>(&a)) << "only a fires";
        EXPECT_TRUE(wheel.cancel(b));
        EXPECT_TRUE(wheel.cancel(c));
        EXPECT_FALSE(wheel.cancel(e)) << "the fired entry is no longer armed";
    });
    EXPECT_EQ(fired, 1u);
    EXPECT_TRUE(wheel.empty());
}

TEST_F(TimerWheelTest, CallbackMayCancelOthersAmongTheDueBatch) {
    advanceTo(kStart + 1s);
    Timer a(1), b(2);
    wheel.arm(a, kStart);  // both due: in the pending batch of the next advance
    wheel.arm(b, kStart);
    const auto fired = wheel.advance(kStart + 1s, [&](TimerWheel::Entry&) { wheel.cancel(b); });
    EXPECT_EQ(fired, 1u);
    EXPECT_FALSE(b.armed());
}

TEST_F(TimerWheelTest, CallbackMayRearmOthersEarlierOrLater) {
    Timer a(1), b(2), c(3);
    wheel.arm(a, kStart + 5ms);
    wheel.arm(b, kStart + 50s);
    wheel.arm(c, kStart + 7ms);
    const auto fired = advanceTo(kStart + 20ms);  // records only
    ASSERT_EQ(ids(fired), (std::vector<int>{1, 3}));
    wheel.arm(a, kStart + 100ms);
    std::vector<int> order;
    wheel.advance(kStart + 200ms, [&](TimerWheel::Entry& e) {
        order.push_back(static_cast<Timer&>(e).id);
        if (&e == static_cast<TimerWheel::Entry*>(&a)) {
            wheel.arm(b, wheel.currentTime() + 50ms);  // earlier: fires in this call
            wheel.arm(c, kStart + 10s);                // new, later
        }
    });
    EXPECT_EQ(order, (std::vector<int>{1, 2}));
    EXPECT_EQ(wheel.nextExpiry(), kStart + 10s);
    wheel.cancel(c);
}

TEST_F(TimerWheelTest, CallbackMayArmNewEntriesThatFireInTheSameAdvance) {
    Timer a(1), b(2);
    wheel.arm(a, kStart + 1ms);
    std::vector<int> order;
    wheel.advance(kStart + 10s, [&](TimerWheel::Entry& e) {
        order.push_back(static_cast<Timer&>(e).id);
        if (&e == static_cast<TimerWheel::Entry*>(&a)) {
            wheel.arm(b, wheel.currentTime() + 5s);  // higher level, still <= now
        }
    });
    EXPECT_EQ(order, (std::vector<int>{1, 2}));
}

TEST_F(TimerWheelTest, CallbackMayDestroyTheFiredEntry) {
    std::vector<std::unique_ptr<Timer>> timers;
    for (int i = 0; i < 100; ++i) {
        timers.push_back(std::make_unique<Timer>(i));
        wheel.arm(*timers.back(), kStart + std::chrono::milliseconds(i % 7));
    }
    const auto fired = wheel.advance(kStart + 1s, [&](TimerWheel::Entry& e) {
        timers[static_cast<std::size_t>(static_cast<Timer&>(e).id)].reset();
    });
    EXPECT_EQ(fired, 100u);
}

TEST_F(TimerWheelTest, ThrowingCallbackLeavesTheRestArmed) {
    advanceTo(kStart + 1s);
    Timer due1(1), due2(2), slot1(3), slot2(4);
    wheel.arm(due1, kStart);  // pending batch
    wheel.arm(due2, kStart);
    wheel.arm(slot1, kStart + 1s + 5ms);  // a level-0 slot
    wheel.arm(slot2, kStart + 1s + 5ms);
    auto throwing = [](TimerWheel::Entry&) { throw std::runtime_error("callback failed"); };
    EXPECT_THROW(wheel.advance(kStart + 2s, throwing), std::runtime_error);
    EXPECT_FALSE(due1.armed());
    EXPECT_TRUE(due2.armed());
    EXPECT_EQ(wheel.size(), 3u);
    EXPECT_THROW(wheel.advance(kStart + 2s, throwing), std::runtime_error);
    EXPECT_FALSE(due2.armed());
    EXPECT_THROW(wheel.advance(kStart + 2s, throwing), std::runtime_error);
    EXPECT_FALSE(slot1.armed()) << "thrown from a level-0 slot: its other entry stays";
    EXPECT_TRUE(slot2.armed());
    EXPECT_EQ(ids(advanceTo(kStart + 2s)), (std::vector<int>{4}));
    EXPECT_TRUE(wheel.empty());
}

TEST_F(TimerWheelTest, FarFutureEntriesNeverFireEarly) {
    // 2.18 years is the span of all levels at 1 ms; these go to overflow.
    constexpr auto kYear = std::chrono::hours(24 * 365);
    Timer near(1), far(2), farther(3);
    wheel.arm(near, kStart + 1h);
    wheel.arm(far, kStart + 5 * kYear + 123ms + 1ns);
    wheel.arm(farther, kStart + 40 * kYear);
    EXPECT_EQ(wheel.nextExpiry(), kStart + 1h);
    EXPECT_EQ(ids(advanceTo(kStart + 1h)), std::vector<int>{1});
    const TimePoint farTick = kStart + 5 * kYear + 124ms;
    // Walk by the owner's loop: only cascades until the far entry's tick.
    int steps = 0;
    while (wheel.nextExpiry() && *wheel.nextExpiry() < farTick) {
        EXPECT_TRUE(advanceTo(*wheel.nextExpiry()).empty());
        ASSERT_LE(++steps, 10);
    }
    EXPECT_EQ(wheel.nextExpiry(), farTick);
    EXPECT_TRUE(advanceTo(farTick - 1ns).empty());
    EXPECT_EQ(ids(advanceTo(farTick)), std::vector<int>{2});
    // One jump far past the last: it fires, at its own tick.
    const auto fired = advanceTo(kStart + 100 * kYear);
    ASSERT_EQ(ids(fired), std::vector<int>{3});
    EXPECT_EQ(fired[0].wheelTime, kStart + 40 * kYear);
}

TEST_F(TimerWheelTest, ForeverEntriesNeverFireButStayCancellable) {
    Timer forever(1), other(2);
    wheel.arm(forever, TimePoint::max());  // now + kForever, saturated
    EXPECT_TRUE(forever.armed());
    EXPECT_EQ(wheel.size(), 1u);
    EXPECT_FALSE(wheel.empty());
    EXPECT_EQ(wheel.nextExpiry(), std::nullopt) << "nothing will ever fire";
    wheel.arm(other, kStart + 1ms);
    EXPECT_EQ(wheel.nextExpiry(), kStart + 1ms);
    EXPECT_EQ(ids(advanceTo(TimePoint::max())), std::vector<int>{2});
    EXPECT_TRUE(forever.armed());
    EXPECT_TRUE(wheel.cancel(forever));
    EXPECT_TRUE(wheel.empty());
}

TEST_F(TimerWheelTest, ForeverEntryCanBeRearmedToAFiniteDeadline) {
    Timer t(1);
    wheel.arm(t, TimePoint::max());
    wheel.arm(t, kStart + 3ms);
    EXPECT_EQ(wheel.size(), 1u);
    EXPECT_EQ(ids(advanceTo(kStart + 3ms)), std::vector<int>{1});
    wheel.arm(t, kStart + 4ms);
    wheel.arm(t, TimePoint::max());
    EXPECT_EQ(wheel.nextExpiry(), std::nullopt);
    wheel.cancel(t);
}

TEST(TimerWheelResolution, SubMillisecondResolutionKeepsItsBound) {
    const auto res = std::chrono::microseconds(250);
    TimerWheel wheel(kStart, res);
    EXPECT_EQ(wheel.resolution(), res);
    Timer t(1);
    wheel.arm(t, kStart + 1ms + 1ns);
    EXPECT_EQ(wheel.nextExpiry(), kStart + 1250us);
    EXPECT_EQ(wheel.advance(kStart + 1249us, [](TimerWheel::Entry&) {}), 0u);
    EXPECT_EQ(wheel.advance(kStart + 1250us, [](TimerWheel::Entry&) {}), 1u);
}

TEST(TimerWheelResolution, NanosecondResolutionCrossesManyBlocksCheaply) {
    // 2^36 ns = 68.7 s per level-5 block; a year-long jump crosses ~460,000
    // blocks, which advance() skips straight to the entry's block.
    TimerWheel wheel(kStart, std::chrono::nanoseconds(1));
    Timer t(1);
    const TimePoint deadline = kStart + std::chrono::hours(24 * 365) + 7ns;
    wheel.arm(t, deadline);
    EXPECT_EQ(wheel.advance(deadline - 1ns, [](TimerWheel::Entry&) {}), 0u);
    EXPECT_EQ(wheel.nextExpiry(), deadline);
    EXPECT_EQ(wheel.advance(deadline, [](TimerWheel::Entry&) {}), 1u);
}

TEST(TimerWheelStart, DefaultStartIsNow) {
    const TimePoint before = Clock::now();
    TimerWheel wheel;
    EXPECT_GE(wheel.start(), before);
    EXPECT_EQ(wheel.currentTime(), wheel.start());
    EXPECT_EQ(wheel.resolution(), std::chrono::milliseconds(1));
}

#ifndef NDEBUG
TEST(TimerWheelDeathTest, DestroyingAnArmedEntryAsserts) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            TimerWheel wheel(kStart);
            auto t = std::make_unique<Timer>(1);
            wheel.arm(*t, kStart + 1s);
            t.reset();
        },
        "destroyed while armed");
}
#endif

// The thread-safety rule: the wheel is not thread safe; its owner serialises
// every call (here with a mutex, as the executor does). Run under TSan.
TEST(TimerWheelThreads, OwnerSerialisesCallsWithAMutex) {
    std::mutex mutex;
    TimerWheel wheel(kStart);
    std::vector<Timer> timers(64);
    constexpr int kRounds = 2000;
    std::thread armer([&] {
        for (int round = 0; round < kRounds; ++round) {
            std::lock_guard lock(mutex);
            auto& t = timers[static_cast<std::size_t>(round) % timers.size()];
            wheel.arm(t, wheel.currentTime() + std::chrono::milliseconds(round % 5));
        }
    });
    std::size_t fired = 0;
    for (int round = 0; round < kRounds; ++round) {
        std::lock_guard lock(mutex);
        fired +=
            wheel.advance(kStart + std::chrono::milliseconds(round), [](TimerWheel::Entry&) {});
    }
    armer.join();
    std::lock_guard lock(mutex);
    for (auto& t : timers) {
        wheel.cancel(t);
    }
    EXPECT_TRUE(wheel.empty());
    EXPECT_LE(fired, static_cast<std::size_t>(kRounds));
}

}  // namespace
}  // namespace kvexec
