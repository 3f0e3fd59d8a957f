// protocol/dcp_documents.h: the DCP messages a stream carries between its
// opening and its end: DCP_SNAPSHOT_MARKER (0x56), then the documents'
// changes in seqno order: DCP_MUTATION (0x57), DCP_DELETION (0x58),
// DCP_EXPIRATION (0x59), and the SyncWrite messages DCP_PREPARE (0x60),
// DCP_COMMIT (0x62), DCP_ABORT (0x63); back from the consumer,
// DCP_SEQNO_ACKNOWLEDGED (0x61) reports the prepares it holds.
//
// Keys are the wire's bytes: on a connection that negotiated collections
// they start with the LEB128 collection id, which the caller splits off
// (the engine's splitCollectionKey). Values are the datatype's bytes
// (possibly snappy, possibly with xattrs) as they travel.
//
// Each message has an encoder appending the whole request packet and a
// decoder over a parsed Request (binary_request.h) that refuses anything
// malformed. Messages hold views into caller-owned bytes: encoders read
// them, decoders point them into the parsed packet. Pure functions; safe
// from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "protocol/binary_request.h"
#include "protocol/dcp_types.h"

namespace kvexec::protocol::dcp {

// Snapshot marker flags.
inline constexpr std::uint32_t kSnapshotMemory = 0x01;      // from the in-memory checkpoints
inline constexpr std::uint32_t kSnapshotDisk = 0x02;        // from disk (a backfill)
inline constexpr std::uint32_t kSnapshotCheckpoint = 0x04;  // starts a checkpoint
inline constexpr std::uint32_t kSnapshotAck = 0x08;         // answer once the snapshot is received
inline constexpr std::uint32_t kSnapshotHistory = 0x10;     // history: not deduplicated
inline constexpr std::uint32_t kSnapshotMayContainDuplicates = 0x20;

// The marker's wire forms: v1 keeps everything in 20 bytes of extras; v2
// has a 1-byte version as extras and the fields in the value: v2.0 adds
// the max visible and high completed seqnos (sync replication), v2.2 the
// purge and high prepared seqnos.
enum class SnapshotMarkerFormat : std::uint8_t { V1, V2_0, V2_2 };

struct SnapshotMarker {
    std::uint16_t vbucket = 0;
    std::uint32_t opaque = 0;
    SnapshotMarkerFormat format = SnapshotMarkerFormat::V1;
    std::uint64_t start = 0;
    std::uint64_t end = 0;
    std::uint32_t flags = 0;
    std::uint64_t maxVisibleSeqno = 0;     // v2.0 and v2.2
    std::uint64_t highCompletedSeqno = 0;  // v2.0 and v2.2; valid on disk snapshots
    std::uint64_t purgeSeqno = 0;          // v2.2
    std::uint64_t highPreparedSeqno = 0;   // v2.2; disk snapshots
    friend bool operator==(const SnapshotMarker&, const SnapshotMarker&) = default;
};

// Fields the format does not carry are not sent.
void encodeSnapshotMarker(std::string& out, const SnapshotMarker& message);
// Refuses unknown flags, a marker that is not exactly one of memory and
// disk, start above end, and unknown v2 versions or value lengths. Fields
// the format does not carry decode as 0.
Decoded<SnapshotMarker> decodeSnapshotMarker(const Request& request);

struct Mutation {
    std::uint16_t vbucket = 0;
    std::uint32_t opaque = 0;
    std::uint64_t cas = 0;
    std::uint8_t datatype = 0;
    std::uint64_t bySeqno = 0;
    std::uint64_t revSeqno = 0;
    std::uint32_t flags = 0;  // the document's client flags
    std::uint32_t expiration = 0;
    std::uint32_t lockTime = 0;
    std::uint8_t nru = 0;  // the producer's eviction hint; consumers may ignore it
    std::string_view key{};
    std::string_view value{};
    friend bool operator==(const Mutation&, const Mutation&) = default;
};

// The extras' nmeta (extended metadata length) is always 0: Couchbase
// dropped extended metadata from DCP and refuses it, and so does the
// decoder.
void encodeMutation(std::string& out, const Mutation& message);
// Refuses seqno 0, a missing or over-long key, unknown datatype bits, and
// extended metadata.
Decoded<Mutation> decodeMutation(const Request& request);

// v1: no delete time; v2 (connections opened with include-delete-times).
enum class DeletionFormat : std::uint8_t { V1, V2 };

struct Deletion {
    std::uint16_t vbucket = 0;
    std::uint32_t opaque = 0;
    std::uint64_t cas = 0;
    std::uint8_t datatype = 0;  // a value, if any, is the tombstone's xattrs
    DeletionFormat format = DeletionFormat::V1;
    std::uint64_t bySeqno = 0;
    std::uint64_t revSeqno = 0;
    std::uint32_t deleteTime = 0;  // v2; 0 for deletes still in memory
    std::string_view key{};
    std::string_view value{};
    friend bool operator==(const Deletion&, const Deletion&) = default;
};

void encodeDeletion(std::string& out, const Deletion& message);
// The extras' length says the format. Refuses seqno 0, a missing key, v1
// extended metadata, and datatypes a tombstone cannot have (JSON without
// xattrs).
Decoded<Deletion> decodeDeletion(const Request& request);

struct Expiration {
    std::uint16_t vbucket = 0;
    std::uint32_t opaque = 0;
    std::uint64_t cas = 0;
    std::uint8_t datatype = 0;
    std::uint64_t bySeqno = 0;
    std::uint64_t revSeqno = 0;
    std::uint32_t deleteTime = 0;
    std::string_view key{};
    std::string_view value{};
    friend bool operator==(const Expiration&, const Expiration&) = default;
};

void encodeExpiration(std::string& out, const Expiration& message);
Decoded<Expiration> decodeExpiration(const Request& request);

// A SyncWrite's first stage: the replica keeps it apart until the
// matching commit or abort.
struct Prepare {
    std::uint16_t vbucket = 0;
    std::uint32_t opaque = 0;
    std::uint64_t cas = 0;
    std::uint8_t datatype = 0;
    std::uint64_t bySeqno = 0;
    std::uint64_t revSeqno = 0;
    std::uint32_t flags = 0;
    std::uint32_t expiration = 0;
    std::uint32_t lockTime = 0;
    std::uint8_t nru = 0;
    bool deleted = false;  // a durable delete
    DurabilityLevel level = DurabilityLevel::Majority;
    std::string_view key{};
    std::string_view value{};
    friend bool operator==(const Prepare&, const Prepare&) = default;
};

void encodePrepare(std::string& out, const Prepare& message);
// Refuses seqno 0, cas 0, a missing key, a deleted byte other than 0/1 and
// a durability level outside 1..3.
Decoded<Prepare> decodePrepare(const Request& request);

struct Commit {
    std::uint16_t vbucket = 0;
    std::uint32_t opaque = 0;
    std::uint64_t preparedSeqno = 0;
    std::uint64_t commitSeqno = 0;
    std::string_view key{};
    friend bool operator==(const Commit&, const Commit&) = default;
};

void encodeCommit(std::string& out, const Commit& message);
// Refuses a prepared seqno of 0 and a commit seqno not above it.
Decoded<Commit> decodeCommit(const Request& request);

struct Abort {
    std::uint16_t vbucket = 0;
    std::uint32_t opaque = 0;
    std::uint64_t preparedSeqno = 0;
    std::uint64_t abortSeqno = 0;
    std::string_view key{};
    friend bool operator==(const Abort&, const Abort&) = default;
};

void encodeAbort(std::string& out, const Abort& message);
// Refuses a prepared seqno of 0 and an abort seqno not above it.
Decoded<Abort> decodeAbort(const Request& request);

// The consumer holds every prepare up to `preparedSeqno` (as the level
// asks: in memory, or persisted for PersistToMajority).
struct SeqnoAcknowledged {
    std::uint16_t vbucket = 0;
    std::uint32_t opaque = 0;
    std::uint64_t preparedSeqno = 0;
    friend bool operator==(const SeqnoAcknowledged&, const SeqnoAcknowledged&) = default;
};

void encodeSeqnoAcknowledged(std::string& out, const SeqnoAcknowledged& message);
Decoded<SeqnoAcknowledged> decodeSeqnoAcknowledged(const Request& request);

}  // namespace kvexec::protocol::dcp
