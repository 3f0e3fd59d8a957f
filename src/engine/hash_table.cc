#include "engine/hash_table.h"

#include <cassert>
#include <cstdint>
#include <cstring>
#include <functional>
#include <new>
#include <stdexcept>

namespace kvexec::engine {

// A node is one allocation: this header, the key's bytes right after it
// (so the hash and the key share the node's first cache lines), then the
// StoredValue at the next aligned offset.
struct HashTable::Node {
    Node* next = nullptr;
    std::size_t hash = 0;
    std::uint32_t keySize = 0;

    static std::size_t valueOffset(std::size_t keySize) {
        constexpr auto align = alignof(StoredValue);
        return (sizeof(Node) + keySize + align - 1) / align * align;
    }
    const char* keyData() const { return reinterpret_cast<const char*>(this) + sizeof(Node); }
    std::string_view key() const { return {keyData(), keySize}; }
    StoredValue& value() {
        return *std::launder(
            reinterpret_cast<StoredValue*>(reinterpret_cast<char*>(this) + valueOffset(keySize)));
    }
    const StoredValue& value() const { return const_cast<Node*>(this)->value(); }

    static Node* create(std::string_view key, std::size_t hash) {
        static_assert(alignof(StoredValue) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__);
        assert(key.size() <= UINT32_MAX);  // stored keys are at most a few hundred bytes
        auto* memory =
            static_cast<char*>(::operator new(valueOffset(key.size()) + sizeof(StoredValue)));
        auto* node = new (memory) Node{nullptr, hash, static_cast<std::uint32_t>(key.size())};
        std::memcpy(memory + sizeof(Node), key.data(), key.size());
        new (memory + valueOffset(key.size())) StoredValue{};
        return node;
    }
    static void destroy(Node* node) {
        node->value().~StoredValue();
        node->~Node();
        ::operator delete(node);
    }
};

HashTable::~HashTable() {
    clear();
}

std::size_t HashTable::hashOf(std::string_view key) {
    return std::hash<std::string_view>{}(key);
}

HashTable::Node*& HashTable::headOf(std::size_t hash) {
    return buckets_[hash & (buckets_.size() - 1)];
}

// The stored hash decides most mismatches without reading the key.
HashTable::Node** HashTable::linkTo(std::string_view key, std::size_t hash) {
    Node** link = &headOf(hash);
    while (*link != nullptr && ((*link)->hash != hash || (*link)->key() != key)) {
        link = &(*link)->next;
    }
    return link;
}

StoredValue* HashTable::find(std::string_view key) {
    if (size_ == 0) {
        return nullptr;
    }
    Node* node = *linkTo(key, hashOf(key));
    return node == nullptr ? nullptr : &node->value();
}

const StoredValue* HashTable::find(std::string_view key) const {
    return const_cast<HashTable*>(this)->find(key);
}

const StoredValue& HashTable::at(std::string_view key) const {
    const auto* value = find(key);
    if (value == nullptr) {
        throw std::out_of_range("HashTable::at: no such key");
    }
    return *value;
}

std::pair<StoredValue*, bool> HashTable::findOrInsert(std::string_view key) {
    const auto hash = hashOf(key);
    if (size_ != 0) {
        if (Node* node = *linkTo(key, hash)) {
            return {&node->value(), false};
        }
    }
    growIfFull();
    Node* node = Node::create(key, hash);
    Node*& head = headOf(hash);
    node->next = head;
    head = node;
    ++size_;
    return {&node->value(), true};
}

bool HashTable::erase(std::string_view key) {
    if (size_ == 0) {
        return false;
    }
    Node** link = linkTo(key, hashOf(key));
    Node* node = *link;
    if (node == nullptr) {
        return false;
    }
    *link = node->next;
    Node::destroy(node);
    --size_;
    return true;
}

void HashTable::clear() {
    for (Node*& head : buckets_) {
        while (head != nullptr) {
            Node* next = head->next;
            Node::destroy(head);
            head = next;
        }
    }
    size_ = 0;
}

// Load factor at most one; a rehash relinks the nodes by their stored hash.
void HashTable::growIfFull() {
    constexpr std::size_t kInitialBuckets = 16;
    if (size_ < buckets_.size()) {
        return;
    }
    std::vector<Node*> grown(buckets_.empty() ? kInitialBuckets : 2 * buckets_.size(), nullptr);
    const auto mask = grown.size() - 1;
    for (Node* head : buckets_) {
        while (head != nullptr) {
            Node* next = head->next;
            head->next = grown[head->hash & mask];
            grown[head->hash & mask] = head;
            head = next;
        }
    }
    buckets_ = std::move(grown);
}

HashTable::ConstIterator HashTable::firstFrom(std::size_t bucket) const {
    for (; bucket < buckets_.size(); ++bucket) {
        if (buckets_[bucket] != nullptr) {
            return {this, bucket, buckets_[bucket]};
        }
    }
    return {};
}

HashTable::ConstIterator HashTable::begin() const {
    return size_ == 0 ? end() : firstFrom(0);
}

HashTable::Entry HashTable::ConstIterator::operator*() const {
    return {node_->key(), node_->value()};
}

HashTable::ConstIterator& HashTable::ConstIterator::operator++() {
    *this = node_->next != nullptr ? ConstIterator{table_, bucket_, node_->next}
                                   : table_->firstFrom(bucket_ + 1);
    return *this;
}

}  // namespace kvexec::engine
