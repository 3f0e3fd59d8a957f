// kvexec/engine/manifest_state.h: a collections manifest with the ids it
// hands out next, the changes one can make to it, and its JSON form: what
// a bucket keeps on disk, and what a cluster keeps in etcd so that every
// node holds the same scopes and collections under the same ids.
//
// - A change (ManifestEdit) is checked against the state and, if allowed,
//   applied with the manifest's uid raised by one (applyManifestEdit): the
//   one rule that both a single bucket (Bucket::createScope and the rest)
//   and a cluster (its manifest in etcd) follow.
// - New ids come from the state's next ids, never from the manifest: an id
//   dropped is never handed out again, so a dropped collection's documents
//   never reappear under a new one.
//
// Thread safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "kvexec/engine/collections.h"

namespace kvexec::engine {

struct ManifestState {
    Manifest manifest = Manifest::initial();
    ScopeId nextScopeId = 8;  // 0-7 are reserved (Couchbase's rule)
    CollectionId nextCollectionId = 8;

    friend bool operator==(const ManifestState&, const ManifestState&) = default;
};

// One change of the manifest, by names (as the REST API names it).
struct ManifestEdit {
    enum class Kind : std::uint8_t { CreateScope, DropScope, CreateCollection, DropCollection };

    Kind kind = Kind::CreateScope;
    std::string scope;
    std::string collection;    // the collection kinds only
    std::uint32_t maxTtl = 0;  // CreateCollection: seconds, 0: none

    static ManifestEdit createScope(std::string scope);
    static ManifestEdit dropScope(std::string scope);
    static ManifestEdit createCollection(std::string scope, std::string collection,
                                         std::uint32_t maxTtl);
    static ManifestEdit dropCollection(std::string scope, std::string collection);
};

// Checks `edit` against `state` and applies it: on Success the state holds
// the change and its uid is one higher; otherwise the state is untouched
// and the change says why (ScopeExists, UnknownCollection, InvalidName,
// NotAllowed for _default, LimitReached). The result's uid is the state's
// uid after the call.
ManifestChange applyManifestEdit(ManifestState& state, const ManifestEdit& edit);

// The state as JSON: the manifest's own form (Manifest::toJson) plus
// "next_scope_uid" and "next_collection_uid", in hex.
std::string encodeManifestState(const ManifestState& state);
// Throws std::invalid_argument saying what is wrong: not JSON, a field
// missing or not hex, no _default collection, an id used twice, or an id
// at or above the next id of its kind.
ManifestState decodeManifestState(std::string_view json);

}  // namespace kvexec::engine
