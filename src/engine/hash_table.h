// engine/hash_table.h: a vBucket's documents by stored key (committed values
// and tombstones), in a chained hash table of the engine's own.
//
// Why not std::unordered_map: a get is mostly cache misses, and libstdc++'s
// map costs several per lookup: the bucket array, the predecessor node the
// bucket points at, the node, and the key's own heap block. Here the bucket
// points at the first node itself, and a node is one allocation that holds
// the key's hash, the key's bytes and then the value's metadata, so a hit
// reads the bucket array and one node. An absent key whose bucket holds
// other keys is told apart by the stored hash without reading their keys.
//
// The table doubles its bucket array before an insert would leave more keys
// than buckets, and never shrinks it (as unordered_map), so a walk over a
// table that once held many keys visits every bucket. Lookups of an empty
// table hash nothing: most vBuckets are empty or small in tests.
//
// Thread safety: none of its own; its vBucket's mutex guards it
// (vbucket.h). A pointer to a value stays valid until that key is erased
// or the table cleared or destroyed (a rehash moves no node).
#pragma once

#include <cstddef>
#include <iterator>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/stored_value.h"

namespace kvexec::engine {

class HashTable {
    struct Node;

  public:
    // What iteration yields; valid until the table next changes.
    struct Entry {
        std::string_view key;
        const StoredValue& value;
    };

    // Visits every key once, in no particular order. Any insert or erase
    // invalidates it.
    class ConstIterator {
      public:
        using iterator_category = std::input_iterator_tag;  // yields Entry by value
        using value_type = Entry;
        using difference_type = std::ptrdiff_t;
        using reference = Entry;
        using pointer = void;

        ConstIterator() = default;
        Entry operator*() const;
        ConstIterator& operator++();
        ConstIterator operator++(int) {
            auto before = *this;
            ++*this;
            return before;
        }
        bool operator==(const ConstIterator& other) const { return node_ == other.node_; }

      private:
        friend class HashTable;
        ConstIterator(const HashTable* table, std::size_t bucket, const Node* node)
            : table_(table), bucket_(bucket), node_(node) {}
        const HashTable* table_ = nullptr;
        std::size_t bucket_ = 0;
        const Node* node_ = nullptr;
    };

    HashTable() = default;
    HashTable(const HashTable&) = delete;
    HashTable& operator=(const HashTable&) = delete;
    ~HashTable();

    // key's value, or null.
    StoredValue* find(std::string_view key);
    const StoredValue* find(std::string_view key) const;
    // key's value, which must be there: throws std::out_of_range if not.
    const StoredValue& at(std::string_view key) const;
    // key's value, a default StoredValue inserted if key was absent; the
    // bool says whether it was.
    std::pair<StoredValue*, bool> findOrInsert(std::string_view key);
    // Returns whether key was there.
    bool erase(std::string_view key);
    void clear();

    std::size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    std::size_t bucketCount() const { return buckets_.size(); }

    ConstIterator begin() const;
    ConstIterator end() const { return {}; }

  private:
    static std::size_t hashOf(std::string_view key);
    // The bucket at or after `bucket` that holds a node, as an iterator.
    ConstIterator firstFrom(std::size_t bucket) const;
    // Requires a bucket array (size_ != 0 or after growIfFull).
    Node*& headOf(std::size_t hash);
    // The link (a bucket head or a node's next) that holds key's node, or
    // the null link that ends key's chain. Requires a bucket array.
    Node** linkTo(std::string_view key, std::size_t hash);
    void growIfFull();

    std::vector<Node*> buckets_;  // a power of two of them, or none
    std::size_t size_ = 0;
};

}  // namespace kvexec::engine
