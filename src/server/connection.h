// connection.h: one client connection: reads requests of either protocol
// (told apart by the first byte, as memcached does), runs them against the
// engine, writes the responses in request order.
//
// Thread safety: a Connection lives on its front end's loop thread and is
// used there only. Engine callbacks may run on a pool thread: they never
// touch the connection there, they post the completion to the loop
// (FrontEnd::post); a callback that runs inline, inside the engine call on
// the loop thread, is handled at once. One engine operation at a time is
// outstanding per connection (responses go out in order): while one is
// pending, reading stops; the completion resumes it. The request being
// served keeps its bytes at the front of the input buffer until its
// completion has run (they are drained then, not when the handler returns),
// so a completion may read every field of its Request or TextCommand, whose
// views point there. A connection closed while an operation is pending
// stays alive (the callback holds it) until the operation completes, and
// writes nothing.
//
// Bad input and load: requests are framed before they are parsed
// (protocol/framing.h), so one refused from its header or line is never
// buffered; a framing error is answered (binary status, or a text error
// line) and the connection closed. A connection that sends or reads nothing
// for the idle timeout, or takes longer than that to send one request, is
// dropped; one that owes more responses than the output high water mark is
// not read until it drains them.
#pragma once

#include <event2/bufferevent.h>
#include <event2/event.h>
#include <openssl/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "protocol/auth/sasl_server.h"
#include "protocol/binary_request.h"
#include "protocol/framing.h"
#include "protocol/text_request.h"
#include "server/connection_info.h"
#include "server/request_counters.h"
#include "server/server_context.h"

namespace kvexec::dcp {
class DcpProducer;
}  // namespace kvexec::dcp

namespace kvexec::subdoc {
struct DecodedRequest;
struct MutationOutcome;
}  // namespace kvexec::subdoc

namespace kvexec::server {

class FrontEnd;

class Connection : public std::enable_shared_from_this<Connection> {
  public:
    // `tls`: the connection's TLS session (it takes it), the socket still
    // to complete its handshake; null: plain.
    Connection(FrontEnd& frontEnd, ServerContext& context, evutil_socket_t fd, SSL* tls = nullptr);
    ~Connection();

    void start();
    // Graceful stop: reads no more requests, lets a pending engine
    // operation complete, sends what is owed, then closes.
    void finishAndClose();
    // Closes the socket now (pending output is dropped) and leaves the front
    // end's set. Safe to call twice.
    void close();
    // What "stats conns" says about this connection.
    ConnectionInfo describe() const;
    // Sends `topology`, `served`'s, as a ClustermapChangeNotification if
    // this connection asked for pushes in HELLO, has selected that bucket
    // and has not been sent this revision or a later one. Loop thread
    // (FrontEnd::pushClusterMap).
    void pushClusterMap(const ServedBucket& served, const ClusterTopology& topology);

  private:
    engine::Bucket& bucket() const { return *bucket_->bucket; }
    // Plain, reading goes around the bufferevent, which only writes: its
    // reads cost an ioctl(FIONREAD) each, to size the read (a third more
    // system calls per request than read and send alone). Over TLS the
    // bufferevent (bufferevent_openssl) reads and writes: onTlsReadable
    // moves what it decrypted into input_.
    static void onReadable(evutil_socket_t fd, short what, void* self);
    static void onTlsReadable(bufferevent*, void* self);
    // Appends what the socket holds to input_; false once the connection
    // closed (end of stream or an error).
    bool readSocket(evutil_socket_t fd);
    // Reading on or off (a pending operation, the output over its high
    // water mark, closing). On, it restarts the idle clock.
    void resumeReading();
    void pauseReading();
    // Frees the read event, the bufferevent (closing the socket, after a
    // TLS close_notify), the input and the timers; each is null after.
    // close() and the destructor.
    void freeIo();
    void sendCloseNotify();
    // DCP: a replication connection is quiet while nothing changes, and
    // the idle timeout must not drop it.
    void stopIdleTimeouts();
    static void onWrite(bufferevent*, void* self);
    // Reading paused for the output's high water mark resumes, if no
    // operation is pending and the output is below its low water mark.
    // True if it did.
    bool resumeIfDrained();
    static void onEvent(bufferevent*, short what, void* self);
    // A request begun but not finished within the idle timeout (bytes
    // trickling in keep the socket's own idle timeout from firing).
    static void onRequestTimeout(evutil_socket_t, short, void* self);

    void process();
    // Each returns false when processing must stop (no complete request
    // buffered, an operation pending, or the connection closing).
    bool processNext();
    bool handleBinary(std::string_view bytes);
    bool handleText(std::string_view bytes);
    // Drops the next `length` input bytes, those not yet received as they
    // arrive (the body of a request refused from its header).
    void discardInput(std::size_t length);
    // A request was handled: drops its bytes (`bytes`, at the front of the
    // input) and then `discard` more as they arrive (a refused data block).
    // While its engine operation is pending it holds them instead, until
    // the completion has run (releaseHeldRequest).
    void releaseRequest(std::string_view bytes, std::size_t discard = 0);
    // After a completion: drops the held request, unless its handler
    // started another operation that is still pending.
    void releaseHeldRequest();
    // The held request's bytes are still where its views point, unchanged
    // (debug builds check this before a completion runs).
    bool heldRequestIntact();
    bool outputFull() const;
    // Starts, restarts (a request was served) or stops the request timer.
    void watchPartialRequest(bool served);
    // The first `length` buffered bytes, made contiguous.
    std::string_view pullUp(std::size_t length);
    void flushOutput();
    std::size_t sendNow();
    void closeAfterWrite();

    // Engine completions: `handler` runs on the loop thread with the
    // result, inline if the engine answered inside the call.
    template <class Result>
    std::function<void(const Result&)> completion(std::function<void(const Result&)> handler);
    // Runs an engine call that was given a completion() (or, for a get, a
    // handler that relies on reads completing inline); marks inline
    // completions as such and stops reading if the operation is pending.
    template <class Call>
    void callEngine(Call&& call) {
        inEngineCall_ = true;
        call();
        inEngineCall_ = false;
        if (pending_) {
            pauseReading();  // resumed by the completion
        }
    }
    void beginOperation();
    void finishOperation();

    // Binary commands (binary_commands.cc).
    void executeBinary(const protocol::Request& request);
    void respond(const protocol::Request& request, protocol::Status status,
                 std::string_view extras = {}, std::string_view key = {},
                 std::string_view value = {}, std::uint64_t cas = 0, std::uint8_t datatype = 0);
    void respondError(const protocol::Request& request, protocol::Status status,
                      std::string_view context);
    void respondEngine(const protocol::Request& request, engine::Status status);
    // The key (without its collection prefix, in its collection) and the
    // vBucket to serve it on. Answers the request itself and returns false
    // when it cannot be served.
    bool resolveKey(const protocol::Request& request, engine::DocKey& key, engine::Vbid& vbid);
    // UNKNOWN_COLLECTION / UNKNOWN_SCOPE with the manifest uid the answer
    // was found in (Couchbase's error body).
    void respondUnknown(const protocol::Request& request, protocol::Status status);
    std::string mutationExtras(const engine::MutationToken& token) const;
    // The datatype a read answers with: the JSON bit, if the client
    // negotiated it.
    std::uint8_t clientDatatype(const engine::Item& item) const;
    bool mayRunUnauthenticated(protocol::Opcode opcode) const;
    // Whether this connection's user may use `served` (every user may
    // when the server asks for no authentication).
    bool mayUse(const ServedBucket& served) const;
    // Whether `opcode` works on the selected bucket, which the user must
    // then be allowed to use.
    bool usesBucket(protocol::Opcode opcode) const;
    void binaryGet(const protocol::Request& request);
    void answerGet(const protocol::Request& request, const engine::GetResult& result);
    void binaryGetReplica(const protocol::Request& request);
    void binaryStore(const protocol::Request& request);
    void binaryDelete(const protocol::Request& request);
    void binaryArithmetic(const protocol::Request& request);
    void binaryTouch(const protocol::Request& request);
    void binaryFlush(const protocol::Request& request);
    void binaryStat(const protocol::Request& request);
    void binaryHello(const protocol::Request& request);
    void binarySasl(const protocol::Request& request);
    void binarySelectBucket(const protocol::Request& request);
    void binaryGetMeta(const protocol::Request& request);
    void binaryObserveSeqno(const protocol::Request& request);
    void binaryGetLocked(const protocol::Request& request);
    void binaryUnlock(const protocol::Request& request);
    // vBucket states (vbucket_commands.cc).
    void binarySetVbucket(const protocol::Request& request);
    void binaryGetVbucket(const protocol::Request& request);
    // The request's vBucket exists; answers EINVAL itself if not.
    bool knownVbucket(const protocol::Request& request);
    // Sub-document commands (binary_subdoc.cc).
    struct SubdocWrite;
    void binarySubdoc(const protocol::Request& request);
    void subdocLookup(const protocol::Request& request, engine::Vbid vbid, engine::DocKey key,
                      const subdoc::DecodedRequest& decoded);
    void subdocMutate(const protocol::Request& request, const std::shared_ptr<SubdocWrite>& write);
    bool storeSubdoc(const protocol::Request& request, const std::shared_ptr<SubdocWrite>& write,
                     const engine::Item& read, std::shared_ptr<subdoc::MutationOutcome> outcome);
    void respondSubdocFailure(const protocol::Request& request,
                              const subdoc::MutationOutcome& outcome);
    // Range scans (range_scan_commands.cc).
    void binaryRangeScanCreate(const protocol::Request& request);
    void binaryRangeScanContinue(const protocol::Request& request);
    void binaryRangeScanCancel(const protocol::Request& request);
    void sendRangeScanBatch(const protocol::Request& request, const engine::RangeScanBatch& batch);
    std::uint8_t scanDatatype(const engine::Item& item) const;
    void binaryCollectionId(const protocol::Request& request);
    void binaryScopeId(const protocol::Request& request);
    std::optional<engine::Durability> durabilityOf(const protocol::Request& request);

    // Text commands (text_commands.cc).
    void executeText(const protocol::TextCommand& command);
    void textGet(const protocol::TextCommand& command);
    void textStore(const protocol::TextCommand& command);
    void textDelete(const protocol::TextCommand& command);
    void textArithmetic(const protocol::TextCommand& command);
    void textTouch(const protocol::TextCommand& command);
    void textFlush(const protocol::TextCommand& command);
    void textReply(const protocol::TextCommand& command, std::string_view line);
    // Text clients know nothing of vBuckets: a key's comes from its CRC.
    engine::Vbid textVbid(std::string_view key) const;
    void textStats(const protocol::TextCommand& command);

    // Meta commands and get-and-touch (meta_commands.cc).
    void executeMeta(const protocol::TextCommand& command);
    void metaGet(std::shared_ptr<const protocol::MetaRequest> request, bool mayVivify);
    void metaGetHit(std::shared_ptr<const protocol::MetaRequest> request, const engine::Item& item);
    void metaVivify(std::shared_ptr<const protocol::MetaRequest> request);
    void metaSet(const protocol::TextCommand& command);
    void metaDelete(const protocol::MetaRequest& request);
    void metaArithmetic(std::shared_ptr<const protocol::MetaRequest> request, bool create = false);
    void metaCounterExpiry(std::shared_ptr<const protocol::MetaRequest> request,
                           const engine::ArithmeticResult& result, bool created);
    void metaDebug(const protocol::MetaRequest& request);
    void textGetAndTouch(const protocol::TextCommand& command);

    // stats groups that are not a list from the shared context
    // (text_stats.cc): conns asks every front end about its connections;
    // cachedump lists keys.
    void textStatsConns();
    void textStatsCachedump(const protocol::TextCommand& command);

    // The config clients get: `topology`'s nodes and map; this node alone
    // without one (null: a single node). clusterMap() is the current one,
    // recorded as sent (sentRevision_).
    std::string clusterMap();
    std::string clusterMapOf(const ClusterTopology* topology) const;
    // Whether a NOT_MY_VBUCKET may leave the map out: the client asked for
    // that (HELLO 0x1e) and was sent the current revision already.
    bool clientHasClusterMap() const;

    // DCP (dcp_commands.cc): DCP_OPEN makes this a producer's connection.
    void binaryDcp(const protocol::Request& request);
    void binaryDcpOpen(const protocol::Request& request);
    // A consumer's response (to a noop), on a producer's connection.
    bool handleDcpResponse(std::string_view bytes);
    static void onDcpTick(evutil_socket_t, short, void* self);
    // Moves what the producer has to send into the output.
    void flushDcp();

    FrontEnd& frontEnd_;
    ServerContext& context_;
    FrontEndCounters& frontEndCounters_;  // its front end's
    RequestCounters* counters_;           // its front end's for bucket_ (follows it)
    const protocol::FramingLimits limits_;
    const bool tls_;              // bev_ is a bufferevent_openssl
    bufferevent* bev_ = nullptr;  // plain: writes (and their timeout) only
    evbuffer* input_ = nullptr;   // read, not yet served
    event* readEvent_ = nullptr;  // plain: the socket is readable, or idle too long
    bool idleTimeouts_ = true;    // off on a DCP connection
    event* requestTimer_ = nullptr;
    event* dcpTick_ = nullptr;  // a producer's noops (dcp_commands.cc)
    timeval idle_{};
    std::string localHost_;
    std::string peerAddress_;   // "tcp:host:port", for stats conns
    std::string localAddress_;  // the same, this end
    std::chrono::steady_clock::time_point lastCommand_ = std::chrono::steady_clock::now();
    std::string out_;
    bool closed_ = false;
    bool closing_ = false;       // close once the output is written
    bool pending_ = false;       // an engine operation is outstanding
    bool inEngineCall_ = false;  // the loop thread is inside an engine call
    bool readPaused_ = false;
    std::size_t discarding_ = 0;  // input bytes still to drop (discardInput)
    // The request whose engine operation is pending (releaseRequest). Its
    // bytes stay put at the front of the input while it is held: nothing
    // reads into the input or drains it while pending_ is set (reading is
    // off and process() stops).
    struct HeldRequest {
        std::string_view bytes;   // what the parser saw; the handler's views
        std::size_t discard = 0;  // to drop after it
        std::string copy;         // debug builds: the bytes as parsed
    };
    std::optional<HeldRequest> held_;
    // HELLO-negotiated features.
    bool xerror_ = false;
    bool collections_ = false;
    bool mutationSeqno_ = false;
    bool json_ = false;
    bool xattr_ = false;
    bool duplex_ = false;  // it takes server requests and replies (0x83)
    bool clustermapNotification_ = false;
    bool dedupeNotMyVbucketMaps_ = false;
    // The newest map revision this connection was sent (pushed, or in a
    // NOT_MY_VBUCKET or GET_CLUSTER_CONFIG answer): the client has it.
    std::uint64_t sentRevision_ = 0;
    bool couchbaseClient_ = false;  // sent HELLO: vBuckets come from the client
    bool authenticated_ = false;
    protocol::auth::Role role_ = protocol::auth::Role::Client;  // once authenticated
    const protocol::auth::Users::User* user_ = nullptr;         // once authenticated
    std::optional<protocol::auth::SaslSession> sasl_;
    // The bucket requests go to: the first until SELECT_BUCKET moves it
    // (never null); bucketSelected_ once one was selected.
    const ServedBucket* bucket_;
    bool bucketSelected_ = false;
    std::shared_ptr<dcp::DcpProducer> dcpProducer_;  // after DCP_OPEN
};

}  // namespace kvexec::server
