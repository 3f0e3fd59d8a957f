#include "protocol/dcp.h"

namespace kvexec::protocol::dcp {
namespace {

template <typename Message>
std::optional<DecodeError> errorOf(Decoded<Message> decoded) {
    if (decoded) {
        return std::nullopt;
    }
    return std::move(decoded.error);
}

}  // namespace

bool isDcp(Opcode opcode) {
    switch (opcode) {
        case Opcode::DcpOpen:
        case Opcode::DcpAddStream:
        case Opcode::DcpCloseStream:
        case Opcode::DcpStreamReq:
        case Opcode::DcpGetFailoverLog:
        case Opcode::DcpStreamEnd:
        case Opcode::DcpSnapshotMarker:
        case Opcode::DcpMutation:
        case Opcode::DcpDeletion:
        case Opcode::DcpExpiration:
        case Opcode::DcpSetVbucketState:
        case Opcode::DcpNoop:
        case Opcode::DcpBufferAcknowledgement:
        case Opcode::DcpControl:
        case Opcode::DcpPrepare:
        case Opcode::DcpSeqnoAcknowledged:
        case Opcode::DcpCommit:
        case Opcode::DcpAbort:
            return true;
        default:
            return false;
    }
}

std::optional<DecodeError> checkRequest(const Request& r) {
    switch (r.opcode) {
        case Opcode::DcpOpen:
            return errorOf(decodeOpen(r));
        case Opcode::DcpAddStream:
            return errorOf(decodeAddStream(r));
        case Opcode::DcpCloseStream:
            return errorOf(decodeCloseStream(r));
        case Opcode::DcpStreamReq:
            return errorOf(decodeStreamRequest(r));
        case Opcode::DcpGetFailoverLog:
            return errorOf(decodeGetFailoverLog(r));
        case Opcode::DcpStreamEnd:
            return errorOf(decodeStreamEnd(r));
        case Opcode::DcpSnapshotMarker:
            return errorOf(decodeSnapshotMarker(r));
        case Opcode::DcpMutation:
            return errorOf(decodeMutation(r));
        case Opcode::DcpDeletion:
            return errorOf(decodeDeletion(r));
        case Opcode::DcpExpiration:
            return errorOf(decodeExpiration(r));
        case Opcode::DcpSetVbucketState:
            return errorOf(decodeSetVbucketState(r));
        case Opcode::DcpNoop:
            return errorOf(decodeNoop(r));
        case Opcode::DcpBufferAcknowledgement:
            return errorOf(decodeBufferAcknowledgement(r));
        case Opcode::DcpControl:
            return errorOf(decodeControl(r));
        case Opcode::DcpPrepare:
            return errorOf(decodePrepare(r));
        case Opcode::DcpSeqnoAcknowledged:
            return errorOf(decodeSeqnoAcknowledged(r));
        case Opcode::DcpCommit:
            return errorOf(decodeCommit(r));
        case Opcode::DcpAbort:
            return errorOf(decodeAbort(r));
        default:
            return DecodeError{Status::UnknownCommand, "not a DCP opcode"};
    }
}

bool countsForFlowControl(Opcode opcode) {
    switch (opcode) {
        case Opcode::DcpStreamEnd:
        case Opcode::DcpSnapshotMarker:
        case Opcode::DcpMutation:
        case Opcode::DcpDeletion:
        case Opcode::DcpExpiration:
        case Opcode::DcpSetVbucketState:
        case Opcode::DcpPrepare:
        case Opcode::DcpCommit:
        case Opcode::DcpAbort:
            return true;
        default:
            return false;
    }
}

std::size_t flowControlBytes(Opcode opcode, std::size_t packetSize) {
    return countsForFlowControl(opcode) ? packetSize : 0;
}

std::size_t flowControlBytes(const Request& r) {
    const std::size_t packetSize =
        kHeaderSize + r.framingExtras.size() + r.extras.size() + r.key.size() + r.value.size();
    return flowControlBytes(r.opcode, packetSize);
}

}  // namespace kvexec::protocol::dcp
