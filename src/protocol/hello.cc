// protocol/hello.cc: HELLO negotiation.
#include "protocol/hello.h"

#include "protocol/binary_response.h"
#include "protocol/binary_types.h"

namespace kvexec::protocol {
namespace {

// Whether the server grants `feature`, recording what it changes;
// `duplexAsked`: the same HELLO asks for Duplex.
bool grant(Feature feature, bool duplexAsked, HelloFeatures& features) {
    switch (feature) {
        case Feature::Xerror:
            features.xerror = true;
            return true;
        case Feature::Collections:
            features.collections = true;
            return true;
        case Feature::MutationSeqno:
            features.mutationSeqno = true;
            return true;
        case Feature::Json:
            features.json = true;
            return true;
        case Feature::Duplex:
            features.duplex = true;
            return true;
        case Feature::Xattr:  // values may carry an xattr blob (kvexec/engine/xattrs.h)
            features.xattr = true;
            return true;
        case Feature::DedupeNotMyVbucketClustermap:
            features.dedupeNotMyVbucketMaps = true;
            return true;
        case Feature::ClustermapChangeNotification:
            features.clustermapNotification = duplexAsked;
            return duplexAsked;
        // Nothing to change: every socket is TCP_NODELAY, SELECT_BUCKET,
        // alternative request magic, durability and preserve-TTL frame
        // infos are always understood, and the datatype byte is always read.
        case Feature::Datatype:
        case Feature::TcpNoDelay:
        case Feature::SelectBucket:
        case Feature::AltRequestSupport:
        case Feature::SyncReplication:
        case Feature::PreserveTtl:
        case Feature::SubdocCreateAsDeleted:  // AccessDeleted, CreateAsDeleted, ReviveDocument
        case Feature::SubdocReplicaRead:      // the ReplicaRead doc flag of lookups
        case Feature::Vattr:                  // $document, $vbucket, $XTOC
        case Feature::SubdocBinaryXattr:      // the BinaryValue path flag, user flags extras
            return true;
        default:
            return false;
    }
}

// Whether a list of 16-bit big-endian feature codes holds `code`.
bool lists(std::string_view codes, std::uint16_t code) {
    for (std::size_t at = 0; at + 2 <= codes.size(); at += 2) {
        if (readBe16(codes, at) == code) {
            return true;
        }
    }
    return false;
}

}  // namespace

HelloReply negotiateHello(std::string_view requested) {
    HelloReply reply;
    const bool duplexAsked = lists(requested, static_cast<std::uint16_t>(Feature::Duplex));
    for (std::size_t at = 0; at + 2 <= requested.size(); at += 2) {
        const std::uint16_t code = readBe16(requested, at);
        if (!lists(reply.granted, code) &&
            grant(static_cast<Feature>(code), duplexAsked, reply.features)) {
            appendBe16(reply.granted, code);
        }
    }
    return reply;
}

}  // namespace kvexec::protocol
