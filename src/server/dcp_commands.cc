// DCP on a client connection (issue 26): DCP_OPEN makes the connection a
// producer's (dcp/producer.h), which then answers every DCP message the
// consumer sends and streams on its own, from the engine's tasks, through
// the front end's loop.
#include <nlohmann/json.hpp>

#include <iostream>

#include "dcp/events.h"
#include "dcp/producer.h"
#include "protocol/client_codec.h"
#include "protocol/dcp.h"
#include "server/connection.h"
#include "server/front_end.h"

namespace kvexec::server {

using protocol::Opcode;
using protocol::Request;
using protocol::Status;

namespace {

// The consumer's name for itself (DCP_OPEN's value); "" when absent.
std::string consumerNameOf(std::string_view json) {
    if (json.empty()) {
        return {};
    }
    const auto doc = nlohmann::json::parse(json, nullptr, false);
    if (!doc.is_object() || !doc.contains("consumer_name") || !doc["consumer_name"].is_string()) {
        return {};
    }
    return doc["consumer_name"].get<std::string>();
}

// The producer a DCP_OPEN asks for: its names, and what of a document
// its flags say travels.
dcp::ProducerOptions producerOptions(const protocol::dcp::Open& open, bool collections) {
    const auto values = dcp::valueOptionsOf(open.flags);
    return {
        std::string(open.name), consumerNameOf(open.json), collections, values.xattrs, values.body,
        values.deleteTimes};
}

}  // namespace

void Connection::binaryDcp(const Request& request) {
    if (request.opcode == Opcode::DcpOpen) {
        if (role_ != protocol::auth::Role::Node) {
            // Couchbase's answer to a user without the DCP privilege.
            return respondError(request, Status::NoAccess, "DCP is for the cluster's nodes");
        }
        return binaryDcpOpen(request);
    }
    if (!dcpProducer_) {
        return respondError(request, Status::InvalidArguments, "not a DCP connection (DCP_OPEN)");
    }
    if (!dcpProducer_->handle(request)) {
        return close();  // malformed DCP closes this connection, never the node
    }
    flushDcp();
}

void Connection::binaryDcpOpen(const Request& request) {
    const auto open = protocol::dcp::decodeOpen(request);
    if (!open) {
        return respondError(request, open.error.status, open.error.reason);
    }
    if ((open->flags & protocol::dcp::kOpenProducer) == 0) {
        return respondError(request, Status::NotSupported,
                            "this node opens its consumers itself; open a producer");
    }
    if (dcpProducer_) {
        return respondError(request, Status::InvalidArguments, "DCP_OPEN twice");
    }
    std::weak_ptr<Connection> self = weak_from_this();
    FrontEnd* frontEnd = &frontEnd_;
    dcpProducer_ = std::make_shared<dcp::DcpProducer>(
        bucket(), producerOptions(*open, collections_), [self, frontEnd] {
            frontEnd->post([self] {
                if (const auto connection = self.lock()) {
                    connection->flushDcp();
                }
            });
        });
    // A replication connection is quiet while nothing changes: it is not
    // idle, and the idle timeout must not drop it. Its noops (if the
    // consumer enables them) tell a dead one instead.
    stopIdleTimeouts();
    dcpTick_ = event_new(frontEnd_.base(), -1, EV_PERSIST, &Connection::onDcpTick, this);
    const timeval second{1, 0};
    evtimer_add(dcpTick_, &second);
    respond(request, Status::Success);
}

void Connection::onDcpTick(evutil_socket_t, short, void* self) {
    auto& connection = *static_cast<Connection*>(self);
    if (connection.closed_ || !connection.dcpProducer_) {
        return;
    }
    if (!connection.dcpProducer_->tick(std::chrono::steady_clock::now())) {
        std::cerr << "kvexec-server: DCP consumer " << connection.peerAddress_
                  << " left a noop unanswered; closing its connection\n";
        return connection.close();
    }
    connection.flushDcp();
}

bool Connection::handleDcpResponse(std::string_view bytes) {
    const auto parsed = protocol::parseResponse(bytes, limits_.binary.maxBodyLength);
    if (parsed.outcome != protocol::ResponseOutcome::Ok ||
        !dcpProducer_->handleResponse(parsed.response.opcode, parsed.response.opaque)) {
        close();  // malformed DCP closes this connection, never the node
        return false;
    }
    releaseRequest(bytes.substr(0, parsed.consumed));
    return true;
}

void Connection::flushDcp() {
    if (closed_ || !dcpProducer_) {
        return;
    }
    out_ += dcpProducer_->takeOutput();
    flushOutput();
}

}  // namespace kvexec::server
