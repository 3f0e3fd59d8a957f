// Model test of kvexec::TimerWheel: millions of random arm / re-arm / cancel
// / advance operations (and callbacks that arm and cancel), checked against
// a reference std::multimap<deadline, id> after every operation.
//
// The rules checked, from the header's "Time" and "Callback rules":
//   - size() and cancel()'s answer match the reference;
//   - nextExpiry() is never later than roundUp(earliest finite deadline)
//     (or currentTime() if that is past), never before currentTime(), and
//     nullopt iff nothing finite is armed;
//   - advance(now) fires exactly the entries with roundUp(d) <= now, except
//     those its callbacks armed already due (they fire on the next call);
//   - an entry fires at currentTime() == roundUp(d) (so never early and at
//     most resolution - 1ns late), or, if it was due when armed, among the
//     due entries first thing in the next advance();
//   - kForever entries never fire.
//
// Seeded: KVEXEC_WHEEL_MODEL_SEED picks the seed, KVEXEC_WHEEL_MODEL_OPS the
// number of operations (default 4M, 250k under sanitizers). A failure prints
// the round's seed and parameters; re-run with that seed to reproduce.
#include <kvexec/timer_wheel.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace kvexec {
namespace {

using namespace std::chrono_literals;
using Clock = TimerWheel::Clock;
using TimePoint = Clock::time_point;
using Duration = Clock::duration;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

constexpr std::uint64_t kDefaultSeed = 20261122;
constexpr std::uint64_t kOpsPerRound = 100'000;
constexpr auto kYear = std::chrono::hours(24 * 365);

std::uint64_t envOr(const char* name, std::uint64_t fallback) {
    const char* value = std::getenv(name);
    return value != nullptr ? std::strtoull(value, nullptr, 0) : fallback;
}

struct Timer : TimerWheel::Entry {
    int id = 0;
};

// One round: a fresh wheel with its own resolution, start and entry count.
class ModelRound {
  public:
    ModelRound(std::uint64_t seed, std::uint64_t ops) : seed_(seed), ops_(ops), rng_(seed) {
        const Duration resolutions[] = {1ms, 1ms, 1ms, 250us, 3ms + 7ns, 1us};
        resolution_ = resolutions[pick(std::size(resolutions))];
        start_ = TimePoint(std::chrono::hours(1000) + Duration(pick(1'000'000'000)));
        wheel_.emplace(start_, resolution_);
        now_ = start_;
        wheelTime_ = start_;
        const std::size_t ids = 16 + pick(std::size_t{1} << (4 + pick(9)));
        timers_.resize(ids);
        for (std::size_t i = 0; i < ids; ++i) {
            timers_[i] = std::make_unique<Timer>();
            timers_[i]->id = static_cast<int>(i);
        }
        ref_.resize(ids);
    }

    ~ModelRound() {
        for (auto& t : timers_) {
            wheel_->cancel(*t);
        }
    }

    // run: returns "" or the first failure, with what reproduces it.
    std::string run() {
        for (op_ = 0; op_ < ops_ && failure_.empty(); ++op_) {
            step();
            if (failure_.empty()) {
                checkInvariants();
            }
        }
        if (failure_.empty()) {
            for (auto& t : timers_) {
                disarm(*t);
            }
            expect(wheel_->empty(), "wheel not empty after cancelling everything");
        }
        return failure_;
    }

    std::uint64_t fired() const { return fired_; }

  private:
    // Ref: the reference state of one id.
    struct Ref {
        std::optional<std::multimap<TimePoint, int>::iterator> pos;
        bool dueWhenArmed = false;  // roundUp(d) <= currentTime() at arm()
    };

    std::size_t pick(std::size_t n) { return static_cast<std::size_t>(rng_() % n); }
    bool chance(unsigned percent) { return pick(100) < percent; }
    Duration uniform(Duration lo, Duration hi) {
        const auto span = static_cast<std::uint64_t>((hi - lo).count()) + 1;
        return lo + Duration(static_cast<Duration::rep>(rng_() % span));
    }

    void expect(bool ok, const std::string& what) {
        if (!ok && failure_.empty()) {
            std::ostringstream out;
            out << what << " [seed " << seed_ << " (KVEXEC_WHEEL_MODEL_SEED), op " << op_
                << ", resolution " << resolution_.count() << "ns, " << timers_.size()
                << " ids, now = start + " << (now_ - start_).count() << "ns]";
            failure_ = out.str();
        }
    }

    // roundUp: the deadline's tick as a time point (the header's rule).
    TimePoint roundUp(TimePoint d) const {
        if (d <= start_) {
            return start_;
        }
        const auto off = (d - start_).count();
        const auto res = resolution_.count();
        return start_ + Duration((off / res + (off % res != 0 ? 1 : 0)) * res);
    }
    TimePoint gridFloor(TimePoint t) const {
        return start_ + Duration((t - start_).count() / resolution_.count() * resolution_.count());
    }

    // farAllowed: jumps and deadlines of years stop after 40 years of wheel
    // time, far from time_point::max() (292 years).
    bool farAllowed() const { return now_ - start_ < 40 * kYear; }

    TimePoint randomDeadline(TimePoint base) {
        const auto roll = pick(100);
        if (roll < 30)
            return base + uniform(-3ms, 70ms);
        if (roll < 50)
            return base + uniform(0ns, 5s);
        if (roll < 65)
            return base + uniform(0ns, 10min);
        if (roll < 75)
            return base + uniform(0ns, std::chrono::hours(48));
        if (roll < 80)
            return base + uniform(0ns, std::chrono::hours(24 * 60));
        if (roll < 84 && farAllowed())
            return base + uniform(2 * kYear, 8 * kYear);  // overflow
        if (roll < 88)
            return TimePoint::max();        // now + kForever
        return base - uniform(0ns, 100ms);  // already due
    }

    // arm / disarm: the same operation on the wheel and on the reference.
    void arm(Timer& t, TimePoint deadline) {
        Ref& r = ref_[static_cast<std::size_t>(t.id)];
        if (r.pos) {
            ref_map_.erase(*r.pos);
        }
        r.pos = ref_map_.emplace(deadline, t.id);
        r.dueWhenArmed = deadline != TimePoint::max() && roundUp(deadline) <= wheelTime_;
        wheel_->arm(t, deadline);
        expect(t.armed() && t.deadline() == deadline, "arm() did not arm");
    }

    void disarm(Timer& t) {
        Ref& r = ref_[static_cast<std::size_t>(t.id)];
        const bool wasArmed = r.pos.has_value();
        if (r.pos) {
            ref_map_.erase(*r.pos);
            r.pos.reset();
        }
        expect(wheel_->cancel(t) == wasArmed, "cancel() answer differs from the reference");
        expect(!t.armed(), "armed after cancel()");
    }

    Timer& randomTimer() { return *timers_[pick(timers_.size())]; }

    void step() {
        const auto roll = pick(100);
        if (roll < 35) {
            arm(randomTimer(), randomDeadline(now_));
        } else if (roll < 47) {
            disarm(randomTimer());
        } else {
            advance(nextNow());
        }
    }

    // nextNow: the time passed to the next advance().
    TimePoint nextNow() {
        const auto roll = pick(1000);
        if (roll < 450)
            return now_ + uniform(0ns, 2ms);
        if (roll < 700)
            return now_ + uniform(0ns, 100ms);
        if (roll < 820) {  // the owner's loop: sleep until nextExpiry()
            const auto next = wheel_->nextExpiry();
            if (next && (farAllowed() || *next - now_ < 100 * std::chrono::hours(24))) {
                return std::max(*next, now_);
            }
            return now_ + 1s;
        }
        if (roll < 900)
            return now_ + uniform(0ns, 10s);
        if (roll < 960)
            return now_ - uniform(0ns, 50ms);  // backwards: ignored
        if (roll < 998 || !farAllowed())
            return now_ + uniform(0ns, std::chrono::hours(72));
        return now_ + uniform(0ns, 6 * kYear);
    }

    void advance(TimePoint passed) {
        now_ = std::max(now_, passed);  // the wheel ignores time going back
        const TimePoint callStart = wheelTime_;
        const TimePoint grid = gridFloor(now_);
        TimePoint lastTick = callStart;
        deferred_.clear();
        std::size_t calls = 0;
        const std::size_t n = wheel_->advance(passed, [&](TimerWheel::Entry& e) {
            ++calls;
            onFired(static_cast<Timer&>(e), callStart, lastTick);
        });
        fired_ += n;
        expect(n == calls, "advance() returned a count other than its callbacks");
        wheelTime_ = grid;
        expect(wheel_->currentTime() == grid, "currentTime() is not the grid point of now");
        // Completeness: nothing due is left, except what callbacks armed due.
        for (auto it = ref_map_.begin(); it != ref_map_.end() && it->first <= grid; ++it) {
            const bool deferred =
                ref_[static_cast<std::size_t>(it->second)].dueWhenArmed &&
                std::find(deferred_.begin(), deferred_.end(), it->second) != deferred_.end();
            expect(deferred, "a due entry did not fire (late)");
        }
    }

    void onFired(Timer& t, TimePoint callStart, TimePoint& lastTick) {
        Ref& r = ref_[static_cast<std::size_t>(t.id)];
        expect(r.pos.has_value(), "fired an entry the reference says is not armed");
        if (!r.pos) {
            return;
        }
        const TimePoint d = (*r.pos)->first;
        const TimePoint tick = wheel_->currentTime();
        expect(!t.armed(), "armed inside its own callback");
        expect(d != TimePoint::max(), "fired a kForever entry");
        // (now_, not `passed`: a due entry fires even if time went back.)
        expect(d <= now_ && d <= tick, "fired early");
        expect(tick >= lastTick, "fired out of tick order");
        if (r.dueWhenArmed) {
            expect(tick == callStart, "a due entry fired after the wheel moved");
        } else {
            expect(tick == roundUp(d), "fired at a tick other than roundUp(deadline)");
        }
        lastTick = tick;
        ref_map_.erase(*r.pos);
        r.pos.reset();
        wheelTime_ = tick;  // arms from the callback are relative to this tick
        actInCallback(t);
    }

    // actInCallback: what real callbacks do: re-arm themselves (periodic or
    // "again now"), cancel or move others.
    void actInCallback(Timer& fired) {
        const auto roll = pick(100);
        if (roll < 15) {
            armFromCallback(fired, wheelTime_ + uniform(-1ms, 5ms));
        } else if (roll < 22) {
            armFromCallback(fired, randomDeadline(wheelTime_));
        } else if (roll < 30) {
            disarm(randomTimer());
        } else if (roll < 38) {
            armFromCallback(randomTimer(), randomDeadline(wheelTime_));
        }
    }

    void armFromCallback(Timer& t, TimePoint deadline) {
        arm(t, deadline);
        if (ref_[static_cast<std::size_t>(t.id)].dueWhenArmed) {
            deferred_.push_back(t.id);
        }
    }

    void checkInvariants() {
        expect(wheel_->size() == ref_map_.size(), "size() differs from the reference");
        expect(wheel_->empty() == ref_map_.empty(), "empty() differs from the reference");
        const auto next = wheel_->nextExpiry();
        const bool anyFinite = !ref_map_.empty() && ref_map_.begin()->first != TimePoint::max();
        expect(next.has_value() == anyFinite, "nextExpiry() presence differs from the reference");
        if (next && anyFinite) {
            // (An entry armed in the past is due at currentTime(), not before.)
            expect(*next <= std::max(roundUp(ref_map_.begin()->first), wheel_->currentTime()),
                   "nextExpiry() later than the earliest deadline");
            expect(*next >= wheel_->currentTime(), "nextExpiry() before currentTime()");
        }
    }

    const std::uint64_t seed_;
    const std::uint64_t ops_;
    std::mt19937_64 rng_;
    Duration resolution_{};
    TimePoint start_;
    std::optional<TimerWheel> wheel_;
    std::vector<std::unique_ptr<Timer>> timers_;
    std::vector<Ref> ref_;
    std::multimap<TimePoint, int> ref_map_;
    std::vector<int> deferred_;  // ids armed due by callbacks of this advance()
    TimePoint now_;              // the latest time passed to advance()
    TimePoint wheelTime_;        // the wheel's tick as the model computes it
    std::uint64_t op_ = 0;
    std::uint64_t fired_ = 0;
    std::string failure_;
};

TEST(TimerWheelModel, RandomOperationsMatchAMultimapReference) {
    const std::uint64_t seed = envOr("KVEXEC_WHEEL_MODEL_SEED", kDefaultSeed);
    const std::uint64_t ops = envOr("KVEXEC_WHEEL_MODEL_OPS", kSanitized ? 250'000 : 4'000'000);
    std::uint64_t fired = 0;
    for (std::uint64_t done = 0, round = 0; done < ops; done += kOpsPerRound, ++round) {
        ModelRound model(seed + round, std::min(kOpsPerRound, ops - done));
        const std::string failure = model.run();
        ASSERT_EQ(failure, "") << "reproduce: KVEXEC_WHEEL_MODEL_SEED=" << seed + round
                               << " KVEXEC_WHEEL_MODEL_OPS=" << kOpsPerRound;
        fired += model.fired();
    }
    EXPECT_GT(fired, ops / 20) << "the mix should make entries fire, not only move";
    std::cout << "[ model    ] seed " << seed << ", " << ops << " operations, " << fired
              << " entries fired\n";
}

}  // namespace
}  // namespace kvexec
