#include "pillowfight/workload.h"

#include <algorithm>
#include <cstdio>

#include "pillowfight/subdoc_request.h"

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
    if (options.subdoc) {
        subdocFields_ = makeJsonDocument(options.minSize).fields;
        if (options.randomBody) {
            randomizeValues(subdocFields_);
        }
    }
}

void Workload::randomizeValues(std::vector<JsonField>& fields) {
    // Letters: nothing a JSON string would have to escape. The quotes stay.
    for (auto& field : fields) {
        for (std::size_t i = 1; i + 1 < field.value.size(); ++i) {
            field.value[i] = static_cast<char>('a' + random_() % 26);
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
    if (options_.subdoc) {
        op.specs = nextSpecs(op.kind);
    } else if (op.kind == OpKind::Set) {
        op.valueSize = drawSize();
    }
    return op;
}

std::vector<subdoc::Spec> Workload::nextSpecs(OpKind kind) {
    const std::size_t count = std::min(options_.subdocPaths, subdocFields_.size());
    std::vector<subdoc::Spec> specs;
    specs.reserve(count);
    for (std::size_t i = 0; i < count; ++i) {
        const JsonField& field = subdocFields_[nextField_++ % subdocFields_.size()];
        specs.push_back(kind == OpKind::Get ? lookupSpec(field.path)
                                            : upsertSpec(field.path, field.value));
    }
    return specs;
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

std::string_view Workload::jsonValue(std::size_t size) {
    if (jsonSize_ != size || json_.text.empty()) {
        json_ = makeJsonDocument(size);
        jsonSize_ = size;
    }
    if (options_.randomBody) {
        randomizeValues(json_.fields);
        json_.text = jsonText(json_.fields);
    }
    return json_.text;
}

std::string_view Workload::value(std::size_t size) {
    if (options_.jsonValues) {
        return jsonValue(size);
    }
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
