// protocol/binary_types.h: the numbers of the memcached binary protocol and
// of Couchbase's extensions to it (magics, opcodes, status codes, HELLO
// features, datatype bits).
//
// Plain data; no I/O, no state. Safe from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace kvexec::protocol {

inline constexpr std::size_t kHeaderSize = 24;

// The first byte of every binary packet. The "alternative" magics carry
// framing extras (Couchbase): their header has a one-byte framing extras
// length where the classic header has the high byte of the key length.
enum class Magic : std::uint8_t {
    ClientRequest = 0x80,
    ClientResponse = 0x81,
    AltClientRequest = 0x08,
    AltClientResponse = 0x18,
    // Duplex (docs/Duplex.md in kv_engine): requests the server sends and
    // the client's replies to them.
    ServerRequest = 0x82,
    ServerResponse = 0x83,
};

// Opcodes of server requests (magic 0x82).
enum class ServerOpcode : std::uint8_t {
    ClustermapChangeNotification = 0x01,
};

enum class Opcode : std::uint8_t {
    Get = 0x00,
    Set = 0x01,
    Add = 0x02,
    Replace = 0x03,
    Delete = 0x04,
    Increment = 0x05,
    Decrement = 0x06,
    Quit = 0x07,
    Flush = 0x08,
    GetQ = 0x09,
    Noop = 0x0a,
    Version = 0x0b,
    GetK = 0x0c,
    GetKQ = 0x0d,
    Append = 0x0e,
    Prepend = 0x0f,
    Stat = 0x10,
    SetQ = 0x11,
    AddQ = 0x12,
    ReplaceQ = 0x13,
    DeleteQ = 0x14,
    IncrementQ = 0x15,
    DecrementQ = 0x16,
    QuitQ = 0x17,
    FlushQ = 0x18,
    AppendQ = 0x19,
    PrependQ = 0x1a,
    Verbosity = 0x1b,
    Touch = 0x1c,
    Gat = 0x1d,
    GatQ = 0x1e,
    Hello = 0x1f,
    SaslListMechs = 0x20,
    SaslAuth = 0x21,
    SaslStep = 0x22,
    // A vBucket's state (server/vbucket_commands.cc): set by whoever manages
    // the node, read by anyone. 0x3f is DEL_VBUCKET, not served.
    SetVbucket = 0x3d,
    GetVbucket = 0x3e,
    // DCP (protocol/dcp.h): replication streams between a producer and a
    // consumer.
    DcpOpen = 0x50,
    DcpAddStream = 0x51,
    DcpCloseStream = 0x52,
    DcpStreamReq = 0x53,
    DcpGetFailoverLog = 0x54,
    DcpStreamEnd = 0x55,
    DcpSnapshotMarker = 0x56,
    DcpMutation = 0x57,
    DcpDeletion = 0x58,
    DcpExpiration = 0x59,
    DcpSetVbucketState = 0x5b,
    DcpNoop = 0x5c,
    DcpBufferAcknowledgement = 0x5d,
    DcpControl = 0x5e,
    DcpPrepare = 0x60,
    DcpSeqnoAcknowledged = 0x61,
    DcpCommit = 0x62,
    DcpAbort = 0x63,
    SelectBucket = 0x89,
    ObserveSeqno = 0x91,
    GetLocked = 0x94,
    UnlockKey = 0x95,
    GetReplica = 0x83,  // a replica's copy (the SDKs' getAllReplicas / getAnyReplica)
    GetMeta = 0xa0,
    GetQMeta = 0xa1,
    GetClusterConfig = 0xb5,
    // Sub-document (src/subdoc/spec.h has the spec opcodes' meaning).
    SubdocGet = 0xc5,
    SubdocExists = 0xc6,
    SubdocDictAdd = 0xc7,
    SubdocDictUpsert = 0xc8,
    SubdocDelete = 0xc9,
    SubdocReplace = 0xca,
    SubdocArrayPushLast = 0xcb,
    SubdocArrayPushFirst = 0xcc,
    SubdocArrayInsert = 0xcd,
    SubdocArrayAddUnique = 0xce,
    SubdocCounter = 0xcf,
    SubdocMultiLookup = 0xd0,
    SubdocMultiMutation = 0xd1,
    SubdocGetCount = 0xd2,
    SubdocReplaceBodyWithXattr = 0xd3,
    RangeScanCreate = 0xda,
    RangeScanContinue = 0xdb,
    RangeScanCancel = 0xdc,
    GetCollectionsManifest = 0xba,
    GetCollectionId = 0xbb,
    GetScopeId = 0xbc,
    GetErrorMap = 0xfe,
};

enum class Status : std::uint16_t {
    Success = 0x00,
    KeyNotFound = 0x01,
    KeyExists = 0x02,
    ValueTooLarge = 0x03,
    InvalidArguments = 0x04,
    NotStored = 0x05,
    NonNumeric = 0x06,
    NotMyVbucket = 0x07,
    NoBucket = 0x08,
    Locked = 0x09,
    NotLocked = 0x0e,
    AuthStale = 0x1f,
    AuthError = 0x20,
    AuthContinue = 0x21,
    OutOfRange = 0x22,  // DCP: a seqno out of the range the request allows
    Rollback = 0x23,    // DCP STREAM_REQ: roll back to the seqno in the value
    NoAccess = 0x24,
    UnknownCommand = 0x81,
    OutOfMemory = 0x82,
    NotSupported = 0x83,
    InternalError = 0x84,
    Busy = 0x85,
    TemporaryFailure = 0x86,
    UnknownCollection = 0x88,
    UnknownScope = 0x8c,
    DurabilityInvalidLevel = 0xa0,
    DurabilityImpossible = 0xa1,
    SyncWriteInProgress = 0xa2,
    SyncWriteAmbiguous = 0xa3,
    SyncWriteReCommitInProgress = 0xa4,
    RangeScanCancelled = 0xa5,
    RangeScanMore = 0xa6,      // a continue stopped at a limit: continue again
    RangeScanComplete = 0xa7,  // a continue reached the scan's end: it is closed
    VbUuidNotEqual = 0xa8,
};

// HELLO feature codes (16-bit, big-endian in the HELLO value).
enum class Feature : std::uint16_t {
    Datatype = 0x01,
    Tls = 0x02,
    TcpNoDelay = 0x03,
    MutationSeqno = 0x04,
    TcpDelay = 0x05,
    Xattr = 0x06,
    Xerror = 0x07,
    SelectBucket = 0x08,
    Snappy = 0x0a,
    Json = 0x0b,
    Duplex = 0x0c,
    ClustermapChangeNotification = 0x0d,
    UnorderedExecution = 0x0e,
    Tracing = 0x0f,
    AltRequestSupport = 0x10,
    SyncReplication = 0x11,
    Collections = 0x12,
    PreserveTtl = 0x14,
    Vattr = 0x15,                         // virtual xattrs ($document, $vbucket, $XTOC)
    SubdocCreateAsDeleted = 0x17,         // sub-document's tombstone doc flags
    SubdocReplicaRead = 0x1c,             // sub-document lookups of a replica's copy
    DedupeNotMyVbucketClustermap = 0x1e,  // NOT_MY_VBUCKET without a map the client has
    SubdocBinaryXattr = 0x21,             // binary xattr values; user flags in mutations
};

// Datatype bits of the header.
inline constexpr std::uint8_t kDatatypeJson = 0x01;
inline constexpr std::uint8_t kDatatypeSnappy = 0x02;
inline constexpr std::uint8_t kDatatypeXattr = 0x04;

// Keys longer than memcached's 250 bytes are refused; a collection-aware
// client prefixes up to 5 bytes of LEB128 collection id.
inline constexpr std::size_t kMaxBinaryKeyLength = 250 + 5;

// Frame info ids of the request framing extras.
enum class FrameInfoId : std::uint8_t {
    Reorder = 0,
    DurabilityRequirement = 1,
    DcpStreamId = 2,
    OpenTracingContext = 3,
    ImpersonateUser = 4,
    PreserveTtl = 5,
};

// Durability levels of frame info 1 (0 means "none" and is not valid there).
enum class DurabilityLevel : std::uint8_t {
    Majority = 1,
    MajorityAndPersistOnMaster = 2,
    PersistToMajority = 3,
};

// Sub-document opcodes: lookups (get, exists, get-count, multi-lookup) and
// the rest, mutations.
bool isSubdoc(Opcode op);
bool isSubdocMutation(Opcode op);

// Quiet opcodes answer only on error (get variants: only on hit).
bool isQuiet(Opcode op);
// The loud opcode a quiet one is a variant of (op itself if it is loud).
Opcode loudVariant(Opcode op);
// A printable name, for errors and stats ("SET", "GETKQ", ...).
std::string_view opcodeName(Opcode op);
// The message Couchbase's error map gives a status.
std::string_view statusText(Status status);

}  // namespace kvexec::protocol
