// The vBucket's hash table against std::map as the reference: what a key
// holds after any mix of inserts, overwrites and erases, across growth.
#include "engine/hash_table.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <stdexcept>
#include <string>

namespace kvexec::engine {
namespace {

std::string keyNumber(int n) {
    // Keys share long prefixes, as stored keys do (the collection id first).
    return std::string(1, '\0') + "user:" + std::string(40, 'k') + std::to_string(n);
}

// Values longer than std::string's inline buffer, so that ASan's leak check
// sees a value the table failed to destroy.
std::string valueNumber(int n) {
    return "value of document number " + std::to_string(n);
}

std::map<std::string, std::string> contents(const HashTable& table) {
    std::map<std::string, std::string> out;
    for (const auto& [key, value] : table) {
        EXPECT_TRUE(out.emplace(std::string(key), value.value).second) << "key visited twice";
    }
    return out;
}

TEST(HashTable, EmptyTableFindsNothing) {
    HashTable table;
    EXPECT_EQ(table.find("a"), nullptr);
    EXPECT_FALSE(table.erase("a"));
    EXPECT_TRUE(table.empty());
    EXPECT_EQ(table.begin(), table.end());
}

TEST(HashTable, InsertFindOverwriteErase) {
    HashTable table;
    auto [value, inserted] = table.findOrInsert("key");
    ASSERT_TRUE(inserted);
    value->value = "one";
    value->meta.cas = 7;

    auto [again, insertedAgain] = table.findOrInsert("key");
    EXPECT_FALSE(insertedAgain);
    EXPECT_EQ(again, value) << "a value stays where it is";
    EXPECT_EQ(table.find("key")->value, "one");
    EXPECT_EQ(table.find("key")->meta.cas, 7u);
    EXPECT_EQ(table.find("ke"), nullptr);
    EXPECT_EQ(table.find("keyy"), nullptr);
    EXPECT_EQ(table.size(), 1u);

    EXPECT_TRUE(table.erase("key"));
    EXPECT_FALSE(table.erase("key"));
    EXPECT_EQ(table.find("key"), nullptr);
    EXPECT_TRUE(table.empty());
}

TEST(HashTable, EmptyKeyAndKeysWithZeroBytesAreDistinct) {
    HashTable table;
    table.findOrInsert("").first->value = "empty";
    table.findOrInsert(std::string_view("\0", 1)).first->value = "zero";
    table.findOrInsert(std::string_view("\0\0", 2)).first->value = "two zeros";
    EXPECT_EQ(table.find("")->value, "empty");
    EXPECT_EQ(table.find(std::string_view("\0", 1))->value, "zero");
    EXPECT_EQ(table.find(std::string_view("\0\0", 2))->value, "two zeros");
    EXPECT_EQ(table.size(), 3u);
}

TEST(HashTable, ValuesStayPutAcrossGrowth) {
    HashTable table;
    auto* first = table.findOrInsert(keyNumber(0)).first;
    first->value = "first";
    for (int n = 1; n < 10'000; ++n) {
        table.findOrInsert(keyNumber(n)).first->value = valueNumber(n);
    }
    EXPECT_GE(table.bucketCount(), table.size()) << "at most one key per bucket on average";
    EXPECT_EQ(table.find(keyNumber(0)), first);
    EXPECT_EQ(first->value, "first");
    for (int n = 1; n < 10'000; ++n) {
        const auto* value = table.find(keyNumber(n));
        ASSERT_NE(value, nullptr) << n;
        EXPECT_EQ(value->value, valueNumber(n));
    }
}

TEST(HashTable, MatchesAMapUnderRandomChanges) {
    std::mt19937 random(20261128);
    HashTable table;
    std::map<std::string, std::string> reference;
    for (int step = 0; step < 50'000; ++step) {
        const auto key = keyNumber(static_cast<int>(random() % 3'000));
        if (random() % 3 == 0) {
            EXPECT_EQ(table.erase(key), reference.erase(key) == 1) << key;
        } else {
            const auto value = valueNumber(step);
            const auto [stored, inserted] = table.findOrInsert(key);
            EXPECT_EQ(inserted, reference.find(key) == reference.end()) << key;
            stored->value = value;
            reference[key] = value;
        }
        ASSERT_EQ(table.size(), reference.size());
    }
    EXPECT_EQ(contents(table), reference);
    for (const auto& [key, value] : reference) {
        ASSERT_NE(table.find(key), nullptr) << key;
        EXPECT_EQ(table.find(key)->value, value);
    }
}

TEST(HashTable, ClearEmptiesAndTheTableIsUsableAfter) {
    HashTable table;
    for (int n = 0; n < 100; ++n) {
        table.findOrInsert(keyNumber(n)).first->value = valueNumber(n);
    }
    EXPECT_EQ(table.at(keyNumber(7)).value, valueNumber(7));
    table.clear();
    EXPECT_TRUE(table.empty());
    EXPECT_THROW(table.at(keyNumber(1)), std::out_of_range);
    EXPECT_EQ(table.begin(), table.end());
    EXPECT_EQ(table.find(keyNumber(1)), nullptr);
    table.findOrInsert(keyNumber(1)).first->value = "back";
    EXPECT_EQ(table.find(keyNumber(1))->value, "back");
    EXPECT_EQ(contents(table).size(), 1u);
}

}  // namespace
}  // namespace kvexec::engine
