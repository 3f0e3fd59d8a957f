// storage/vbucket_loader.h: opening one vBucket file: validate the header,
// replay the committed batches into an index, cut off a torn tail; and the
// same replay of a prefix of the file, for rollback.
//
// Recovery rule: records are read in order; a batch counts when its commit
// record is intact and matches it (batchStart, docCount, rising seqnos).
// Reading stops at the first record that is truncated or fails its CRC. If
// an intact commit record exists after that point, the damage is not a torn
// tail but corruption of committed data: StorageError(Corruption) naming the
// file and offset. Otherwise everything after the last intact commit is the
// torn tail of an unacknowledged batch: it is truncated away (and synced)
// and its size reported.
//
// Thread safety: loadVBucketFile needs none (called before the vBucket is
// visible); replayCommitsUpTo only reads, through positioned reads, so it
// may run while others read the same descriptor.
#pragma once

#include <cstdint>
#include <string>

#include "kvexec/storage/file_ops.h"
#include "kvexec/storage/types.h"
#include "storage/vbucket_index.h"

namespace kvexec::storage {

struct LoadedVBucket {
    VBucketIndex index;
    Seqno highSeqno = 0;
    std::uint64_t committedEnd = 0;  // file size after recovery
    std::uint64_t tornBytes = 0;     // cut off the tail (0: clean)
};

LoadedVBucket loadVBucketFile(FileOps& ops, int fd, const std::string& path, Vbid vbid,
                              Revision revision);

// For rollback: replays the committed batches of [0, end) of a file that
// opened cleanly (end: its committed end; the header is not checked again)
// up to the newest commit whose high seqno is <= maxSeqno. The result's
// index, highSeqno and committedEnd are what loadVBucketFile() would give
// for the file cut at committedEnd (tornBytes is 0). Throws
// StorageError(Corruption) if a record before that commit no longer reads
// back intact, StorageError(Io) if a read fails.
LoadedVBucket replayCommitsUpTo(FileOps& ops, int fd, const std::string& path, std::uint64_t end,
                                Seqno maxSeqno);

}  // namespace kvexec::storage
