#include "storage/vbucket_index.h"

namespace kvexec::storage {

void VBucketIndex::apply(const std::string& key, const IndexEntry& entry) {
    auto [it, inserted] = seqnoByKey_.try_emplace(key, entry.seqno);
    if (!inserted) {
        bySeqno_.erase(it->second);
        it->second = entry.seqno;
    }
    bySeqno_[entry.seqno] = entry;
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
}

}  // namespace kvexec::storage
