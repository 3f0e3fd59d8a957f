#include "pillowfight/workload.h"

#include <algorithm>
#include <cstdio>

namespace kvexec::pillowfight {

std::string keyName(const std::string& prefix, std::uint64_t index) {
    char digits[24];
    std::snprintf(digits, sizeof digits, "%020llu", static_cast<unsigned long long>(index));
    return prefix + digits;
}

KeySlice sliceOf(std::uint64_t numItems, std::size_t client, std::size_t clients) {
    if (numItems < clients) {
        // More clients than keys: clients share the keys round-robin.
        const std::uint64_t key = client % numItems;
        return {key, key + 1};
    }
    const auto begin = numItems * client / clients;
    const auto end = numItems * (client + 1) / clients;
    return {begin, end};
}

Workload::Workload(const Options& options, std::size_t client, std::size_t clients)
    : options_(options),
      slice_(sliceOf(options.numItems, client, clients)),
      random_(0x9e3779b97f4a7c15ULL ^ client) {
    randomBytes_.assign(options.maxSize, '*');
    if (options.randomBody) {
        for (auto& c : randomBytes_) {
            c = static_cast<char>(random_());
        }
    }
}

std::size_t Workload::drawSize() {
    if (options_.minSize == options_.maxSize) {
        return options_.minSize;
    }
    std::uniform_int_distribution<std::size_t> size(options_.minSize, options_.maxSize);
    return size(random_);
}

Op Workload::next() {
    Op op;
    std::uniform_int_distribution<unsigned> percent(0, 99);
    op.kind = percent(random_) < options_.setPercent ? OpKind::Set : OpKind::Get;
    std::uint64_t index = 0;
    if (options_.sequential) {
        index = slice_.begin + cursor_;
        cursor_ = (cursor_ + 1) % slice_.size();
    } else {
        std::uniform_int_distribution<std::uint64_t> any(0, options_.numItems - 1);
        index = any(random_);
    }
    op.key = keyName(options_.keyPrefix, index);
    op.valueSize = op.kind == OpKind::Set ? drawSize() : 0;
    return op;
}

bool Workload::nextPopulation(Op& op) {
    if (populated_ >= slice_.size()) {
        return false;
    }
    op.kind = OpKind::Set;
    op.key = keyName(options_.keyPrefix, slice_.begin + populated_++);
    op.valueSize = drawSize();
    return true;
}

std::string_view Workload::value(std::size_t size) {
    if (!options_.randomBody || randomBytes_.empty()) {
        return std::string_view(randomBytes_).substr(0, size);
    }
    // Fresh random bytes per value, cheaply: rotate by a random offset and
    // overwrite one 8-byte word.
    const std::uint64_t word = random_();
    if (size >= sizeof word) {
        const std::size_t at = word % (size - sizeof word + 1);
        for (std::size_t i = 0; i < sizeof word; ++i) {
            randomBytes_[at + i] = static_cast<char>(word >> (8 * i));
        }
    }
    std::rotate(randomBytes_.begin(),
                randomBytes_.begin() + static_cast<std::ptrdiff_t>(word % randomBytes_.size()),
                randomBytes_.end());
    return std::string_view(randomBytes_).substr(0, size);
}

}  // namespace kvexec::pillowfight
