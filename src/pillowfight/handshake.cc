#include "pillowfight/handshake.h"

#include "kvexec/engine/collections.h"
#include "protocol/binary_response.h"

namespace kvexec::pillowfight {

using protocol::Feature;
using protocol::Opcode;
using protocol::Response;
using protocol::Status;

std::string Handshake::request(Opcode opcode, std::string_view key, std::string_view value) {
    std::string out;
    protocol::appendRequest(out, {opcode, 0, ++opaque_, 0, 0}, {}, {}, key, value);
    return out;
}

std::string Handshake::start() {
    std::string features;
    for (const Feature f : {Feature::AltRequestSupport, Feature::SyncReplication, Feature::Xerror,
                            Feature::SelectBucket, Feature::TcpNoDelay, Feature::Duplex,
                            Feature::ClustermapChangeNotification}) {
        protocol::appendBe16(features, static_cast<std::uint16_t>(f));
    }
    if (!options_.collection.empty()) {
        protocol::appendBe16(features, static_cast<std::uint16_t>(Feature::Collections));
    }
    state_ = State::Hello;
    return request(Opcode::Hello, R"({"a":"kvexec-pillowfight"})", features);
}

Handshake::Step Handshake::fail(std::string error) {
    state_ = State::Failed;
    return {state_, {}, std::move(error)};
}

Handshake::Step Handshake::afterHello() {
    if (options_.user.empty()) {
        state_ = State::SelectBucket;
        return {state_, request(Opcode::SelectBucket, options_.bucket), {}};
    }
    state_ = State::SaslAuth;
    if (options_.saslMechanism == "PLAIN") {
        const std::string payload = std::string(1, '\0') + options_.user + '\0' + options_.password;
        return {state_, request(Opcode::SaslAuth, "PLAIN", payload), {}};
    }
    scram_.emplace(*protocol::auth::scramHashOf(options_.saslMechanism), options_.user,
                   options_.password);
    return {state_, request(Opcode::SaslAuth, options_.saslMechanism, scram_->clientFirst()), {}};
}

Handshake::Step Handshake::sasl(const Response& r) {
    if (r.status == Status::AuthContinue && state_ == State::SaslAuth && scram_) {
        std::string error;
        auto final = scram_->clientFinal(r.value, error);
        if (!final) {
            return fail("SASL: " + error);
        }
        state_ = State::SaslStep;
        return {state_, request(Opcode::SaslStep, options_.saslMechanism, *final), {}};
    }
    if (r.status != Status::Success) {
        return fail("SASL " + options_.saslMechanism +
                    " refused: " + std::string(protocol::statusText(r.status)));
    }
    if (scram_ && !scram_->verifyServerFinal(r.value)) {
        return fail("SASL: the server's SCRAM signature is wrong");
    }
    state_ = State::SelectBucket;
    return {state_, request(Opcode::SelectBucket, options_.bucket), {}};
}

Handshake::Step Handshake::onResponse(const Response& r) {
    if (r.opaque != opaque_) {
        return fail("handshake: answer to opaque " + std::to_string(r.opaque) + ", expected " +
                    std::to_string(opaque_));
    }
    switch (state_) {
        case State::Hello: {
            if (r.status != Status::Success) {
                return fail("HELLO refused");
            }
            bool alt = false, sync = false;
            for (std::size_t at = 0; at + 2 <= r.value.size(); at += 2) {
                const auto f = static_cast<Feature>(protocol::readBe16(r.value, at));
                alt = alt || f == Feature::AltRequestSupport;
                sync = sync || f == Feature::SyncReplication;
            }
            if (options_.durability && !(alt && sync)) {
                return fail(
                    "the server did not accept HELLO alt_request_support and "
                    "sync_replication: no durable writes");
            }
            return afterHello();
        }
        case State::SaslAuth:
        case State::SaslStep:
            return sasl(r);
        case State::SelectBucket:
            if (r.status != Status::Success) {
                return fail("SELECT_BUCKET " + options_.bucket + ": " +
                            std::string(protocol::statusText(r.status)));
            }
            state_ = State::ClusterConfig;
            return {state_, request(Opcode::GetClusterConfig), {}};
        case State::ClusterConfig: {
            if (r.status != Status::Success) {
                return fail("GET_CLUSTER_CONFIG: " + std::string(protocol::statusText(r.status)));
            }
            auto route = routeOf(r.value);
            if (!route) {
                return fail("GET_CLUSTER_CONFIG: no usable vBucketServerMap in the answer");
            }
            route_ = std::move(*route);
            if (!options_.collection.empty()) {
                state_ = State::CollectionId;
                return {state_, request(Opcode::GetCollectionId, {}, options_.collection), {}};
            }
            state_ = State::Done;
            return {state_, {}, {}};
        }
        case State::CollectionId: {
            if (r.status != Status::Success || r.extras.size() != 12) {
                return fail("GET_COLLECTION_ID " + options_.collection + ": " +
                            std::string(protocol::statusText(r.status)));
            }
            const auto id = protocol::readBe32(r.extras, 8);
            keyPrefix_ = engine::encodeCollectionKey(id, "");
            state_ = State::Done;
            return {state_, {}, {}};
        }
        case State::Done:
        case State::Failed:
            break;
    }
    return fail("handshake: unexpected answer");
}

}  // namespace kvexec::pillowfight
