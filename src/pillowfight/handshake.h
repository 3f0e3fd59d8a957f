// pillowfight/handshake.h: the Couchbase bootstrap of one connection, as a
// state machine without I/O: HELLO (alt_request_support, sync_replication,
// xerror, select_bucket, tcp_nodelay), SASL (PLAIN or SCRAM-SHA*), then
// SELECT_BUCKET and GET_CLUSTER_CONFIG, whose vBucket map tells how many
// vBuckets keys hash over and which node is each one's active; with --collection, HELLO also asks
// for Collections and GET_COLLECTION_ID resolves the collection's id.
//
// The caller sends start()'s bytes, then feeds each response to
// onResponse() and sends what it returns until it says Done or Failed.
// A Handshake belongs to one connection: one thread at a time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "pillowfight/cluster_route.h"
#include "pillowfight/options.h"
#include "protocol/auth/scram_client.h"
#include "protocol/client_codec.h"

namespace kvexec::pillowfight {

class Handshake {
  public:
    explicit Handshake(const Options& options) : options_(options) {}

    enum class State {
        Hello,
        SaslAuth,
        SaslStep,
        SelectBucket,
        ClusterConfig,
        CollectionId,
        Done,
        Failed
    };

    struct Step {
        State state = State::Hello;
        std::string send;   // bytes to send next (empty when Done or Failed)
        std::string error;  // why, when Failed
    };

    std::string start();
    Step onResponse(const protocol::Response& response);

    State state() const { return state_; }
    // The cluster map's routing, once Done.
    const ClusterRoute& route() const { return route_; }
    // The bytes every key gets in front: the collection id in LEB128 when
    // --collection was given, else none.
    const std::string& keyPrefix() const { return keyPrefix_; }
    // Opaques below this are the handshake's; the load starts above.
    static constexpr std::uint32_t kLastOpaque = 16;

  private:
    Step fail(std::string error);
    Step afterHello();
    Step sasl(const protocol::Response& response);
    std::string request(protocol::Opcode opcode, std::string_view key = {},
                        std::string_view value = {});

    const Options& options_;
    State state_ = State::Hello;
    std::uint32_t opaque_ = 0;
    std::optional<protocol::auth::ScramClient> scram_;
    ClusterRoute route_;
    std::string keyPrefix_;
};

}  // namespace kvexec::pillowfight
