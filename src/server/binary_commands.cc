// The binary protocol's commands: memcached's opcodes 0x00-0x1e and the
// Couchbase extensions (HELLO, SASL, SELECT_BUCKET, GET_CLUSTER_CONFIG,
// GET_ERROR_MAP, GET_META, OBSERVE_SEQNO, GET_LOCKED, UNLOCK_KEY, and the
// collections: ids in keys, GET_COLLECTIONS_MANIFEST, GET_COLLECTION_ID,
// GET_SCOPE_ID). SET_VBUCKET and GET_VBUCKET are vbucket_commands.cc's.
#include <cassert>

#include <nlohmann/json.hpp>

#include "kvexec/engine/xattrs.h"
#include "protocol/binary_response.h"
#include "protocol/cluster_map.h"
#include "protocol/dcp.h"
#include "protocol/hello.h"
#include "protocol/keys.h"
#include "server/connection.h"
#include "server/document_body.h"
#include "server/expiry.h"
#include "server/front_end.h"
#include "server/stats.h"

namespace kvexec::server {

using protocol::Opcode;
using protocol::Request;
using protocol::Status;

namespace {

std::string be32(std::uint32_t v) {
    std::string s;
    protocol::appendBe32(s, v);
    return s;
}

bool isWrite(Opcode op) {
    switch (protocol::loudVariant(op)) {
        case Opcode::Set:
        case Opcode::Add:
        case Opcode::Replace:
        case Opcode::Delete:
        case Opcode::Increment:
        case Opcode::Decrement:
        case Opcode::Append:
        case Opcode::Prepend:
            return true;
        default:
            return protocol::isSubdocMutation(op);
    }
}

// The commands Couchbase lets carry the preserve-TTL frame info: the
// writes that may replace an existing document's expiry (all but delete).
bool takesPreserveTtl(Opcode op) {
    return isWrite(op) && protocol::loudVariant(op) != Opcode::Delete;
}

// What a client that did not negotiate XERROR gets for the statuses it
// would not know (Couchbase's rule): a write refused by a lock looks like
// a CAS mismatch; the lock commands themselves, and a delete, a temporary
// failure; a SyncWrite being re-committed, a temporary failure too.
Status withoutXerror(Opcode op, Status status) {
    if (status == Status::NotLocked || status == Status::SyncWriteReCommitInProgress) {
        return Status::TemporaryFailure;
    }
    if (status != Status::Locked) {
        return status;
    }
    switch (protocol::loudVariant(op)) {
        case Opcode::Delete:
        case Opcode::GetLocked:
        case Opcode::UnlockKey:
            return Status::TemporaryFailure;
        default:
            return Status::KeyExists;
    }
}

engine::StoreOperation storeOperation(Opcode op) {
    switch (protocol::loudVariant(op)) {
        case Opcode::Add:
            return engine::StoreOperation::Add;
        case Opcode::Replace:
            return engine::StoreOperation::Replace;
        case Opcode::Append:
            return engine::StoreOperation::Append;
        case Opcode::Prepend:
            return engine::StoreOperation::Prepend;
        default:
            return engine::StoreOperation::Set;
    }
}

}  // namespace

void Connection::respond(const Request& request, Status status, std::string_view extras,
                         std::string_view key, std::string_view value, std::uint64_t cas,
                         std::uint8_t datatype) {
    protocol::appendResponse(out_, {request.opcode, status, request.opaque, cas, datatype}, extras,
                             key, value);
}

std::uint8_t Connection::clientDatatype(const engine::Item& item) const {
    return json_ ? item.meta.datatype & engine::kDatatypeJson : 0;
}

void Connection::respondError(const Request& request, Status status, std::string_view context) {
    if (status == Status::NotMyVbucket) {
        if (clientHasClusterMap()) {
            respond(request, status);  // HELLO 0x1e: no map it already has
        } else {
            respond(request, status, {}, {}, clusterMap(), 0, protocol::kDatatypeJson);
        }
        return;
    }
    if (xerror_ && !context.empty()) {
        const std::string body = nlohmann::json{{"error", {{"context", context}}}}.dump();
        respond(request, status, {}, {}, body, 0, protocol::kDatatypeJson);
        return;
    }
    respond(request, status, {}, {}, protocol::statusText(status));
}

void Connection::respondUnknown(const Request& request, Status status) {
    nlohmann::json body = {{"manifest_uid", engine::hexId(bucket().manifestUid())}};
    if (xerror_) {
        body["error"] = {
            {"context", status == Status::UnknownScope ? "unknown scope" : "unknown collection"}};
    }
    respond(request, status, {}, {}, body.dump(), 0, protocol::kDatatypeJson);
}

void Connection::respondEngine(const Request& request, engine::Status status) {
    const auto wire = static_cast<Status>(status);
    if (wire == Status::UnknownCollection) {
        return respondUnknown(request, wire);
    }
    respondError(request, xerror_ ? wire : withoutXerror(request.opcode, wire), {});
}

bool Connection::mayRunUnauthenticated(Opcode opcode) const {
    switch (opcode) {
        case Opcode::Hello:
        case Opcode::SaslListMechs:
        case Opcode::SaslAuth:
        case Opcode::SaslStep:
        case Opcode::Noop:
        case Opcode::Version:
        case Opcode::Quit:
        case Opcode::QuitQ:
        case Opcode::GetErrorMap:  // public, and the SDKs pipeline it before SASL
            return true;
        default:
            return false;
    }
}

bool Connection::mayUse(const ServedBucket& served) const {
    return context_.users.empty() || (user_ != nullptr && user_->mayAccess(served.name));
}

bool Connection::usesBucket(Opcode opcode) const {
    if (opcode == Opcode::SelectBucket || mayRunUnauthenticated(opcode)) {
        return false;
    }
    // Before a bucket is selected, GET_CLUSTER_CONFIG is the SDKs'
    // cluster-wide bootstrap (GCCCP): the nodes, which every bucket shares.
    return opcode != Opcode::GetClusterConfig || bucketSelected_;
}

bool Connection::resolveKey(const Request& request, engine::DocKey& key, engine::Vbid& vbid) {
    std::string_view wireKey = request.key;
    engine::CollectionId collection = engine::kDefaultCollection;
    if (collections_) {
        auto split = engine::splitCollectionKey(wireKey);
        if (!split) {
            respondError(request, Status::InvalidArguments, "malformed collection prefix");
            return false;
        }
        collection = split->collection;
        wireKey = split->key;
    }
    if (wireKey.size() > 250) {
        respondError(request, Status::InvalidArguments, "key longer than 250 bytes");
        return false;
    }
    const auto count = static_cast<std::uint16_t>(context_.config.vbuckets);
    const std::uint16_t expected = protocol::vbucketOfKey(wireKey, count);
    if (couchbaseClient_ && request.vbucket != expected) {
        respondError(request, Status::NotMyVbucket, {});
        return false;
    }
    key = engine::DocKey{std::string(wireKey), collection};
    vbid = expected;
    return true;
}

std::string Connection::mutationExtras(const engine::MutationToken& token) const {
    std::string extras;
    if (mutationSeqno_) {
        protocol::appendBe64(extras, token.vbucketUuid);
        protocol::appendBe64(extras, token.seqno);
    }
    return extras;
}

std::optional<engine::Durability> Connection::durabilityOf(const Request& request) {
    engine::Durability durability;
    if (!request.durability) {
        return durability;
    }
    durability.level = static_cast<engine::DurabilityLevel>(request.durability->level);
    if (request.durability->timeoutMs) {
        durability.timeout = std::chrono::milliseconds(*request.durability->timeoutMs);
    }
    counters_->durableWrites.fetch_add(1, std::memory_order_relaxed);
    return durability;
}

void Connection::executeBinary(const Request& request) {
    std::string reason;
    if (protocol::dcp::isDcp(request.opcode)) {
        if (!authenticated_) {
            return respondError(request, Status::AuthError, "authenticate first (SASL)");
        }
        if (!mayUse(*bucket_)) {
            return respondError(request, Status::NoAccess, "no access to bucket " + bucket_->name);
        }
        return binaryDcp(request);  // the DCP codec checks each message
    }
    if (Status s = protocol::validateShape(request, reason); s != Status::Success) {
        respondError(request, s, reason);
        return;
    }
    if (request.framingStatus != Status::Success) {
        respondError(request, request.framingStatus, request.framingError);
        return;
    }
    if (!authenticated_ && !mayRunUnauthenticated(request.opcode)) {
        respondError(request, Status::AuthError, "authenticate first (SASL)");
        return;
    }
    if (usesBucket(request.opcode) && !mayUse(*bucket_)) {
        // Couchbase's answer to a user without privileges on the bucket.
        respondError(request, Status::NoAccess,
                     "no access to bucket " + bucket_->name + " (SELECT_BUCKET one of yours)");
        return;
    }
    if (request.durability && !isWrite(request.opcode)) {
        respondError(request, Status::InvalidArguments, "durability on a command that is no write");
        return;
    }
    if (request.preserveTtl && !takesPreserveTtl(request.opcode)) {
        respondError(request, Status::InvalidArguments,
                     "preserve-TTL on a command that sets no expiry");
        return;
    }
    switch (protocol::loudVariant(request.opcode)) {
        case Opcode::Get:
        case Opcode::GetK:
            return binaryGet(request);
        case Opcode::Set:
        case Opcode::Add:
        case Opcode::Replace:
        case Opcode::Append:
        case Opcode::Prepend:
            return binaryStore(request);
        case Opcode::Delete:
            return binaryDelete(request);
        case Opcode::GetReplica:
            return binaryGetReplica(request);
        case Opcode::Increment:
        case Opcode::Decrement:
            return binaryArithmetic(request);
        case Opcode::Touch:
        case Opcode::Gat:
            return binaryTouch(request);
        case Opcode::Flush:
            return binaryFlush(request);
        case Opcode::Quit:
            if (request.opcode == Opcode::Quit) {
                respond(request, Status::Success);
            }
            closeAfterWrite();
            return;
        case Opcode::Noop:
        case Opcode::Verbosity:
            return respond(request, Status::Success);
        case Opcode::Version:
            return respond(request, Status::Success, {}, {}, kServerVersion);
        case Opcode::Stat:
            return binaryStat(request);
        case Opcode::Hello:
            return binaryHello(request);
        case Opcode::SaslListMechs:
            return respond(request, Status::Success, {}, {}, protocol::auth::kSaslMechanisms);
        case Opcode::SaslAuth:
        case Opcode::SaslStep:
            return binarySasl(request);
        case Opcode::SelectBucket:
            return binarySelectBucket(request);
        case Opcode::GetClusterConfig:
            return respond(request, Status::Success, {}, {}, clusterMap(), 0,
                           protocol::kDatatypeJson);
        case Opcode::GetErrorMap:
            return respond(request, Status::Success, {}, {},
                           protocol::errorMapJson(protocol::readBe16(request.value, 0)), 0,
                           protocol::kDatatypeJson);
        case Opcode::GetMeta:
            return binaryGetMeta(request);
        case Opcode::ObserveSeqno:
            return binaryObserveSeqno(request);
        case Opcode::GetLocked:
            return binaryGetLocked(request);
        case Opcode::UnlockKey:
            return binaryUnlock(request);
        case Opcode::GetCollectionsManifest:
            return respond(request, Status::Success, {}, {}, bucket().manifest().toJson(), 0,
                           protocol::kDatatypeJson);
        case Opcode::GetCollectionId:
            return binaryCollectionId(request);
        case Opcode::GetScopeId:
            return binaryScopeId(request);
        case Opcode::SetVbucket:
            return binarySetVbucket(request);
        case Opcode::GetVbucket:
            return binaryGetVbucket(request);
        case Opcode::RangeScanCreate:
            return binaryRangeScanCreate(request);
        case Opcode::RangeScanContinue:
            return binaryRangeScanContinue(request);
        case Opcode::RangeScanCancel:
            return binaryRangeScanCancel(request);
        default:
            if (protocol::isSubdoc(request.opcode)) {
                return binarySubdoc(request);
            }
            respondError(request, Status::UnknownCommand, "unknown command");
    }
}

void Connection::binaryGet(const Request& request) {
    engine::DocKey key;
    engine::Vbid vbid = 0;
    if (!resolveKey(request, key, vbid)) {
        return;
    }
    counters_->cmdGet.fetch_add(1, std::memory_order_relaxed);
    // The hottest request skips completion(): a read completes inline
    // (kvexec/engine/bucket.h), inside this call, so the handler may point at
    // `request`, and it is small enough for std::function to hold without
    // allocating.
    callEngine([&] {
        bucket().get(vbid, std::move(key), [this, &request](const engine::GetResult& r) {
            assert(inEngineCall_ && "kvexec/engine/bucket.h: reads complete inline");
            answerGet(request, r);
        });
    });
}

void Connection::answerGet(const Request& request, const engine::GetResult& r) {
    const bool withKey = protocol::loudVariant(request.opcode) == Opcode::GetK;
    if (r.status != engine::Status::Success) {
        if (r.status == engine::Status::KeyNotFound) {
            counters_->getMisses.fetch_add(1, std::memory_order_relaxed);
            if (protocol::isQuiet(request.opcode)) {
                return;
            }
            if (withKey) {
                return respond(request, Status::KeyNotFound, {}, request.key);
            }
        }
        return respondEngine(request, r.status);
    }
    counters_->getHits.fetch_add(1, std::memory_order_relaxed);
    respond(request, Status::Success, be32(r.item.meta.flags), withKey ? request.key : "",
            documentBody(r.item), r.item.meta.cas, clientDatatype(r.item));
}

// GET_REPLICA: this node's replica copy, for a client that reads from the
// vBucket's replica node (not the active, which answers NOT_MY_VBUCKET).
void Connection::binaryGetReplica(const Request& request) {
    engine::DocKey key;
    engine::Vbid vbid = 0;
    if (!resolveKey(request, key, vbid)) {
        return;
    }
    counters_->cmdGet.fetch_add(1, std::memory_order_relaxed);
    auto done = completion<engine::GetResult>([this, request](const engine::GetResult& r) {
        if (r.status != engine::Status::Success) {
            return respondEngine(request, r.status);
        }
        respond(request, Status::Success, be32(r.item.meta.flags), "", documentBody(r.item),
                r.item.meta.cas, clientDatatype(r.item));
    });
    callEngine([&] { bucket().getReplica(vbid, std::move(key), std::move(done)); });
}

void Connection::binaryStore(const Request& request) {
    engine::StoreRequest store;
    engine::DocKey key;
    if (!resolveKey(request, key, store.vbid)) {
        return;
    }
    store.key = std::move(key.key);
    store.collection = key.collection;
    auto durability = durabilityOf(request);
    store.operation = storeOperation(request.opcode);
    store.value.assign(request.value);
    store.cas = request.cas;
    store.datatype = request.datatype;
    store.preserveExpiry = request.preserveTtl;
    store.durability = *durability;
    if (request.extras.size() == 8) {
        store.flags = protocol::readBe32(request.extras, 0);
        store.expiry = absoluteExpiry(protocol::readBe32(request.extras, 4));
    }
    counters_->cmdSet.fetch_add(1, std::memory_order_relaxed);
    auto done =
        completion<engine::MutationResult>([this, request](const engine::MutationResult& r) {
            if (r.status != engine::Status::Success) {
                // memcached: append/prepend/replace of a missing key is NOT_STORED
                // for append/prepend, KEY_ENOENT for replace.
                return respondEngine(request, r.status);
            }
            if (!protocol::isQuiet(request.opcode)) {
                respond(request, Status::Success, mutationExtras(r.token), {}, {}, r.cas);
            }
        });
    callEngine([&] { bucket().store(std::move(store), std::move(done)); });
}

void Connection::binaryDelete(const Request& request) {
    engine::RemoveRequest remove;
    engine::DocKey key;
    if (!resolveKey(request, key, remove.vbid)) {
        return;
    }
    remove.key = std::move(key.key);
    remove.collection = key.collection;
    remove.cas = request.cas;
    remove.durability = *durabilityOf(request);
    auto done =
        completion<engine::MutationResult>([this, request](const engine::MutationResult& r) {
            auto& counter = r.status == engine::Status::Success ? counters_->deleteHits
                                                                : counters_->deleteMisses;
            counter.fetch_add(1, std::memory_order_relaxed);
            if (r.status != engine::Status::Success) {
                return respondEngine(request, r.status);
            }
            if (!protocol::isQuiet(request.opcode)) {
                // memcached answers a delete with CAS 0.
                respond(request, Status::Success, mutationExtras(r.token));
            }
        });
    callEngine([&] { bucket().remove(std::move(remove), std::move(done)); });
}

void Connection::binaryArithmetic(const Request& request) {
    engine::ArithmeticRequest arithmetic;
    engine::DocKey key;
    if (!resolveKey(request, key, arithmetic.vbid)) {
        return;
    }
    arithmetic.key = std::move(key.key);
    arithmetic.collection = key.collection;
    arithmetic.increment = protocol::loudVariant(request.opcode) == Opcode::Increment;
    arithmetic.delta = protocol::readBe64(request.extras, 0);
    arithmetic.initial = protocol::readBe64(request.extras, 8);
    const std::uint32_t expiration = protocol::readBe32(request.extras, 16);
    arithmetic.createIfMissing = expiration != 0xffffffff;
    arithmetic.expiry = arithmetic.createIfMissing ? absoluteExpiry(expiration) : 0;
    arithmetic.cas = request.cas;
    arithmetic.durability = *durabilityOf(request);
    auto done =
        completion<engine::ArithmeticResult>([this, request](const engine::ArithmeticResult& r) {
            if (r.status != engine::Status::Success) {
                return respondEngine(request, r.status);
            }
            if (!protocol::isQuiet(request.opcode)) {
                std::string value;
                protocol::appendBe64(value, r.value);
                respond(request, Status::Success, mutationExtras(r.token), {}, value, r.cas);
            }
        });
    callEngine([&] { bucket().arithmetic(std::move(arithmetic), std::move(done)); });
}

void Connection::binaryTouch(const Request& request) {
    engine::DocKey key;
    engine::Vbid vbid = 0;
    if (!resolveKey(request, key, vbid)) {
        return;
    }
    counters_->cmdTouch.fetch_add(1, std::memory_order_relaxed);
    const std::uint32_t expiry = absoluteExpiry(protocol::readBe32(request.extras, 0));
    auto done = completion<engine::GetResult>([this, request](const engine::GetResult& r) {
        if (r.status != engine::Status::Success) {
            if (r.status == engine::Status::KeyNotFound && request.opcode == Opcode::GatQ) {
                return;
            }
            return respondEngine(request, r.status);
        }
        if (request.opcode == Opcode::Touch) {
            return respond(request, Status::Success, {}, {}, {}, r.item.meta.cas);
        }
        respond(request, Status::Success, be32(r.item.meta.flags), {}, documentBody(r.item),
                r.item.meta.cas, clientDatatype(r.item));
    });
    callEngine([&] { bucket().touch(vbid, std::move(key), expiry, std::move(done)); });
}

void Connection::binaryFlush(const Request& request) {
    if (request.extras.size() == 4 && protocol::readBe32(request.extras, 0) != 0) {
        return respondError(request, Status::NotSupported, "delayed flush is not supported");
    }
    counters_->cmdFlush.fetch_add(1, std::memory_order_relaxed);
    engine::Status status = engine::Status::Success;
    bucket().flush([&status](engine::Status s) { status = s; });  // inline
    if (status != engine::Status::Success) {
        return respondEngine(request, status);
    }
    if (!protocol::isQuiet(request.opcode)) {
        respond(request, Status::Success);
    }
}

void Connection::binaryStat(const Request& request) {
    auto stats = collectStats(context_, *bucket_, std::string(request.key));
    if (!stats) {
        return respondError(request, Status::KeyNotFound, "unknown stat group");
    }
    for (const auto& [name, value] : *stats) {
        respond(request, Status::Success, {}, name, value);
    }
    respond(request, Status::Success);
}

void Connection::binaryHello(const Request& request) {
    const protocol::HelloReply reply = protocol::negotiateHello(request.value);
    xerror_ = reply.features.xerror;
    collections_ = reply.features.collections;
    mutationSeqno_ = reply.features.mutationSeqno;
    json_ = reply.features.json;
    xattr_ = reply.features.xattr;
    duplex_ = reply.features.duplex;
    clustermapNotification_ = reply.features.clustermapNotification;
    dedupeNotMyVbucketMaps_ = reply.features.dedupeNotMyVbucketMaps;
    couchbaseClient_ = true;
    respond(request, Status::Success, {}, {}, reply.granted);
}

void Connection::binarySasl(const Request& request) {
    if (context_.users.empty()) {
        return respondError(request, Status::NotSupported, "no authentication configured");
    }
    if (request.opcode == Opcode::SaslAuth || !sasl_) {
        sasl_.emplace(context_.users);
    }
    protocol::auth::SaslReply reply = request.opcode == Opcode::SaslAuth
                                          ? sasl_->start(request.key, request.value)
                                          : sasl_->step(request.key, request.value);
    switch (reply.outcome) {
        case protocol::auth::SaslOutcome::Success:
            authenticated_ = true;
            role_ = reply.user->role;
            user_ = reply.user;
            sasl_.reset();
            return respond(request, Status::Success, {}, {}, reply.payload);
        case protocol::auth::SaslOutcome::Continue:
            return respond(request, Status::AuthContinue, {}, {}, reply.payload);
        case protocol::auth::SaslOutcome::Failure:
            authenticated_ = false;
            role_ = protocol::auth::Role::Client;
            user_ = nullptr;
            sasl_.reset();
            return respondError(request, Status::AuthError, "authentication failed");
    }
}

void Connection::binarySelectBucket(const Request& request) {
    const ServedBucket* wanted = context_.findBucket(request.key);
    if (wanted == nullptr) {
        // Couchbase's answer: a user has no access to a bucket that does not
        // exist (no privileges on it), and the SDKs report BucketNotFound.
        return respondError(request, Status::NoAccess, "no such bucket");
    }
    if (!mayUse(*wanted)) {
        // The same words as for no such bucket: a user learns no bucket name
        // it is not given.
        return respondError(request, Status::NoAccess, "no such bucket");
    }
    if (dcpProducer_ != nullptr && wanted != bucket_) {
        // The producer streams the bucket it was opened on.
        return respondError(request, Status::NotSupported, "a DCP connection stays on its bucket");
    }
    if (wanted != bucket_) {
        sentRevision_ = 0;  // revisions count each bucket's maps apart
    }
    bucket_ = wanted;
    counters_ = &frontEnd_.requestCounters(*wanted);
    bucketSelected_ = true;
    respond(request, Status::Success);
}

void Connection::binaryGetMeta(const Request& request) {
    engine::DocKey key;
    engine::Vbid vbid = 0;
    if (!resolveKey(request, key, vbid)) {
        return;
    }
    const bool withDatatype = request.extras.size() == 1 && request.extras[0] == 2;
    auto done =
        completion<engine::GetResult>([this, request, withDatatype](const engine::GetResult& r) {
            if (r.status != engine::Status::Success) {
                if (r.status == engine::Status::KeyNotFound && protocol::isQuiet(request.opcode)) {
                    return;
                }
                return respondEngine(request, r.status);
            }
            std::string extras;
            const auto& meta = r.item.meta;
            protocol::appendBe32(extras, meta.deleted ? 1 : 0);
            protocol::appendBe32(extras, meta.flags);
            protocol::appendBe32(extras, meta.expiry);
            protocol::appendBe64(extras, meta.seqno);
            if (withDatatype) {
                extras.push_back(static_cast<char>(meta.datatype));
            }
            respond(request, Status::Success, extras, {}, {}, meta.cas);
        });
    callEngine([&] { bucket().getMeta(vbid, std::move(key), std::move(done)); });
}

void Connection::binaryObserveSeqno(const Request& request) {
    if (request.vbucket >= context_.config.vbuckets) {
        return respondError(request, Status::NotMyVbucket, {});
    }
    const auto r = bucket().observeSeqno(request.vbucket);
    if (r.status != engine::Status::Success) {
        return respondEngine(request, r.status);
    }
    std::string value;
    value.push_back(0);  // format 0: no failover
    protocol::appendBe16(value, request.vbucket);
    protocol::appendBe64(value, r.vbucketUuid);
    protocol::appendBe64(value, r.persistedSeqno);
    protocol::appendBe64(value, r.currentSeqno);
    respond(request, Status::Success, {}, {}, value);
}

void Connection::binaryGetLocked(const Request& request) {
    engine::DocKey key;
    engine::Vbid vbid = 0;
    if (!resolveKey(request, key, vbid)) {
        return;
    }
    const std::chrono::seconds lockTime{
        request.extras.size() == 4 ? protocol::readBe32(request.extras, 0) : 0};
    auto done = completion<engine::GetResult>([this, request](const engine::GetResult& r) {
        if (r.status != engine::Status::Success) {
            return respondEngine(request, r.status);
        }
        respond(request, Status::Success, be32(r.item.meta.flags), {}, documentBody(r.item),
                r.item.meta.cas, clientDatatype(r.item));
    });
    callEngine([&] { bucket().getLocked(vbid, std::move(key), lockTime, std::move(done)); });
}

void Connection::binaryUnlock(const Request& request) {
    engine::DocKey key;
    engine::Vbid vbid = 0;
    if (!resolveKey(request, key, vbid)) {
        return;
    }
    engine::Status status = engine::Status::Internal;
    bucket().unlock(vbid, std::move(key), request.cas,
                    [&status](engine::Status s) { status = s; });  // inline
    if (status != engine::Status::Success) {
        return respondEngine(request, status);
    }
    respond(request, Status::Success);
}

// The path comes in the value (Couchbase's rule) or, from older clients,
// in the key.
void Connection::binaryCollectionId(const Request& request) {
    const auto path =
        engine::parseCollectionPath(request.key.empty() ? request.value : request.key);
    if (!path) {
        return respondError(request, Status::InvalidArguments,
                            "the path must be scope.collection, with valid names");
    }
    const engine::Manifest manifest = bucket().manifest();
    if (manifest.findScope(path->scope) == nullptr) {
        return respondUnknown(request, Status::UnknownScope);
    }
    const auto* collection = manifest.findCollection(path->scope, path->collection);
    if (collection == nullptr) {
        return respondUnknown(request, Status::UnknownCollection);
    }
    std::string extras;
    protocol::appendBe64(extras, manifest.uid);
    protocol::appendBe32(extras, collection->id);
    respond(request, Status::Success, extras);
}

void Connection::binaryScopeId(const Request& request) {
    const auto path = engine::parseScopePath(request.key.empty() ? request.value : request.key);
    if (!path) {
        return respondError(request, Status::InvalidArguments, "the path must name a valid scope");
    }
    const engine::Manifest manifest = bucket().manifest();
    const auto* scope = manifest.findScope(*path);
    if (scope == nullptr) {
        return respondUnknown(request, Status::UnknownScope);
    }
    std::string extras;
    protocol::appendBe64(extras, manifest.uid);
    protocol::appendBe32(extras, scope->id);
    respond(request, Status::Success, extras);
}

}  // namespace kvexec::server
