// The sub-document commands (the SDKs' lookupIn / mutateIn): single-path
// opcodes 0xc5-0xcf, 0xd2, 0xd3 and SUBDOC_MULTI_LOOKUP / _MUTATION.
// src/subdoc decodes the request and runs its specs over the document read
// from the engine; a mutation stores the result with the CAS it read and,
// when another writer came first and the client set no CAS, reads and runs
// again (Couchbase's rule). Macros get the write's own CAS and seqno from
// the engine (StoreRequest::beforeQueue).
#include <algorithm>
#include <chrono>
#include <memory>

#include "kvexec/engine/xattrs.h"
#include "server/connection.h"
#include "server/expiry.h"
#include "subdoc/codec.h"

namespace kvexec::server {

using protocol::Opcode;
using protocol::Request;
using protocol::Status;

namespace {

// How often a mutation is run again after losing a race for the document.
constexpr int kMaxAttempts = 100;

// The doc flags that make a tombstone matter (transactions stage inserts
// in tombstones' xattrs): the request reads it, and sub-document's plan
// decides whether it may act on it (subdoc/executor.h).
constexpr std::uint8_t kTombstoneFlags = subdoc::doc_flag::AccessDeleted |
                                         subdoc::doc_flag::CreateAsDeleted |
                                         subdoc::doc_flag::ReviveDocument;

// The document as the request may see it: a tombstone too when it asked,
// and this node's replica copy for a ReplicaRead lookup (the SDKs'
// lookupInAnyReplica and lookupInAllReplicas).
engine::GetResult readFor(engine::Bucket& bucket, engine::Vbid vbid, const engine::DocKey& key,
                          std::uint8_t docFlags) {
    engine::GetResult read;
    auto keep = [&read](const engine::GetResult& r) { read = r; };  // reads complete inline
    const bool tombstones = (docFlags & kTombstoneFlags) != 0;
    if ((docFlags & subdoc::doc_flag::ReplicaRead) != 0) {
        tombstones ? bucket.getReplicaIncludingDeleted(vbid, key, keep)
                   : bucket.getReplica(vbid, key, keep);
    } else {
        tombstones ? bucket.getIncludingDeleted(vbid, key, keep) : bucket.get(vbid, key, keep);
    }
    return read;
}

Status wire(subdoc::Status status) {
    return static_cast<Status>(subdoc::wireValue(status));
}

bool isMulti(Opcode op) {
    return op == Opcode::SubdocMultiLookup || op == Opcode::SubdocMultiMutation;
}

subdoc::DecodedRequest decode(const Request& request) {
    const auto opcode = static_cast<std::uint8_t>(request.opcode);
    switch (request.opcode) {
        case Opcode::SubdocMultiLookup:
            return subdoc::decodeMultiLookup(request.extras, request.value);
        case Opcode::SubdocMultiMutation:
            return subdoc::decodeMultiMutation(request.extras, request.value);
        default:
            return subdoc::decodeSinglePath(opcode, request.extras, request.value);
    }
}

std::uint64_t wallClockNs() {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                          std::chrono::system_clock::now().time_since_epoch())
                                          .count());
}

// What only virtual xattrs report of the vBucket (`$document.vbucket_uuid`,
// `$vbucket`): found only for a request with xattr specs, the uuid under
// the vBucket's lock.
struct VbucketVattrs {
    bool asked = false;
    std::uint64_t uuid = 0;
};

VbucketVattrs vattrsIfAsked(const engine::Bucket& bucket, engine::Vbid vbid,
                            const std::vector<subdoc::Spec>& specs) {
    const bool asked = std::any_of(specs.begin(), specs.end(),
                                   [](const subdoc::Spec& spec) { return spec.isXattr(); });
    return {asked, asked ? bucket.observeSeqno(vbid).vbucketUuid : 0};
}

subdoc::DocumentMeta metaOf(const engine::Item& item, const VbucketVattrs& vattrs) {
    subdoc::DocumentMeta meta;
    meta.cas = item.meta.cas;
    meta.seqno = item.meta.seqno;
    meta.expiry = item.meta.expiry;
    meta.flags = item.meta.flags;
    meta.datatype = item.meta.datatype;
    meta.deleted = item.meta.deleted;
    meta.vbucketUuid = vattrs.uuid;
    if (vattrs.asked) {
        // The engine's CAS is its HLC (the machine's clock, moved past the
        // highest CAS given): now is at least the document's CAS.
        meta.hlcNow = std::max(wallClockNs(), item.meta.cas);
    }
    return meta;
}

// Statuses a multi-path response carries a per-spec body with.
bool hasSpecBody(subdoc::Status status) {
    using S = subdoc::Status;
    return status == S::Success || status == S::MultiPathFailure || status == S::SuccessDeleted ||
           status == S::MultiPathFailureDeleted;
}

}  // namespace

// What a sub-document mutation needs across its attempts: owned copies of
// the request's parts (its bytes live in the input buffer only while the
// request is being parsed).
struct Connection::SubdocWrite {
    subdoc::DecodedRequest decoded;
    engine::Vbid vbid = 0;
    engine::DocKey key;
    std::uint64_t clientCas = 0;
    std::uint32_t expiry = 0;
    bool preserveExpiry = false;
    engine::Durability durability;
    int attempts = 0;

    bool mayRetry() const { return clientCas == 0 && attempts < kMaxAttempts; }
};

void Connection::binarySubdoc(const Request& request) {
    subdoc::DecodedRequest decoded = decode(request);
    if (decoded.status != subdoc::Status::Success) {
        return respondError(request, wire(decoded.status), "malformed sub-document request");
    }
    engine::DocKey key;
    engine::Vbid vbid = 0;
    if (!resolveKey(request, key, vbid)) {
        return;
    }
    if (decoded.kind == subdoc::RequestKind::Lookup) {
        return subdocLookup(request, vbid, std::move(key), decoded);
    }
    auto write = std::make_shared<SubdocWrite>();
    write->vbid = vbid;
    write->key = std::move(key);
    write->clientCas = request.cas;
    write->expiry = decoded.expiry ? absoluteExpiry(*decoded.expiry) : 0;
    write->preserveExpiry = request.preserveTtl;
    write->durability = *durabilityOf(request);
    write->decoded = std::move(decoded);
    subdocMutate(request, write);
}

void Connection::subdocLookup(const Request& request, engine::Vbid vbid, engine::DocKey key,
                              const subdoc::DecodedRequest& decoded) {
    counters_->cmdGet.fetch_add(1, std::memory_order_relaxed);
    const engine::GetResult read = readFor(bucket(), vbid, key, decoded.docFlags);
    if (read.status != engine::Status::Success) {
        return respondEngine(request, read.status);
    }
    const auto vattrs = vattrsIfAsked(bucket(), vbid, decoded.specs);
    const auto outcome =
        subdoc::lookup(read.item.value, metaOf(read.item, vattrs), decoded.specs, decoded.docFlags);
    const std::uint64_t cas = read.item.meta.cas;
    if (!isMulti(request.opcode)) {
        const auto single = subdoc::singleLookupResponse(outcome);
        if (single.status != subdoc::Status::Success &&
            single.status != subdoc::Status::SuccessDeleted) {
            return respondError(request, wire(single.status), {});
        }
        // A binary xattr value comes back as its bytes (kv_engine: Raw).
        const bool binary = (decoded.specs.front().flags & subdoc::path_flag::BinaryValue) != 0;
        const bool json = request.opcode == Opcode::SubdocGet && json_ && !binary;
        return respond(request, wire(single.status), {}, {}, single.value, cas,
                       json ? engine::kDatatypeJson : 0);
    }
    if (!hasSpecBody(outcome.status)) {
        return respondError(request, wire(outcome.status), {});
    }
    respond(request, wire(outcome.status), {}, {}, subdoc::encodeLookupResults(outcome.results),
            cas);
}

void Connection::subdocMutate(const Request& request, const std::shared_ptr<SubdocWrite>& write) {
    const auto vattrs = vattrsIfAsked(bucket(), write->vbid, write->decoded.specs);
    while (true) {
        ++write->attempts;
        const engine::GetResult read =
            readFor(bucket(), write->vbid, write->key, write->decoded.docFlags);
        if (read.status != engine::Status::Success && read.status != engine::Status::KeyNotFound) {
            return respondEngine(request, read.status);
        }
        const bool found = read.status == engine::Status::Success;
        auto outcome = std::make_shared<subdoc::MutationOutcome>(subdoc::mutate(
            found ? std::optional<std::string_view>(read.item.value) : std::nullopt,
            metaOf(read.item, vattrs), write->decoded.specs, write->decoded.docFlags));
        if (outcome->status != subdoc::Status::Success &&
            outcome->status != subdoc::Status::SuccessDeleted) {
            return respondSubdocFailure(request, *outcome);
        }
        if (!storeSubdoc(request, write, read.item, outcome)) {
            return;  // answered, now or when the durable write completes
        }
    }
}

void Connection::respondSubdocFailure(const Request& request,
                                      const subdoc::MutationOutcome& outcome) {
    if (!isMulti(request.opcode)) {
        return respondError(request, wire(subdoc::singleMutationResponse(outcome).status), {});
    }
    if (outcome.status == subdoc::Status::MultiPathFailure ||
        outcome.status == subdoc::Status::MultiPathFailureDeleted) {
        return respond(request, wire(outcome.status), {}, {},
                       subdoc::encodeMutationResults(outcome));
    }
    respondError(request, wire(outcome.status), {});
}

// Stores (or deletes) the outcome; returns true when the document changed
// under it and the caller should read and run again.
bool Connection::storeSubdoc(const Request& request, const std::shared_ptr<SubdocWrite>& write,
                             const engine::Item& read,
                             std::shared_ptr<subdoc::MutationOutcome> outcome) {
    const std::uint64_t cas = write->clientCas != 0 ? write->clientCas : read.meta.cas;
    auto retry = std::make_shared<bool>(false);
    auto done = completion<engine::MutationResult>([this, request, write, outcome,
                                                    retry](const engine::MutationResult& r) {
        // A lost race is found before the write is queued: inline.
        const bool lostRace =
            r.status == engine::Status::KeyExists && inEngineCall_ && write->mayRetry() &&
            (!outcome->createDocument || (write->decoded.docFlags & subdoc::doc_flag::Add) == 0);
        if (lostRace) {
            *retry = true;
            return;
        }
        if (r.status != engine::Status::Success) {
            return respondEngine(request, r.status);
        }
        std::string body = isMulti(request.opcode) ? subdoc::encodeMutationResults(*outcome)
                                                   : subdoc::singleMutationResponse(*outcome).value;
        respond(request, wire(outcome->status), mutationExtras(r.token), {}, body, r.cas);
    });
    // A whole-document delete is a store of the tombstone sub-document
    // computed (the system xattrs the request left), not the engine's
    // remove, which keeps the stored document's.
    engine::StoreRequest store;
    store.operation =
        outcome->createDocument ? engine::StoreOperation::Add : engine::StoreOperation::Set;
    store.replacesXattrs = true;
    store.accessDeleted = (write->decoded.docFlags & subdoc::doc_flag::AccessDeleted) != 0;
    store.storeDeleted = outcome->storeAsDeleted;
    store.vbid = write->vbid;
    store.key = write->key.key;
    store.collection = write->key.collection;
    store.cas = outcome->createDocument ? 0 : cas;
    store.value = std::move(outcome->newValue);
    store.datatype = outcome->newDatatype;
    store.flags = write->decoded.userFlags.value_or(read.meta.flags);
    store.expiry = write->expiry;
    store.preserveExpiry = write->preserveExpiry;
    store.durability = write->durability;
    if (!outcome->macros.empty()) {
        store.beforeQueue = [macros = outcome->macros](std::string& value, std::uint64_t newCas,
                                                       engine::Seqno seqno) {
            subdoc::expandMacros(value, macros, newCas, seqno);
        };
    }
    counters_->cmdSet.fetch_add(1, std::memory_order_relaxed);
    callEngine([&] { bucket().store(std::move(store), std::move(done)); });
    return *retry;
}

}  // namespace kvexec::server
