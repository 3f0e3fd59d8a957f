// vbucket_index.cc: a vBucket's in-memory key -> (seqno, offset) index.
#include "storage/vbucket_index.h"

#include <cassert>
#include <utility>

namespace kvexec::storage {

void VBucketIndex::apply(const std::string& key, const IndexEntry& entry) {
    auto [it, inserted] = byKey_.try_emplace(key, bySeqno_.end());
    if (inserted) {
        try {
            [[maybe_unused]] const auto before = bySeqno_.size();
            it->second = bySeqno_.emplace_hint(bySeqno_.end(), entry.seqno, entry);
            assert(bySeqno_.size() == before + 1 && "a seqno indexed twice");
        } catch (...) {
            byKey_.erase(it);
            throw;
        }
        liveBytes_ += entry.size;
        return;
    }
    // Move the key's node to its new seqno: no allocation on the hot path.
    auto node = bySeqno_.extract(it->second);
    liveBytes_ -= node.mapped().size;
    liveBytes_ += entry.size;
    node.key() = entry.seqno;
    node.mapped() = entry;
    it->second = bySeqno_.insert(bySeqno_.end(), std::move(node));
    assert(it->second->second.offset == entry.offset && "a seqno indexed twice");
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
