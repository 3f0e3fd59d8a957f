// vbucket_index.cc: a vBucket's in-memory key -> (seqno, offset) index.
#include "storage/vbucket_index.h"

#include <stdexcept>
#include <string>
#include <utility>

namespace kvexec::storage {

VBucketIndex::VBucketIndex(VBucketIndex&& other) noexcept
    : byKey_(std::move(other.byKey_)),
      bySeqno_(std::move(other.bySeqno_)),
      liveBytes_(std::exchange(other.liveBytes_, 0)) {}

VBucketIndex& VBucketIndex::operator=(VBucketIndex&& other) noexcept {
    byKey_ = std::move(other.byKey_);
    bySeqno_ = std::move(other.bySeqno_);
    liveBytes_ = std::exchange(other.liveBytes_, 0);
    return *this;
}

namespace {
// Callers give each document a seqno of its own (saveDocs and the loader
// check it); two keys on one node would corrupt the index silently.
[[noreturn]] void seqnoIndexedTwice(Seqno seqno) {
    throw std::logic_error("kvexec storage: seqno " + std::to_string(seqno) + " indexed twice");
}
}  // namespace

void VBucketIndex::apply(const std::string& key, const IndexEntry& entry) {
    auto [it, inserted] = byKey_.try_emplace(key, bySeqno_.end());
    if (inserted) {
        try {
            const auto before = bySeqno_.size();
            it->second = bySeqno_.emplace_hint(bySeqno_.end(), entry.seqno, entry);
            if (bySeqno_.size() == before) {
                seqnoIndexedTwice(entry.seqno);
            }
        } catch (...) {  // a failed allocation or the refusal: the key was not there
            byKey_.erase(it);
            throw;
        }
        liveBytes_ += entry.size;
        return;
    }
    // Move the key's node to its new seqno: no allocation on the hot path.
    auto node = bySeqno_.extract(it->second);
    liveBytes_ -= node.mapped().size;
    node.key() = entry.seqno;
    node.mapped() = entry;
    it->second = bySeqno_.insert(bySeqno_.end(), std::move(node));
    // A refused node handle keeps its node (the standard says so): the
    // key's version is dropped with it.
    if (!node.empty()) {
        byKey_.erase(it);
        seqnoIndexedTwice(entry.seqno);
    }
    liveBytes_ += entry.size;
}

const IndexEntry* VBucketIndex::find(const std::string& key) const {
    auto it = byKey_.find(key);
    return it == byKey_.end() ? nullptr : &it->second->second;
}

std::vector<IndexEntry> VBucketIndex::fromSeqno(Seqno from) const {
    std::vector<IndexEntry> out;
    for (auto it = bySeqno_.lower_bound(from); it != bySeqno_.end(); ++it) {
        out.push_back(it->second);
    }
    return out;
}

void VBucketIndex::clear() {
    byKey_.clear();
    bySeqno_.clear();
    liveBytes_ = 0;
}

}  // namespace kvexec::storage
