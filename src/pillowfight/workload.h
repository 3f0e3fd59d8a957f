// pillowfight/workload.h: what one client asks for: which key, get or set,
// and the value to set, as cbc-pillowfight chooses them.
//
// Keys are `<prefix><20-digit zero-padded index>` over [0, numItems). With
// --sequential, client c of C walks its own slice of the keys in order
// (wrapping), so that every key is written equally often; otherwise keys
// are drawn uniformly. Population stores each key of a client's slice once.
//
// A Workload belongs to one client: use it from one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>

#include "pillowfight/options.h"

namespace kvexec::pillowfight {

std::string keyName(const std::string& prefix, std::uint64_t index);

// The half-open range of key indexes client `client` of `clients` owns.
struct KeySlice {
    std::uint64_t begin = 0;
    std::uint64_t end = 0;
    std::uint64_t size() const { return end - begin; }
};
KeySlice sliceOf(std::uint64_t numItems, std::size_t client, std::size_t clients);

enum class OpKind { Set, Get };

struct Op {
    OpKind kind = OpKind::Set;
    std::string key;
    std::size_t valueSize = 0;  // sets only
};

class Workload {
  public:
    Workload(const Options& options, std::size_t client, std::size_t clients);

    // The next operation of the load phase.
    Op next();
    // The next key to populate, or false when the slice is all stored.
    bool nextPopulation(Op& op);
    // The value bytes of a set of `size` bytes (a view of a buffer this
    // Workload keeps: valid until the next call).
    std::string_view value(std::size_t size);
    const KeySlice& slice() const { return slice_; }

  private:
    std::size_t drawSize();

    const Options& options_;
    KeySlice slice_;
    std::uint64_t cursor_ = 0;     // next index within the slice (--sequential)
    std::uint64_t populated_ = 0;  // keys of the slice stored so far
    std::mt19937_64 random_;
    std::string randomBytes_;  // max-size random bytes, refreshed per value
};

}  // namespace kvexec::pillowfight
