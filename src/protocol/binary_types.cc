#include "protocol/binary_types.h"

namespace kvexec::protocol {

Opcode loudVariant(Opcode op) {
    switch (op) {
        case Opcode::GetQ:
            return Opcode::Get;
        case Opcode::GetKQ:
            return Opcode::GetK;
        case Opcode::SetQ:
            return Opcode::Set;
        case Opcode::AddQ:
            return Opcode::Add;
        case Opcode::ReplaceQ:
            return Opcode::Replace;
        case Opcode::DeleteQ:
            return Opcode::Delete;
        case Opcode::IncrementQ:
            return Opcode::Increment;
        case Opcode::DecrementQ:
            return Opcode::Decrement;
        case Opcode::QuitQ:
            return Opcode::Quit;
        case Opcode::FlushQ:
            return Opcode::Flush;
        case Opcode::AppendQ:
            return Opcode::Append;
        case Opcode::PrependQ:
            return Opcode::Prepend;
        case Opcode::GatQ:
            return Opcode::Gat;
        case Opcode::GetQMeta:
            return Opcode::GetMeta;
        default:
            return op;
    }
}

bool isSubdoc(Opcode op) {
    const auto code = static_cast<std::uint8_t>(op);
    return code >= static_cast<std::uint8_t>(Opcode::SubdocGet) &&
           code <= static_cast<std::uint8_t>(Opcode::SubdocReplaceBodyWithXattr);
}

bool isSubdocMutation(Opcode op) {
    switch (op) {
        case Opcode::SubdocGet:
        case Opcode::SubdocExists:
        case Opcode::SubdocGetCount:
        case Opcode::SubdocMultiLookup:
            return false;
        default:
            return isSubdoc(op);
    }
}

bool isQuiet(Opcode op) {
    return loudVariant(op) != op;
}

std::string_view opcodeName(Opcode op) {
    switch (op) {
        case Opcode::Get:
            return "GET";
        case Opcode::Set:
            return "SET";
        case Opcode::Add:
            return "ADD";
        case Opcode::Replace:
            return "REPLACE";
        case Opcode::Delete:
            return "DELETE";
        case Opcode::Increment:
            return "INCREMENT";
        case Opcode::Decrement:
            return "DECREMENT";
        case Opcode::Quit:
            return "QUIT";
        case Opcode::Flush:
            return "FLUSH";
        case Opcode::GetQ:
            return "GETQ";
        case Opcode::Noop:
            return "NOOP";
        case Opcode::Version:
            return "VERSION";
        case Opcode::GetK:
            return "GETK";
        case Opcode::GetKQ:
            return "GETKQ";
        case Opcode::Append:
            return "APPEND";
        case Opcode::Prepend:
            return "PREPEND";
        case Opcode::Stat:
            return "STAT";
        case Opcode::SetQ:
            return "SETQ";
        case Opcode::AddQ:
            return "ADDQ";
        case Opcode::ReplaceQ:
            return "REPLACEQ";
        case Opcode::DeleteQ:
            return "DELETEQ";
        case Opcode::IncrementQ:
            return "INCREMENTQ";
        case Opcode::DecrementQ:
            return "DECREMENTQ";
        case Opcode::QuitQ:
            return "QUITQ";
        case Opcode::FlushQ:
            return "FLUSHQ";
        case Opcode::AppendQ:
            return "APPENDQ";
        case Opcode::PrependQ:
            return "PREPENDQ";
        case Opcode::Verbosity:
            return "VERBOSITY";
        case Opcode::Touch:
            return "TOUCH";
        case Opcode::Gat:
            return "GAT";
        case Opcode::GatQ:
            return "GATQ";
        case Opcode::Hello:
            return "HELLO";
        case Opcode::SaslListMechs:
            return "SASL_LIST_MECHS";
        case Opcode::SaslAuth:
            return "SASL_AUTH";
        case Opcode::SaslStep:
            return "SASL_STEP";
        case Opcode::SetVbucket:
            return "SET_VBUCKET";
        case Opcode::GetVbucket:
            return "GET_VBUCKET";
        case Opcode::DcpOpen:
            return "DCP_OPEN";
        case Opcode::DcpAddStream:
            return "DCP_ADD_STREAM";
        case Opcode::DcpCloseStream:
            return "DCP_CLOSE_STREAM";
        case Opcode::DcpStreamReq:
            return "DCP_STREAM_REQ";
        case Opcode::DcpGetFailoverLog:
            return "DCP_GET_FAILOVER_LOG";
        case Opcode::DcpStreamEnd:
            return "DCP_STREAM_END";
        case Opcode::DcpSnapshotMarker:
            return "DCP_SNAPSHOT_MARKER";
        case Opcode::DcpMutation:
            return "DCP_MUTATION";
        case Opcode::DcpDeletion:
            return "DCP_DELETION";
        case Opcode::DcpExpiration:
            return "DCP_EXPIRATION";
        case Opcode::DcpSetVbucketState:
            return "DCP_SET_VBUCKET_STATE";
        case Opcode::DcpNoop:
            return "DCP_NOOP";
        case Opcode::DcpBufferAcknowledgement:
            return "DCP_BUFFER_ACKNOWLEDGEMENT";
        case Opcode::DcpControl:
            return "DCP_CONTROL";
        case Opcode::DcpPrepare:
            return "DCP_PREPARE";
        case Opcode::DcpSeqnoAcknowledged:
            return "DCP_SEQNO_ACKNOWLEDGED";
        case Opcode::DcpCommit:
            return "DCP_COMMIT";
        case Opcode::DcpAbort:
            return "DCP_ABORT";
        case Opcode::SelectBucket:
            return "SELECT_BUCKET";
        case Opcode::ObserveSeqno:
            return "OBSERVE_SEQNO";
        case Opcode::GetLocked:
            return "GET_LOCKED";
        case Opcode::UnlockKey:
            return "UNLOCK_KEY";
        case Opcode::GetMeta:
            return "GET_META";
        case Opcode::GetReplica:
            return "GET_REPLICA";
        case Opcode::GetQMeta:
            return "GETQ_META";
        case Opcode::GetClusterConfig:
            return "GET_CLUSTER_CONFIG";
        case Opcode::SubdocGet:
            return "SUBDOC_GET";
        case Opcode::SubdocExists:
            return "SUBDOC_EXISTS";
        case Opcode::SubdocDictAdd:
            return "SUBDOC_DICT_ADD";
        case Opcode::SubdocDictUpsert:
            return "SUBDOC_DICT_UPSERT";
        case Opcode::SubdocDelete:
            return "SUBDOC_DELETE";
        case Opcode::SubdocReplace:
            return "SUBDOC_REPLACE";
        case Opcode::SubdocArrayPushLast:
            return "SUBDOC_ARRAY_PUSH_LAST";
        case Opcode::SubdocArrayPushFirst:
            return "SUBDOC_ARRAY_PUSH_FIRST";
        case Opcode::SubdocArrayInsert:
            return "SUBDOC_ARRAY_INSERT";
        case Opcode::SubdocArrayAddUnique:
            return "SUBDOC_ARRAY_ADD_UNIQUE";
        case Opcode::SubdocCounter:
            return "SUBDOC_COUNTER";
        case Opcode::SubdocMultiLookup:
            return "SUBDOC_MULTI_LOOKUP";
        case Opcode::SubdocMultiMutation:
            return "SUBDOC_MULTI_MUTATION";
        case Opcode::SubdocGetCount:
            return "SUBDOC_GET_COUNT";
        case Opcode::SubdocReplaceBodyWithXattr:
            return "SUBDOC_REPLACE_BODY_WITH_XATTR";
        case Opcode::RangeScanCreate:
            return "RANGE_SCAN_CREATE";
        case Opcode::RangeScanContinue:
            return "RANGE_SCAN_CONTINUE";
        case Opcode::RangeScanCancel:
            return "RANGE_SCAN_CANCEL";
        case Opcode::GetCollectionsManifest:
            return "GET_COLLECTIONS_MANIFEST";
        case Opcode::GetCollectionId:
            return "GET_COLLECTION_ID";
        case Opcode::GetScopeId:
            return "GET_SCOPE_ID";
        case Opcode::GetErrorMap:
            return "GET_ERROR_MAP";
    }
    return "UNKNOWN";
}

std::string_view statusText(Status status) {
    switch (status) {
        case Status::Success:
            return "Success";
        case Status::KeyNotFound:
            return "Not found";
        case Status::KeyExists:
            return "Data exists for key";
        case Status::ValueTooLarge:
            return "Too large";
        case Status::InvalidArguments:
            return "Invalid arguments";
        case Status::NotStored:
            return "Not stored";
        case Status::NonNumeric:
            return "Non-numeric server-side value for incr or decr";
        case Status::NotMyVbucket:
            return "I'm not responsible for this vbucket";
        case Status::NoBucket:
            return "Not connected to a bucket";
        case Status::Locked:
            return "Requested resource is locked";
        case Status::NotLocked:
            return "Requested resource is not locked";
        case Status::AuthStale:
            return "Authentication stale";
        case Status::AuthError:
            return "Auth failure";
        case Status::AuthContinue:
            return "Auth continue";
        case Status::OutOfRange:
            return "Out of range";
        case Status::Rollback:
            return "Rollback required";
        case Status::NoAccess:
            return "No access";
        case Status::UnknownCommand:
            return "Unknown command";
        case Status::OutOfMemory:
            return "Out of memory";
        case Status::NotSupported:
            return "Not supported";
        case Status::InternalError:
            return "Internal error";
        case Status::Busy:
            return "Server too busy";
        case Status::TemporaryFailure:
            return "Temporary failure";
        case Status::UnknownCollection:
            return "Unknown collection";
        case Status::UnknownScope:
            return "Unknown scope";
        case Status::DurabilityInvalidLevel:
            return "Invalid durability level";
        case Status::DurabilityImpossible:
            return "Durability impossible";
        case Status::SyncWriteInProgress:
            return "Synchronous write in progress";
        case Status::SyncWriteAmbiguous:
            return "Synchronous write ambiguous";
        case Status::SyncWriteReCommitInProgress:
            return "Synchronous write re-commit in progress";
        case Status::RangeScanCancelled:
            return "Range scan cancelled";
        case Status::RangeScanMore:
            return "Range scan has more";
        case Status::RangeScanComplete:
            return "Range scan complete";
        case Status::VbUuidNotEqual:
            return "vBucket uuid not equal";
    }
    return "Unknown error";
}

}  // namespace kvexec::protocol
