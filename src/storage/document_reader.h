// storage/document_reader.h: reads many documents of one vBucket file in
// file order, a few large reads at a time instead of one per document.
//
// Compaction copies every live document of a file and a scan (a stream's
// backfill) reads them all in seqno order, which is file order; one pread
// per document cost a system call each. The reader takes the documents
// that follow the one asked for into the same read, as long as the bytes
// between them (stale versions) stay few, so a file with sparse live
// documents is not read whole.
//
// Thread safety: one reader per thread; the FileHandle is shared read-only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "kvexec/storage/file_cache.h"
#include "kvexec/storage/types.h"
#include "storage/vbucket_index.h"

namespace kvexec::storage {

class DocumentReader {
  public:
    // One read takes at most this many bytes (or one larger document) ...
    static constexpr std::size_t kMaxReadBytes = 256 * 1024;
    // ... and joins the next document only across a gap this small.
    static constexpr std::uint64_t kMaxGapBytes = 16 * 1024;

    // `entries`: the documents to be read, best in file order; they must
    // outlive the reader.
    DocumentReader(FileOps& ops, const FileHandle& handle, std::span<const IndexEntry> entries);

    // The verified document of entries[i]; throws StorageError.
    Document read(std::size_t i);

  private:
    // Reads entries[i] and the ones after it that fit one read. A failed
    // read fails the document asked for, even when the bytes it could not
    // read were another's (a disk that fails a read is not trusted with a
    // retry: the backfill or compaction ends with the error).
    void fill(std::size_t i);

    FileOps& ops_;
    const FileHandle& handle_;
    std::span<const IndexEntry> entries_;
    // Not a std::string: resizing one zero-fills what the read overwrites.
    std::unique_ptr<char[]> buffer_;
    std::size_t capacity_ = 0;
    std::size_t size_ = 0;
    std::uint64_t bufferOffset_ = 0;  // of buffer_[0] in the file
};

// Verifies that `record` (entry.size bytes read at entry.offset of the
// file at `path`) is the record `entry` names and decodes it; throws
// StorageError (corrupt) if not.
Document checkedDocument(const std::string& path, const IndexEntry& entry, const char* record);

}  // namespace kvexec::storage
