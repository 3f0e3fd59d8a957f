// vbucket_index.cc: a vBucket's in-memory key -> (seqno, offset) index.
#include "storage/vbucket_index.h"

#include <utility>

namespace kvexec::storage {

void VBucketIndex::apply(const std::string& key, const IndexEntry& entry) {
    auto [it, inserted] = seqnoByKey_.try_emplace(key, entry.seqno);
    liveBytes_ += entry.size;
    if (inserted) {
        bySeqno_[entry.seqno] = entry;
        return;
    }
    // Move the key's node to its new seqno: no allocation on the hot path.
    auto node = bySeqno_.extract(it->second);
    liveBytes_ -= node.mapped().size;
    node.key() = entry.seqno;
    node.mapped() = entry;
    bySeqno_.insert(std::move(node));
    it->second = entry.seqno;
}

const IndexEntry* VBucketIndex::find(const std::string& key) const {
    auto it = seqnoByKey_.find(key);
    return it == seqnoByKey_.end() ? nullptr : &bySeqno_.at(it->second);
}

std::vector<IndexEntry> VBucketIndex::fromSeqno(Seqno from) const {
    std::vector<IndexEntry> out;
    for (auto it = bySeqno_.lower_bound(from); it != bySeqno_.end(); ++it) {
        out.push_back(it->second);
    }
    return out;
}

void VBucketIndex::clear() {
    seqnoByKey_.clear();
    bySeqno_.clear();
    liveBytes_ = 0;
}

}  // namespace kvexec::storage
