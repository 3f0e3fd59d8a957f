#include "storage/document_reader.h"

#include "storage/file_io.h"
#include "storage/record_format.h"

namespace kvexec::storage {

Document checkedDocument(const std::string& path, const IndexEntry& entry, const char* record) {
    const auto header = format::decodeRecordHeader(record);
    if (!header || header->size() != entry.size || header->seqno != entry.seqno ||
        !format::verifyRecord(*header, record)) {
        io::throwCorrupt(path, entry.offset, "document record fails its check");
    }
    return format::decodeDocument(*header, record);
}

DocumentReader::DocumentReader(FileOps& ops, const FileHandle& handle,
                               std::span<const IndexEntry> entries)
    : ops_(ops), handle_(handle), entries_(entries) {}

Document DocumentReader::read(std::size_t i) {
    const auto& entry = entries_[i];
    if (entry.offset < bufferOffset_ || entry.offset + entry.size > bufferOffset_ + size_) {
        fill(i);
    }
    return checkedDocument(handle_.path(), entry, buffer_.get() + (entry.offset - bufferOffset_));
}

void DocumentReader::fill(std::size_t i) {
    const std::uint64_t start = entries_[i].offset;
    std::uint64_t end = start + entries_[i].size;
    for (std::size_t j = i + 1; j < entries_.size(); ++j) {
        const auto& next = entries_[j];
        const std::uint64_t nextEnd = next.offset + next.size;
        if (next.offset < end || next.offset - end > kMaxGapBytes ||
            nextEnd - start > kMaxReadBytes) {
            break;
        }
        end = nextEnd;
    }
    size_ = 0;  // a failed read leaves nothing that looks read
    const auto size = static_cast<std::size_t>(end - start);
    if (size > capacity_) {
        buffer_ = std::make_unique_for_overwrite<char[]>(size);
        capacity_ = size;
    }
    io::readAll(ops_, handle_.fd(), handle_.path(), buffer_.get(), size, start);
    size_ = size;
    bufferOffset_ = start;
}

}  // namespace kvexec::storage
