// Rollback: cut a vBucket back to its newest commit at or below a seqno.
//
// Under the vBucket's write lock (no save can append meanwhile), the file of
// revision N is replayed up to that commit (vbucket_loader.h), which gives
// the commit's end offset and the index that opening the file cut there
// would give. Bytes [header, end) are copied verbatim after a header of
// revision N+1: records keep their offsets (the header has a fixed size)
// and commit records their batchStart, so that index is the new file's.
// The switch is compaction's (revision_switch.h): sync, rename of
// "<vbid>.kv.<N+1>.rollback" to "<vbid>.kv.<N+1>", directory sync, publish,
// N's cached handle dropped, N unlinked. A compaction running meanwhile
// finds the revision changed when it takes the write lock and gives up.
// Readers that took their handle and entries before the switch read N.
#include <string>
#include <utility>

#include "storage/kv_store_impl.h"
#include "storage/record_format.h"
#include "storage/revision_switch.h"
#include "storage/vbucket_loader.h"

namespace kvexec::storage {

Seqno rollbackVBucket(KVStore::Impl& store, Vbid vbid, Seqno toSeqno) {
    auto& vb = store.vb(vbid);
    // Not compactionMutex: a running compaction is made to give up rather
    // than waited for.
    detail::MutexLock write(vb.writeMutex);
    Revision revision = 0;
    std::string path;
    std::uint64_t committedEnd = 0;
    FileHandlePtr handle;
    {
        detail::ReaderLock state(vb.stateMutex);
        if (!vb.exists) {
            return 0;
        }
        store.requireUsable(vbid, vb);
        if (toSeqno >= vb.highSeqno) {
            return vb.highSeqno;
        }
        revision = vb.revision;
        path = vb.path;
        committedEnd = vb.committedEnd;
        handle = store.cache.acquire(vbid, revision, path);
    }
    // The state cannot change while writeMutex is held: every exclusive
    // holder of stateMutex holds it first.
    auto prefix = replayCommitsUpTo(*store.ops, handle->fd(), path, committedEnd, toSeqno);
    RevisionWriter out(store, vbid, revision + 1, kRollbackSuffix);
    out.copyFrom(*handle, format::kFileHeaderSize, prefix.committedEnd);
    handle.reset();  // before switchRevision drops it from the cache
    switchRevision(store, vbid, vb, revision, path, out, std::move(prefix.index), prefix.highSeqno);
    return prefix.highSeqno;
}

}  // namespace kvexec::storage
