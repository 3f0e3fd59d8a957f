// The Wheel backend's id index (src/executor/wheel/id_table.h) against
// std::unordered_map as a model: every lookup after random inserts and
// erases, across growth, shrinking, wrap-around and probe runs that
// collide on purpose. Ids are congruent modulo kSpread, as a shard's are.
#include "executor/wheel/id_table.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <set>
#include <unordered_map>
#include <vector>

namespace kvexec::wheel {
namespace {

constexpr std::uint64_t kSpread = 16;

struct Value {
    std::uint64_t id;
};
struct Companion {};

using Table = IdTable<Value, Companion, kSpread>;

class Model {
  public:
    void insert(std::uint64_t id) {
        auto [it, fresh] = values_.try_emplace(id, Value{id});
        ASSERT_TRUE(fresh);
        table_.insert(id, &it->second, &companion_);
    }
    void erase(std::uint64_t id) {
        Value* erased = table_.erase(id);
        auto it = values_.find(id);
        if (it == values_.end()) {
            EXPECT_EQ(erased, nullptr) << id;
            return;
        }
        EXPECT_EQ(erased, &it->second) << id;
        values_.erase(it);
    }
    // Every id the model holds is found with its own value and the
    // companion; ids it does not hold are not found.
    void check(const std::vector<std::uint64_t>& absent = {}) const {
        ASSERT_EQ(table_.size(), values_.size());
        for (const auto& [id, value] : values_) {
            const auto hit = table_.find(id);
            ASSERT_EQ(hit.value, &value) << id;
            ASSERT_EQ(hit.companion, &companion_) << id;
        }
        for (std::uint64_t id : absent) {
            if (!values_.contains(id)) {
                ASSERT_EQ(table_.find(id).value, nullptr) << id;
            }
        }
        std::size_t walked = 0;
        table_.forEach([&](Value& v) {
            ++walked;
            EXPECT_TRUE(values_.contains(v.id));
        });
        EXPECT_EQ(walked, values_.size());
    }
    bool holds(std::uint64_t id) const { return values_.contains(id); }
    std::size_t size() const { return values_.size(); }

  private:
    std::unordered_map<std::uint64_t, Value> values_;  // node-based: stable addresses
    Companion companion_;
    Table table_;
};

TEST(IdTable, FindsWhatWasInsertedAndNotWhatWasErased) {
    Model m;
    for (std::uint64_t id = 3; id < 3 + 16 * 1000; id += kSpread) {
        m.insert(id);
    }
    m.check({1, 2, 4, 3 + 16 * 1000});
    for (std::uint64_t id = 3; id < 3 + 16 * 1000; id += 2 * kSpread) {
        m.erase(id);
    }
    m.check({3, 3 + 2 * kSpread});
    m.erase(3);  // absent: nothing happens
    m.check();
}

// Ids with a power-of-two period share a home slot: long probe runs, whose
// entries must all stay reachable when one in the middle leaves.
TEST(IdTable, CollidingIdsStayReachableThroughErases) {
    Model m;
    std::vector<std::uint64_t> ids;
    for (std::uint64_t k = 0; k < 200; ++k) {
        ids.push_back(5 + kSpread * 1024 * k);  // all home to the same slot
    }
    for (std::uint64_t id : ids) {
        m.insert(id);
    }
    m.check(ids);
    for (std::size_t i = 0; i < ids.size(); i += 3) {
        m.erase(ids[i]);
        m.check(ids);
    }
}

// Random inserts and erases over a key range small enough to wrap around the
// table and large enough to grow and shrink it many times.
TEST(IdTable, MatchesAMapUnderRandomInsertsAndErases) {
    for (std::uint64_t seed = 1; seed <= 5; ++seed) {
        SCOPED_TRACE(seed);
        std::mt19937_64 rng(seed);
        Model m;
        std::vector<std::uint64_t> probes;
        for (int round = 0; round < 40; ++round) {
            // Phases that fill and then drain, so capacity goes both ways.
            const bool filling = round % 4 != 3;
            for (int op = 0; op < 500; ++op) {
                const std::uint64_t id = 7 + kSpread * (rng() % 20000);
                probes.push_back(id);
                if (filling && !m.holds(id)) {
                    m.insert(id);
                } else {
                    m.erase(id);
                }
            }
            m.check(probes);
            probes.clear();
        }
    }
}

TEST(IdTable, StaysCorrectWhenDrainedAndRefilled) {
    auto id = [](std::uint64_t k) { return 7 + kSpread * k; };
    Model m;
    for (std::uint64_t k = 0; k < 50000; ++k) {
        m.insert(id(k));
    }
    for (std::uint64_t k = 0; k < 50000; ++k) {
        if (k % 1000 != 0) {
            m.erase(id(k));
        }
    }
    m.check({id(1), id(999), id(1001)});
    for (std::uint64_t k = 60000; k < 61000; ++k) {
        m.insert(id(k));
    }
    m.check({id(49999), id(61000)});
}

}  // namespace
}  // namespace kvexec::wheel
