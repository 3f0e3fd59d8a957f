// kvexec/engine/collections.h: scopes and collections (Couchbase's
// docs/Collections.md): a bucket's documents live in collections, grouped in
// scopes; the manifest lists them and counts its changes in its uid.
//
// - Every bucket has the scope `_default` (id 0) holding the collection
//   `_default` (id 0): the one a client that knows nothing of collections
//   uses. Neither can be dropped here (Couchbase lets the collection go; a
//   memcached client would then have nowhere to write).
// - Ids of new scopes and collections start at 8 and are never reused, so a
//   dropped collection's documents can never reappear under a new one.
// - A key names a document within one collection: the same key may exist
//   in two collections (DocKey).
// - Names: 1 to 251 characters of A-Z a-z 0-9 _ - %, not starting with _
//   or % (Couchbase's rule).
//
// Thread safety: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvexec::engine {

using CollectionId = std::uint32_t;
using ScopeId = std::uint32_t;

inline constexpr CollectionId kDefaultCollection = 0;
inline constexpr ScopeId kDefaultScope = 0;
inline constexpr std::string_view kDefaultName = "_default";
// Couchbase's limit on the collections of one bucket.
inline constexpr std::size_t kMaxCollections = 1000;

// A document's name: its collection and its key in it. Converts from a bare
// key (the default collection), so code that knows nothing of collections
// reads as it did.
struct DocKey {
    DocKey() = default;
    DocKey(std::string k, CollectionId c = kDefaultCollection) : key(std::move(k)), collection(c) {}
    DocKey(const char* k) : key(k) {}

    std::string key;
    CollectionId collection = kDefaultCollection;
};

// A key with its collection id in front, as unsigned LEB128: how a client
// that negotiated HELLO Collections sends every key, and how the engine
// keeps keys in memory and on disk.
std::string encodeCollectionKey(CollectionId collection, std::string_view key);
struct CollectionKeyView {
    CollectionId collection = kDefaultCollection;
    std::string_view key;  // the key without its prefix
};
// nullopt if the prefix is malformed (over 5 bytes, or above 32 bits) or
// leaves no key.
std::optional<CollectionKeyView> splitCollectionKey(std::string_view encoded);

struct CollectionEntry {
    CollectionId id = kDefaultCollection;
    std::string name;
    std::uint32_t maxTtl = 0;  // seconds; 0: none (documents keep their own expiry)

    friend bool operator==(const CollectionEntry&, const CollectionEntry&) = default;
};

struct ScopeEntry {
    ScopeId id = kDefaultScope;
    std::string name;
    std::vector<CollectionEntry> collections;

    friend bool operator==(const ScopeEntry&, const ScopeEntry&) = default;
};

struct Manifest {
    std::uint64_t uid = 0;  // +1 on every change
    std::vector<ScopeEntry> scopes;

    // A bucket's manifest before any change: _default._default only.
    static Manifest initial();
    const ScopeEntry* findScope(std::string_view name) const;
    const CollectionEntry* findCollection(std::string_view scope, std::string_view name) const;
    const CollectionEntry* findCollection(CollectionId id) const;
    std::size_t collectionCount() const;
    // Couchbase's JSON form (GET_COLLECTIONS_MANIFEST and the REST API's
    // scopes list): uids and ids in lower-case hex strings.
    std::string toJson() const;

    friend bool operator==(const Manifest&, const Manifest&) = default;
};

// Ids and uids as Couchbase writes them in JSON: lower-case hex, no "0x".
std::string hexId(std::uint64_t value);

// Whether `name` may name a new scope or collection.
bool validCollectionName(std::string_view name);

// A collection's path as GET_COLLECTION_ID takes it: "scope.collection",
// where an empty part means "_default" (so "." is _default._default).
// nullopt unless the path has exactly one '.' and both parts are valid
// names or "_default".
struct CollectionPath {
    std::string_view scope;
    std::string_view collection;
};
std::optional<CollectionPath> parseCollectionPath(std::string_view path);
// A scope's path as GET_SCOPE_ID takes it: "scope" or "scope.collection"
// (the collection ignored; empty means "_default"); nullopt if the scope
// is not a valid name.
std::optional<std::string_view> parseScopePath(std::string_view path);

// The outcome of a manifest change (Bucket::createScope and the rest).
enum class ManifestOutcome : std::uint8_t {
    Success,
    ScopeExists,
    CollectionExists,
    UnknownScope,
    UnknownCollection,
    InvalidName,     // see validCollectionName
    NotAllowed,      // dropping _default
    LimitReached,    // kMaxCollections
    NotReady,        // warmup has not finished, or the bucket is shutting down
    StorageFailure,  // the manifest could not be persisted: nothing changed
};
std::string_view to_string(ManifestOutcome outcome);

struct ManifestChange {
    ManifestOutcome outcome = ManifestOutcome::Success;
    std::uint64_t uid = 0;  // the manifest's uid after the change (or now, if refused)
    std::string message;    // for a refusal: what a person reads
};

}  // namespace kvexec::engine
