// pillowfight/workload.h: what one client asks for: which key, get or set,
// and the value to set, as cbc-pillowfight chooses them.
//
// Keys are `<prefix><20-digit zero-padded index>` over [0, numItems). With
// --sequential, client c of C walks its own slice of the keys in order
// (wrapping), so that every key is written equally often; otherwise keys
// are drawn uniformly. Population stores each key of a client's slice once.
//
// With --subdoc, load ops carry sub-document specs: the paths are the
// fields of the smallest document the run stores (every document has
// them), taken in turn as cbc-pillowfight does; an upsert writes the
// field's own value back, so documents keep their size.
//
// A Workload belongs to one client: use it from one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "pillowfight/json_document.h"
#include "pillowfight/options.h"
#include "subdoc/spec.h"

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
    // --subdoc load ops: a lookup (Get) or mutation (Set) of these specs
    // instead of the whole document.
    std::vector<subdoc::Spec> specs;
};

class Workload {
  public:
    Workload(const Options& options, std::size_t client, std::size_t clients);

    // The next operation of the load phase.
    Op next();
    // The next key to populate, or false when the slice is all stored.
    bool nextPopulation(Op& op);
    // The value bytes of a set of `size` bytes, a JSON document with -J (a
    // view of a buffer this Workload keeps: valid until the next call).
    std::string_view value(std::size_t size);
    const KeySlice& slice() const { return slice_; }

  private:
    std::size_t drawSize();
    std::vector<subdoc::Spec> nextSpecs(OpKind kind);
    std::string_view jsonValue(std::size_t size);
    void randomizeValues(std::vector<JsonField>& fields);

    const Options& options_;
    KeySlice slice_;
    std::uint64_t cursor_ = 0;     // next index within the slice (--sequential)
    std::uint64_t populated_ = 0;  // keys of the slice stored so far
    std::mt19937_64 random_;
    std::string randomBytes_;  // max-size random bytes, refreshed per value
    // -J: the document of the last size asked for (sizes repeat: one when
    // --min-size is --max-size), rebuilt per value with random bodies.
    JsonDocument json_;
    std::size_t jsonSize_ = 0;
    // --subdoc: the smallest document's fields, and the next one to use.
    std::vector<JsonField> subdocFields_;
    std::size_t nextField_ = 0;
};

}  // namespace kvexec::pillowfight
