// kvexec/engine/change_stream.h: a stream of a vBucket's mutations after a
// seqno (the DCP role: observe, and later replication, stand on it).
//
// Bucket::openStream(request, onItem) returns a ChangeStream. It delivers
// every mutation of the vBucket with a seqno > request.startSeqno, in
// increasing seqno order, each key at least in its latest version: older
// versions of a key that were already persisted when the stream read the
// disk may be skipped (deduplicated), as in DCP. A stream that starts
// behind what memory holds is first backfilled from disk (KVStore::scan on
// an AuxIO task), then follows memory. A SyncWrite appears once it commits,
// as a mutation with its commit's seqno; its prepare (and an abort) are
// not shown, so seqnos may skip.
//
// A replication stream (Bucket::openReplicationStream) delivers
// StreamEvents instead: the same changes plus prepares, commits and aborts
// as such, each batch after a Snapshot event.
//
// Thread safety and where things run:
// - onItem (onEvent) runs on a NonIO worker (the stream's task), never on two
//   threads at once for one stream, never under an engine lock; it may call
//   the bucket (including close()). It must not block.
// - close() may be called from any thread, also from inside onItem; after
//   it returns onItem is not called again, except that a call already
//   running on another thread finishes.
// - The bucket must outlive its streams' use; destroying the bucket closes
//   them.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

#include "kvexec/engine/item.h"

namespace kvexec::engine {

struct StreamRequest {
    Vbid vbid = 0;
    Seqno startSeqno = 0;  // deliver seqnos > startSeqno
};

using StreamItemCallback = std::function<void(const Item&)>;

// What a replication stream carries: DCP's messages for one vBucket.
//   Snapshot  the events up to the next Snapshot have seqnos in
//             [snapStart, snapEnd]; fromDisk: read from disk, where a
//             key's older versions (and completed prepares) are left out,
//             and tombstones below purgeSeqno may be gone too;
//             maxVisibleSeqno: its last committed change (0: none).
//   Mutation, Deletion  a committed change (item: the document).
//   Expiration  a deletion that the document's expiry made (a read that
//             found it expired, or the expiry pager), told apart so that
//             DCP can send DCP_EXPIRATION; a replica applies it as the
//             deletion it is.
//   Prepare   a SyncWrite's prepare (item: the document it would write,
//             meta.seqno the prepare's seqno; level).
//   Commit    item: the committed document (meta.seqno the commit's own
//             seqno); preparedSeqno: its prepare's. From disk a commit
//             is a Mutation or Deletion.
//   Abort     item: the key (meta.seqno the abort's own seqno);
//             preparedSeqno: its prepare's (0 when read from disk).
//   BackfillFailed  the stream could not read its backfill from disk
//             and has closed itself: nothing follows (item: only the
//             vbid). Its owner may open another (DCP: STREAM_END). A
//             stream of openStream stops without it.
//   StateChanged  the vBucket stopped being active here: the stream
//             delivered every change made while it was, and has closed
//             itself; nothing follows (item: only the vbid). What the
//             vBucket does after (a demoted active ends its SyncWrites
//             with aborts of its own) is not the consumer's history.
//             Its owner may ask again (DCP: STREAM_END StateChanged), and
//             is refused until the vBucket is active here again.
// Bucket::applyReplicated takes the same events on a replica.
enum class StreamEventKind : std::uint8_t {
    Snapshot,
    Mutation,
    Deletion,
    Expiration,
    Prepare,
    Commit,
    Abort,
    BackfillFailed,
    StateChanged
};
std::string_view to_string(StreamEventKind kind);

struct StreamEvent {
    StreamEventKind kind = StreamEventKind::Mutation;
    Item item;
    Seqno preparedSeqno = 0;
    DurabilityLevel level = DurabilityLevel::None;
    Seqno snapStart = 0, snapEnd = 0;
    bool fromDisk = false;
    Seqno maxVisibleSeqno = 0, purgeSeqno = 0;  // a snapshot's
};

using StreamEventCallback = std::function<void(const StreamEvent&)>;

class ChangeStream {
  public:
    virtual ~ChangeStream() = default;
    virtual Vbid vbid() const = 0;
    // The highest seqno delivered to onItem so far.
    virtual Seqno lastDelivered() const = 0;
    // Items queued for delivery and not yet delivered.
    virtual std::size_t backlog() const = 0;
    virtual void close() = 0;
};

}  // namespace kvexec::engine
