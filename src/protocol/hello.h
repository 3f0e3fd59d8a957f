// protocol/hello.h: HELLO (0x1f) feature negotiation: which of the features
// a client asks for this server grants, and what the connection then does
// differently.
//
// A pure function over the request's value. Safe from any thread.
#pragma once

#include <string>
#include <string_view>

namespace kvexec::protocol {

// What a connection negotiated; a new HELLO replaces all of it.
struct HelloFeatures {
    bool xerror = false;         // error bodies may carry a JSON context
    bool collections = false;    // keys carry a LEB128 collection id prefix
    bool mutationSeqno = false;  // write replies carry (vbucket uuid, seqno)
    bool json = false;           // the JSON datatype bit is echoed on reads
    bool xattr = false;          // it may be sent values carrying xattrs (range scans)
    // Duplex: it takes requests from the server and may reply (0x83).
    bool duplex = false;
    // Each new cluster map is pushed to it (protocol/server_request.h);
    // granted only with Duplex, as kv_engine requires (it refuses the whole
    // HELLO; this server refuses only the feature).
    bool clustermapNotification = false;
    // A NOT_MY_VBUCKET answer leaves out the map when the connection was
    // already sent that revision (pushed, or in an earlier answer).
    bool dedupeNotMyVbucketMaps = false;
};

struct HelloReply {
    HelloFeatures features;
    // The granted features, 16-bit big-endian each, in the order asked and
    // each once: the HELLO response's value.
    std::string granted;
};

// Grants the features this server implements and refuses the others (a
// granted feature is a promise: snappy, out-of-order replies and the like
// are refused). `requested` is the HELLO value;
// an odd trailing byte is ignored (validateShape refuses it first).
HelloReply negotiateHello(std::string_view requested);

}  // namespace kvexec::protocol
