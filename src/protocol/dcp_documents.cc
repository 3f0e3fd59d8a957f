#include "protocol/dcp_documents.h"

#include "protocol/binary_response.h"
#include "protocol/client_codec.h"
#include "protocol/dcp_wire.h"

namespace kvexec::protocol::dcp {
namespace {

using wire::Part;

// Extras lengths.
constexpr std::size_t kSnapshotMarkerV1Extras = 20;
constexpr std::size_t kSnapshotMarkerV2Extras = 1;  // the version byte
constexpr std::size_t kMutationExtras = 31;
constexpr std::size_t kDeletionV1Extras = 18;
constexpr std::size_t kDeletionV2Extras = 21;
constexpr std::size_t kExpirationExtras = 20;
constexpr std::size_t kPrepareExtras = 31;
constexpr std::size_t kResolutionExtras = 16;  // commit and abort

// Snapshot marker v2 version bytes and their values' lengths.
constexpr std::uint8_t kMarkerVersion2_0 = 0;
constexpr std::uint8_t kMarkerVersion2_2 = 2;
constexpr std::size_t kMarkerValue2_0 = 36;
constexpr std::size_t kMarkerValue2_2 = 52;

constexpr std::uint32_t kKnownSnapshotFlags = kSnapshotMemory | kSnapshotDisk |
                                              kSnapshotCheckpoint | kSnapshotAck |
                                              kSnapshotHistory | kSnapshotMayContainDuplicates;

// A document message's shape: a key, maybe a value, any datatype a
// document can have.
wire::Shape documentShape(Opcode opcode, std::size_t extras) {
    return {.opcode = opcode,
            .extras = extras,
            .key = Part::Required,
            .value = Part::Optional,
            .datatypes = wire::kDocumentDatatypes};
}

// Commit and abort: a key and two seqnos, nothing else.
wire::Shape resolutionShape(Opcode opcode) {
    return {.opcode = opcode,
            .extras = kResolutionExtras,
            .key = Part::Required,
            .casMustBeZero = true};
}

std::optional<std::string> snapshotProblem(const SnapshotMarker& m) {
    if ((m.flags & ~kKnownSnapshotFlags) != 0) {
        return wire::joined({"DCP_SNAPSHOT_MARKER: unknown flags ",
                             std::to_string(m.flags & ~kKnownSnapshotFlags)});
    }
    if (((m.flags & kSnapshotMemory) != 0) == ((m.flags & kSnapshotDisk) != 0)) {
        return std::string("DCP_SNAPSHOT_MARKER: a snapshot is either memory or disk");
    }
    if (m.start > m.end) {
        return std::string("DCP_SNAPSHOT_MARKER: start seqno above the end seqno");
    }
    return std::nullopt;
}

// The v2 value's fields after the version byte; `value` has the format's
// length.
void readMarkerValue(std::string_view value, SnapshotMarker& m) {
    m.start = readBe64(value, 0);
    m.end = readBe64(value, 8);
    m.flags = readBe32(value, 16);
    m.maxVisibleSeqno = readBe64(value, 20);
    m.highCompletedSeqno = readBe64(value, 28);
    if (m.format == SnapshotMarkerFormat::V2_2) {
        m.purgeSeqno = readBe64(value, 36);
        m.highPreparedSeqno = readBe64(value, 44);
    }
}

Decoded<SnapshotMarker> decodeMarkerV2(const Request& r, SnapshotMarker m) {
    const auto version = static_cast<std::uint8_t>(r.extras[0]);
    std::size_t valueLength = 0;
    if (version == kMarkerVersion2_0) {
        m.format = SnapshotMarkerFormat::V2_0;
        valueLength = kMarkerValue2_0;
    } else if (version == kMarkerVersion2_2) {
        m.format = SnapshotMarkerFormat::V2_2;
        valueLength = kMarkerValue2_2;
    } else {
        return Decoded<SnapshotMarker>::refuse(
            wire::joined({"DCP_SNAPSHOT_MARKER: unknown v2 version ", std::to_string(version)}));
    }
    if (r.value.size() != valueLength) {
        return Decoded<SnapshotMarker>::refuse(
            wire::joined({"DCP_SNAPSHOT_MARKER: the value must be ", std::to_string(valueLength),
                          " bytes, not ", std::to_string(r.value.size())}));
    }
    readMarkerValue(r.value, m);
    return Decoded<SnapshotMarker>::ok(m);
}

Decoded<SnapshotMarker> decodeMarkerV1(const Request& r, SnapshotMarker m) {
    if (!r.value.empty()) {
        return Decoded<SnapshotMarker>::refuse("DCP_SNAPSHOT_MARKER: v1 takes no value");
    }
    m.start = readBe64(r.extras, 0);
    m.end = readBe64(r.extras, 8);
    m.flags = readBe32(r.extras, 16);
    return Decoded<SnapshotMarker>::ok(m);
}

// MB-29040 and MB-31141 in Couchbase: a tombstone's value is its xattrs,
// so JSON without the xattr bit cannot describe it.
bool tombstoneDatatype(std::uint8_t datatype) {
    return (datatype & kDatatypeJson) == 0 || (datatype & kDatatypeXattr) != 0;
}

// What a prepare's extras (of the right length) and cas may not be.
std::optional<std::string> prepareProblem(const Request& r) {
    const std::string_view x = r.extras;
    const auto deleted = static_cast<std::uint8_t>(x[29]);
    const auto level = static_cast<std::uint8_t>(x[30]);
    if (readBe64(x, 0) == 0) {
        return std::string("DCP_PREPARE: seqno 0");
    }
    if (r.cas == 0) {
        return std::string("DCP_PREPARE: cas 0");
    }
    if (deleted > 1) {
        return std::string("DCP_PREPARE: the deleted byte is 0 or 1");
    }
    if (level < static_cast<std::uint8_t>(DurabilityLevel::Majority) ||
        level > static_cast<std::uint8_t>(DurabilityLevel::PersistToMajority)) {
        return wire::joined({"DCP_PREPARE: durability level ", std::to_string(level)});
    }
    return std::nullopt;
}

}  // namespace

void encodeSnapshotMarker(std::string& out, const SnapshotMarker& m) {
    const RequestHeader header{Opcode::DcpSnapshotMarker, m.vbucket, m.opaque, 0, 0};
    wire::Fields extras;
    if (m.format == SnapshotMarkerFormat::V1) {
        extras.be64(m.start).be64(m.end).be32(m.flags);
        appendRequest(out, header, {}, extras.view());
        return;
    }
    const bool v22 = m.format == SnapshotMarkerFormat::V2_2;
    extras.u8(v22 ? kMarkerVersion2_2 : kMarkerVersion2_0);
    wire::Fields value;
    value.be64(m.start)
        .be64(m.end)
        .be32(m.flags)
        .be64(m.maxVisibleSeqno)
        .be64(m.highCompletedSeqno);
    if (v22) {
        value.be64(m.purgeSeqno).be64(m.highPreparedSeqno);
    }
    appendRequest(out, header, {}, extras.view(), {}, value.view());
}

Decoded<SnapshotMarker> decodeSnapshotMarker(const Request& r) {
    const std::size_t extras = r.extras.size() == kSnapshotMarkerV2Extras ? kSnapshotMarkerV2Extras
                                                                          : kSnapshotMarkerV1Extras;
    const wire::Shape shape{
        .opcode = Opcode::DcpSnapshotMarker, .extras = extras, .value = Part::Optional};
    if (auto why = wire::checkShape(r, shape)) {
        return Decoded<SnapshotMarker>::refuse(std::move(*why));
    }
    SnapshotMarker m;
    m.vbucket = r.vbucket;
    m.opaque = r.opaque;
    auto decoded = extras == kSnapshotMarkerV1Extras ? decodeMarkerV1(r, m) : decodeMarkerV2(r, m);
    if (decoded) {
        if (auto why = snapshotProblem(*decoded)) {
            return Decoded<SnapshotMarker>::refuse(std::move(*why));
        }
    }
    return decoded;
}

void encodeMutation(std::string& out, const Mutation& m) {
    wire::Fields extras;
    extras.be64(m.bySeqno).be64(m.revSeqno).be32(m.flags).be32(m.expiration).be32(m.lockTime);
    extras.be16(0).u8(m.nru);  // nmeta: no extended metadata
    appendRequest(out, {Opcode::DcpMutation, m.vbucket, m.opaque, m.cas, m.datatype}, {},
                  extras.view(), m.key, m.value);
}

Decoded<Mutation> decodeMutation(const Request& r) {
    if (auto why = wire::checkShape(r, documentShape(Opcode::DcpMutation, kMutationExtras))) {
        return Decoded<Mutation>::refuse(std::move(*why));
    }
    const std::string_view x = r.extras;
    if (readBe64(x, 0) == 0) {
        return Decoded<Mutation>::refuse("DCP_MUTATION: seqno 0");
    }
    if (readBe16(x, 28) != 0) {
        return Decoded<Mutation>::refuse("DCP_MUTATION: extended metadata is not supported");
    }
    return Decoded<Mutation>::ok({.vbucket = r.vbucket,
                                  .opaque = r.opaque,
                                  .cas = r.cas,
                                  .datatype = r.datatype,
                                  .bySeqno = readBe64(x, 0),
                                  .revSeqno = readBe64(x, 8),
                                  .flags = readBe32(x, 16),
                                  .expiration = readBe32(x, 20),
                                  .lockTime = readBe32(x, 24),
                                  .nru = static_cast<std::uint8_t>(x[30]),  // 28-29: nmeta
                                  .key = r.key,
                                  .value = r.value});
}

void encodeDeletion(std::string& out, const Deletion& m) {
    wire::Fields extras;
    extras.be64(m.bySeqno).be64(m.revSeqno);
    if (m.format == DeletionFormat::V1) {
        extras.be16(0);  // nmeta: no extended metadata
    } else {
        extras.be32(m.deleteTime).u8(0);  // unused
    }
    appendRequest(out, {Opcode::DcpDeletion, m.vbucket, m.opaque, m.cas, m.datatype}, {},
                  extras.view(), m.key, m.value);
}

Decoded<Deletion> decodeDeletion(const Request& r) {
    const bool v2 = r.extras.size() == kDeletionV2Extras;
    const auto shape =
        documentShape(Opcode::DcpDeletion, v2 ? kDeletionV2Extras : kDeletionV1Extras);
    if (auto why = wire::checkShape(r, shape)) {
        return Decoded<Deletion>::refuse(std::move(*why));
    }
    const std::string_view x = r.extras;
    if (readBe64(x, 0) == 0) {
        return Decoded<Deletion>::refuse("DCP_DELETION: seqno 0");
    }
    if (!v2 && readBe16(x, 16) != 0) {
        return Decoded<Deletion>::refuse("DCP_DELETION: extended metadata is not supported");
    }
    if (!tombstoneDatatype(r.datatype)) {
        return Decoded<Deletion>::refuse(
            "DCP_DELETION: a tombstone's value is JSON only in xattrs");
    }
    return Decoded<Deletion>::ok({.vbucket = r.vbucket,
                                  .opaque = r.opaque,
                                  .cas = r.cas,
                                  .datatype = r.datatype,
                                  .format = v2 ? DeletionFormat::V2 : DeletionFormat::V1,
                                  .bySeqno = readBe64(x, 0),
                                  .revSeqno = readBe64(x, 8),
                                  .deleteTime = v2 ? readBe32(x, 16) : 0,
                                  .key = r.key,
                                  .value = r.value});
}

void encodeExpiration(std::string& out, const Expiration& m) {
    wire::Fields extras;
    extras.be64(m.bySeqno).be64(m.revSeqno).be32(m.deleteTime);
    appendRequest(out, {Opcode::DcpExpiration, m.vbucket, m.opaque, m.cas, m.datatype}, {},
                  extras.view(), m.key, m.value);
}

Decoded<Expiration> decodeExpiration(const Request& r) {
    if (auto why = wire::checkShape(r, documentShape(Opcode::DcpExpiration, kExpirationExtras))) {
        return Decoded<Expiration>::refuse(std::move(*why));
    }
    const std::string_view x = r.extras;
    if (readBe64(x, 0) == 0) {
        return Decoded<Expiration>::refuse("DCP_EXPIRATION: seqno 0");
    }
    if (!tombstoneDatatype(r.datatype)) {
        return Decoded<Expiration>::refuse(
            "DCP_EXPIRATION: a tombstone's value is JSON only in xattrs");
    }
    return Decoded<Expiration>::ok({.vbucket = r.vbucket,
                                    .opaque = r.opaque,
                                    .cas = r.cas,
                                    .datatype = r.datatype,
                                    .bySeqno = readBe64(x, 0),
                                    .revSeqno = readBe64(x, 8),
                                    .deleteTime = readBe32(x, 16),
                                    .key = r.key,
                                    .value = r.value});
}

void encodePrepare(std::string& out, const Prepare& m) {
    wire::Fields extras;
    extras.be64(m.bySeqno).be64(m.revSeqno).be32(m.flags).be32(m.expiration).be32(m.lockTime);
    extras.u8(m.nru).u8(m.deleted ? 1 : 0).u8(static_cast<std::uint8_t>(m.level));
    appendRequest(out, {Opcode::DcpPrepare, m.vbucket, m.opaque, m.cas, m.datatype}, {},
                  extras.view(), m.key, m.value);
}

Decoded<Prepare> decodePrepare(const Request& r) {
    if (auto why = wire::checkShape(r, documentShape(Opcode::DcpPrepare, kPrepareExtras))) {
        return Decoded<Prepare>::refuse(std::move(*why));
    }
    if (auto why = prepareProblem(r)) {
        return Decoded<Prepare>::refuse(std::move(*why));
    }
    const std::string_view x = r.extras;
    return Decoded<Prepare>::ok({.vbucket = r.vbucket,
                                 .opaque = r.opaque,
                                 .cas = r.cas,
                                 .datatype = r.datatype,
                                 .bySeqno = readBe64(x, 0),
                                 .revSeqno = readBe64(x, 8),
                                 .flags = readBe32(x, 16),
                                 .expiration = readBe32(x, 20),
                                 .lockTime = readBe32(x, 24),
                                 .nru = static_cast<std::uint8_t>(x[28]),
                                 .deleted = x[29] == 1,
                                 .level = static_cast<DurabilityLevel>(x[30]),
                                 .key = r.key,
                                 .value = r.value});
}

void encodeCommit(std::string& out, const Commit& m) {
    wire::Fields extras;
    extras.be64(m.preparedSeqno).be64(m.commitSeqno);
    appendRequest(out, {Opcode::DcpCommit, m.vbucket, m.opaque, 0, 0}, {}, extras.view(), m.key);
}

Decoded<Commit> decodeCommit(const Request& r) {
    if (auto why = wire::checkShape(r, resolutionShape(Opcode::DcpCommit))) {
        return Decoded<Commit>::refuse(std::move(*why));
    }
    const Commit m{r.vbucket, r.opaque, readBe64(r.extras, 0), readBe64(r.extras, 8), r.key};
    if (m.preparedSeqno == 0 || m.commitSeqno <= m.preparedSeqno) {
        return Decoded<Commit>::refuse(
            "DCP_COMMIT: the commit seqno must follow a non-zero prepared seqno");
    }
    return Decoded<Commit>::ok(m);
}

void encodeAbort(std::string& out, const Abort& m) {
    wire::Fields extras;
    extras.be64(m.preparedSeqno).be64(m.abortSeqno);
    appendRequest(out, {Opcode::DcpAbort, m.vbucket, m.opaque, 0, 0}, {}, extras.view(), m.key);
}

Decoded<Abort> decodeAbort(const Request& r) {
    if (auto why = wire::checkShape(r, resolutionShape(Opcode::DcpAbort))) {
        return Decoded<Abort>::refuse(std::move(*why));
    }
    const Abort m{r.vbucket, r.opaque, readBe64(r.extras, 0), readBe64(r.extras, 8), r.key};
    if (m.preparedSeqno == 0 || m.abortSeqno <= m.preparedSeqno) {
        return Decoded<Abort>::refuse(
            "DCP_ABORT: the abort seqno must follow a non-zero prepared seqno");
    }
    return Decoded<Abort>::ok(m);
}

void encodeSeqnoAcknowledged(std::string& out, const SeqnoAcknowledged& m) {
    wire::Fields extras;
    extras.be64(m.preparedSeqno);
    appendRequest(out, {Opcode::DcpSeqnoAcknowledged, m.vbucket, m.opaque, 0, 0}, {},
                  extras.view());
}

Decoded<SeqnoAcknowledged> decodeSeqnoAcknowledged(const Request& r) {
    const wire::Shape shape{
        .opcode = Opcode::DcpSeqnoAcknowledged, .extras = 8, .casMustBeZero = true};
    if (auto why = wire::checkShape(r, shape)) {
        return Decoded<SeqnoAcknowledged>::refuse(std::move(*why));
    }
    return Decoded<SeqnoAcknowledged>::ok({r.vbucket, r.opaque, readBe64(r.extras, 0)});
}

}  // namespace kvexec::protocol::dcp
