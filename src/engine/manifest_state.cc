// manifest_state.cc: the manifest's changes (checked, then applied with a
// new uid) and the JSON form of a manifest with its next ids.
#include "kvexec/engine/manifest_state.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <utility>

namespace kvexec::engine {
namespace {

using nlohmann::json;

std::string inQuotes(std::string_view name) {
    std::string out(1, '"');
    out.append(name).push_back('"');
    return out;
}

ManifestOutcome refuseName(std::string_view name, std::string& message) {
    if (validCollectionName(name)) {
        return ManifestOutcome::Success;
    }
    message = "invalid name " + inQuotes(name) +
              ": 1 to 251 of A-Z a-z 0-9 _ - %, not starting with _ or %";
    return ManifestOutcome::InvalidName;
}

ScopeEntry* scopeNamed(Manifest& manifest, std::string_view name) {
    const auto it = std::ranges::find(manifest.scopes, name, &ScopeEntry::name);
    return it == manifest.scopes.end() ? nullptr : &*it;
}

ManifestOutcome createScope(ManifestState& state, const ManifestEdit& edit, std::string& message) {
    if (const auto refused = refuseName(edit.scope, message); refused != ManifestOutcome::Success) {
        return refused;
    }
    if (state.manifest.findScope(edit.scope) != nullptr) {
        message = "scope " + inQuotes(edit.scope) + " already exists";
        return ManifestOutcome::ScopeExists;
    }
    state.manifest.scopes.push_back(ScopeEntry{state.nextScopeId++, edit.scope, {}});
    return ManifestOutcome::Success;
}

ManifestOutcome dropScope(ManifestState& state, const ManifestEdit& edit, std::string& message) {
    if (edit.scope == kDefaultName) {
        message = "the _default scope cannot be dropped";
        return ManifestOutcome::NotAllowed;
    }
    if (std::erase_if(state.manifest.scopes,
                      [&](const ScopeEntry& scope) { return scope.name == edit.scope; }) == 0) {
        message = "scope " + inQuotes(edit.scope) + " not found";
        return ManifestOutcome::UnknownScope;
    }
    return ManifestOutcome::Success;
}

ManifestOutcome createCollection(ManifestState& state, const ManifestEdit& edit,
                                 std::string& message) {
    if (const auto refused = refuseName(edit.collection, message);
        refused != ManifestOutcome::Success) {
        return refused;
    }
    ScopeEntry* scope = scopeNamed(state.manifest, edit.scope);
    if (scope == nullptr) {
        message = "scope " + inQuotes(edit.scope) + " not found";
        return ManifestOutcome::UnknownScope;
    }
    if (state.manifest.findCollection(edit.scope, edit.collection) != nullptr) {
        message = "collection " + inQuotes(edit.scope + "." + edit.collection) + " already exists";
        return ManifestOutcome::CollectionExists;
    }
    if (state.manifest.collectionCount() >= kMaxCollections) {
        message = "a bucket holds at most " + std::to_string(kMaxCollections) + " collections";
        return ManifestOutcome::LimitReached;
    }
    scope->collections.push_back(
        CollectionEntry{state.nextCollectionId++, edit.collection, edit.maxTtl});
    return ManifestOutcome::Success;
}

ManifestOutcome dropCollection(ManifestState& state, const ManifestEdit& edit,
                               std::string& message) {
    ScopeEntry* scope = scopeNamed(state.manifest, edit.scope);
    if (scope == nullptr) {
        message = "scope " + inQuotes(edit.scope) + " not found";
        return ManifestOutcome::UnknownScope;
    }
    const CollectionEntry* collection = state.manifest.findCollection(edit.scope, edit.collection);
    if (collection == nullptr) {
        message = "collection " + inQuotes(edit.scope + "." + edit.collection) + " not found";
        return ManifestOutcome::UnknownCollection;
    }
    if (collection->id == kDefaultCollection) {
        message = "the _default collection cannot be dropped";
        return ManifestOutcome::NotAllowed;
    }
    std::erase_if(scope->collections,
                  [&](const CollectionEntry& entry) { return entry.name == edit.collection; });
    return ManifestOutcome::Success;
}

ManifestOutcome apply(ManifestState& state, const ManifestEdit& edit, std::string& message) {
    switch (edit.kind) {
        case ManifestEdit::Kind::CreateScope:
            return createScope(state, edit, message);
        case ManifestEdit::Kind::DropScope:
            return dropScope(state, edit, message);
        case ManifestEdit::Kind::CreateCollection:
            return createCollection(state, edit, message);
        case ManifestEdit::Kind::DropCollection:
            return dropCollection(state, edit, message);
    }
    message = "unknown manifest change";
    return ManifestOutcome::NotAllowed;
}

// Lower-case hex digits only (std::stoull would also take "-1", "0x8"
// and leading blanks).
std::uint64_t parseHex(const json& value) {
    const auto text = value.get<std::string>();
    const bool digits = !text.empty() && text.size() <= 16 && std::ranges::all_of(text, [](char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
    });
    if (!digits) {
        throw std::invalid_argument("not a hex number: " + text);
    }
    return std::stoull(text, nullptr, 16);
}

std::uint32_t parseMaxTtl(const json& collection) {
    const auto found = collection.find("maxTTL");
    if (found == collection.end()) {
        return 0;
    }
    if (!found->is_number_unsigned() || found->get<std::uint64_t>() > UINT32_MAX) {
        throw std::invalid_argument("maxTTL is not a count of seconds: " + found->dump());
    }
    return found->get<std::uint32_t>();
}

// A name as the manifest holds it: a valid one, or _default for id 0.
std::string parseName(const json& entry, std::uint32_t id) {
    auto name = entry.at("name").get<std::string>();
    const bool isDefault = id == 0 && name == kDefaultName;
    if (!isDefault && (id == 0 || !validCollectionName(name))) {
        throw std::invalid_argument("id " + hexId(id) + " cannot be named \"" + name + "\"");
    }
    return name;
}

std::uint32_t parseId(const json& value) {
    const auto id = parseHex(value);
    if (id > UINT32_MAX) {
        throw std::invalid_argument("an id above 32 bits: " + value.get<std::string>());
    }
    return static_cast<std::uint32_t>(id);
}

// No id twice, none at or above the next of its kind (it would be handed
// out again), no next id among the reserved ones, no name twice in its
// scope, and _default._default where it belongs.
void checkIds(const ManifestState& state) {
    if (state.nextScopeId < 8 || state.nextCollectionId < 8) {
        throw std::invalid_argument("a next id among the reserved ones (below 8)");
    }
    std::set<ScopeId> scopes;
    std::set<CollectionId> collections;
    std::set<std::string_view> scopeNames;
    for (const auto& scope : state.manifest.scopes) {
        std::set<std::string_view> names;
        for (const auto& collection : scope.collections) {
            if (!names.insert(collection.name).second ||
                (collection.id == kDefaultCollection) !=
                    (scope.id == kDefaultScope && collection.name == kDefaultName)) {
                throw std::invalid_argument("collection \"" + collection.name +
                                            "\" twice, or _default out of place");
            }
        }
        if (!scopeNames.insert(scope.name).second) {
            throw std::invalid_argument("scope \"" + scope.name + "\" twice");
        }
        if (!scopes.insert(scope.id).second || scope.id >= state.nextScopeId) {
            throw std::invalid_argument("scope id " + hexId(scope.id) +
                                        " used twice or not below " + hexId(state.nextScopeId));
        }
        for (const auto& collection : scope.collections) {
            if (!collections.insert(collection.id).second ||
                collection.id >= state.nextCollectionId) {
                throw std::invalid_argument("collection id " + hexId(collection.id) +
                                            " used twice or not below " +
                                            hexId(state.nextCollectionId));
            }
        }
    }
    if (state.manifest.findCollection(kDefaultCollection) == nullptr) {
        throw std::invalid_argument("the _default collection is missing");
    }
}

ManifestState fromJson(const json& doc) {
    ManifestState state;
    state.manifest.uid = parseHex(doc.at("uid"));
    state.nextScopeId = parseId(doc.at("next_scope_uid"));
    state.nextCollectionId = parseId(doc.at("next_collection_uid"));
    state.manifest.scopes.clear();
    for (const auto& scope : doc.at("scopes")) {
        const ScopeId scopeId = parseId(scope.at("uid"));
        ScopeEntry entry{scopeId, parseName(scope, scopeId), {}};
        for (const auto& collection : scope.at("collections")) {
            const CollectionId id = parseId(collection.at("uid"));
            entry.collections.push_back(
                CollectionEntry{id, parseName(collection, id), parseMaxTtl(collection)});
        }
        state.manifest.scopes.push_back(std::move(entry));
    }
    checkIds(state);
    return state;
}

}  // namespace

ManifestEdit ManifestEdit::createScope(std::string scope) {
    return ManifestEdit{Kind::CreateScope, std::move(scope), {}, 0};
}

ManifestEdit ManifestEdit::dropScope(std::string scope) {
    return ManifestEdit{Kind::DropScope, std::move(scope), {}, 0};
}

ManifestEdit ManifestEdit::createCollection(std::string scope, std::string collection,
                                            std::uint32_t maxTtl) {
    return ManifestEdit{Kind::CreateCollection, std::move(scope), std::move(collection), maxTtl};
}

ManifestEdit ManifestEdit::dropCollection(std::string scope, std::string collection) {
    return ManifestEdit{Kind::DropCollection, std::move(scope), std::move(collection), 0};
}

ManifestChange applyManifestEdit(ManifestState& state, const ManifestEdit& edit) {
    ManifestState next = state;
    ManifestChange change{ManifestOutcome::Success, state.manifest.uid, {}};
    change.outcome = apply(next, edit, change.message);
    if (change.outcome == ManifestOutcome::Success) {
        ++next.manifest.uid;
        state = std::move(next);
        change.uid = state.manifest.uid;
    }
    return change;
}

std::string encodeManifestState(const ManifestState& state) {
    json doc = json::parse(state.manifest.toJson());
    doc["next_scope_uid"] = hexId(state.nextScopeId);
    doc["next_collection_uid"] = hexId(state.nextCollectionId);
    return doc.dump(1) + "\n";
}

ManifestState decodeManifestState(std::string_view text) {
    try {
        return fromJson(json::parse(text));
    } catch (const std::invalid_argument&) {
        throw;
    } catch (const std::exception& error) {
        throw std::invalid_argument(error.what());
    }
}

}  // namespace kvexec::engine
