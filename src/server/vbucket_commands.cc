// SET_VBUCKET (0x3d) and GET_VBUCKET (0x3e): a vBucket's state (active,
// replica, pending, dead: kvexec/engine/vbucket_state.h) by its number in
// the request header, as Couchbase's tools send them.
//
// Who may set a state: on a single node, whoever manages it (the node role,
// as for DCP_OPEN; without users, anyone). With --cluster the cluster map
// owns the states: the node agent applies each map as it comes and would
// overwrite a state set by hand, so the command is refused there. A single
// node's restart makes every vBucket active again (main.cc), as it does
// with states a cluster left behind.
//
// The state travels in 1 byte of extras (Couchbase 6.5 and later, where a
// JSON value may carry the vBucket's replication topology) or in 4 bytes,
// network order (before). A single node's chain is itself, so a topology
// is refused rather than ignored. GET_VBUCKET answers the state in 4 bytes
// of value, network order.
//
// SET_VBUCKET's refusals, in this order (Couchbase checks a packet before
// the sender's privileges): EINVAL for extras of neither 1 nor 4 bytes, an
// unknown state or a vBucket the bucket does not have; EACCESS for a user
// other than the node; NOT_SUPPORTED with --cluster, or for a topology.
#include <optional>

#include "kvexec/engine/vbucket_state.h"
#include "protocol/binary_response.h"
#include "server/connection.h"

namespace kvexec::server {

using protocol::Request;
using protocol::Status;

namespace {

std::optional<engine::VBucketState> stateOf(std::uint32_t number) {
    using engine::VBucketState;
    for (const auto state :
         {VBucketState::Active, VBucketState::Replica, VBucketState::Pending, VBucketState::Dead}) {
        if (number == static_cast<std::uint32_t>(state)) {
            return state;
        }
    }
    return std::nullopt;
}

// The state a SET_VBUCKET asks for; nullopt (and why) when it is malformed.
// The extras are 1 or 4 bytes (validateShape).
std::optional<engine::VBucketState> requestedState(const Request& request, std::string& reason) {
    const bool oneByte = request.extras.size() == 1;
    if (!oneByte && !request.value.empty()) {
        reason = "SET_VBUCKET with 4 bytes of extras takes no value";
        return std::nullopt;
    }
    const auto number = oneByte ? static_cast<std::uint8_t>(request.extras.front())
                                : protocol::readBe32(request.extras, 0);
    const auto state = stateOf(number);
    if (!state) {
        reason = "unknown vBucket state ";
        reason += std::to_string(number);
        reason += " (1 active, 2 replica, 3 pending, 4 dead)";
    }
    return state;
}

}  // namespace

bool Connection::knownVbucket(const Request& request) {
    if (request.vbucket < context_.config.vbuckets) {
        return true;
    }
    std::string reason = "no vBucket ";
    reason += std::to_string(request.vbucket);
    reason += " (the bucket has ";
    reason += std::to_string(context_.config.vbuckets);
    reason += ")";
    respondError(request, Status::InvalidArguments, reason);
    return false;
}

void Connection::binarySetVbucket(const Request& request) {
    std::string reason;
    const auto state = requestedState(request, reason);
    if (!state) {
        return respondError(request, Status::InvalidArguments, reason);
    }
    if (!knownVbucket(request)) {
        return;
    }
    if (role_ != protocol::auth::Role::Node) {
        // Couchbase's answer to a user without the node-management privilege.
        return respondError(request, Status::NoAccess, "vBucket states are the node's to set");
    }
    if (context_.config.cluster) {
        // Not EINVAL: the request is well formed; this node does not take
        // it. NOT_SUPPORTED with the reason tells a Couchbase tool (which
        // would otherwise retry or report a bad packet) where states come
        // from.
        return respondError(request, Status::NotSupported,
                            "vBucket states come from the cluster map (--cluster)");
    }
    if (!request.value.empty()) {
        return respondError(request, Status::NotSupported,
                            "a single node's replication topology is itself");
    }
    // On the loop thread: the engine persists the states file before it
    // returns (an administrative command, rarely sent).
    const auto status = bucket().setVBucketState(request.vbucket, *state);
    if (status != engine::Status::Success) {
        return respondEngine(request, status);
    }
    respond(request, Status::Success);
}

void Connection::binaryGetVbucket(const Request& request) {
    if (!knownVbucket(request)) {
        return;
    }
    const auto assignment = bucket().vbucketAssignment(request.vbucket);
    if (!assignment) {
        return respondEngine(request, engine::Status::NotMyVbucket);
    }
    std::string value;
    protocol::appendBe32(value, static_cast<std::uint32_t>(assignment->state));
    respond(request, Status::Success, {}, {}, value);
}

}  // namespace kvexec::server
