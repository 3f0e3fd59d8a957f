// collections.cc: the manifest's lookups, names, JSON form and the
// collection prefix of keys.
#include "kvexec/engine/collections.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "engine/stored_key.h"

namespace kvexec::engine {

std::string hexId(std::uint64_t value) {
    char text[17];
    const int n = std::snprintf(text, sizeof text, "%llx", static_cast<unsigned long long>(value));
    return std::string(text, static_cast<std::size_t>(n));
}

std::string encodeCollectionKey(CollectionId collection, std::string_view key) {
    char prefix[kMaxCollectionPrefix];
    const std::size_t size = writeCollectionPrefix(collection, prefix);
    std::string out;
    out.reserve(size + key.size());
    out.append(prefix, size).append(key);
    return out;
}

std::optional<CollectionKeyView> splitCollectionKey(std::string_view encoded) {
    std::uint64_t id = 0;
    for (std::size_t i = 0; i < encoded.size() && i < 5; ++i) {
        const auto byte = static_cast<std::uint8_t>(encoded[i]);
        id |= static_cast<std::uint64_t>(byte & 0x7f) << (7 * i);
        if ((byte & 0x80) == 0) {
            if (id > UINT32_MAX || i + 1 == encoded.size()) {
                return std::nullopt;
            }
            return CollectionKeyView{static_cast<CollectionId>(id), encoded.substr(i + 1)};
        }
    }
    return std::nullopt;
}

Manifest Manifest::initial() {
    Manifest manifest;
    manifest.scopes.push_back(
        ScopeEntry{kDefaultScope,
                   std::string(kDefaultName),
                   {CollectionEntry{kDefaultCollection, std::string(kDefaultName), 0}}});
    return manifest;
}

const ScopeEntry* Manifest::findScope(std::string_view name) const {
    const auto it = std::ranges::find(scopes, name, &ScopeEntry::name);
    return it == scopes.end() ? nullptr : &*it;
}

const CollectionEntry* Manifest::findCollection(std::string_view scope,
                                                std::string_view name) const {
    const ScopeEntry* entry = findScope(scope);
    if (entry == nullptr) {
        return nullptr;
    }
    const auto it = std::ranges::find(entry->collections, name, &CollectionEntry::name);
    return it == entry->collections.end() ? nullptr : &*it;
}

const CollectionEntry* Manifest::findCollection(CollectionId id) const {
    for (const auto& scope : scopes) {
        const auto it = std::ranges::find(scope.collections, id, &CollectionEntry::id);
        if (it != scope.collections.end()) {
            return &*it;
        }
    }
    return nullptr;
}

std::size_t Manifest::collectionCount() const {
    std::size_t count = 0;
    for (const auto& scope : scopes) {
        count += scope.collections.size();
    }
    return count;
}

std::string Manifest::toJson() const {
    using nlohmann::json;
    json scopeList = json::array();
    for (const auto& scope : scopes) {
        json collectionList = json::array();
        for (const auto& collection : scope.collections) {
            json entry = {{"name", collection.name}, {"uid", hexId(collection.id)}};
            if (collection.maxTtl != 0) {
                entry["maxTTL"] = collection.maxTtl;
            }
            collectionList.push_back(std::move(entry));
        }
        scopeList.push_back(
            {{"name", scope.name}, {"uid", hexId(scope.id)}, {"collections", collectionList}});
    }
    return json{{"uid", hexId(uid)}, {"scopes", scopeList}}.dump();
}

bool validCollectionName(std::string_view name) {
    if (name.empty() || name.size() > 251 || name.front() == '_' || name.front() == '%') {
        return false;
    }
    return std::ranges::all_of(name, [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_' || c == '-' || c == '%';
    });
}

namespace {

// A path's part as a name: empty stands for _default.
std::optional<std::string_view> pathName(std::string_view part) {
    if (part.empty() || part == kDefaultName) {
        return kDefaultName;
    }
    if (!validCollectionName(part)) {
        return std::nullopt;
    }
    return part;
}

}  // namespace

std::optional<CollectionPath> parseCollectionPath(std::string_view path) {
    const auto dot = path.find('.');
    if (dot == std::string_view::npos || path.find('.', dot + 1) != std::string_view::npos) {
        return std::nullopt;
    }
    const auto scope = pathName(path.substr(0, dot));
    const auto collection = pathName(path.substr(dot + 1));
    if (!scope || !collection) {
        return std::nullopt;
    }
    return CollectionPath{*scope, *collection};
}

std::optional<std::string_view> parseScopePath(std::string_view path) {
    return pathName(path.substr(0, path.find('.')));
}

std::string_view to_string(ManifestOutcome outcome) {
    switch (outcome) {
        case ManifestOutcome::Success:
            return "Success";
        case ManifestOutcome::ScopeExists:
            return "ScopeExists";
        case ManifestOutcome::CollectionExists:
            return "CollectionExists";
        case ManifestOutcome::UnknownScope:
            return "UnknownScope";
        case ManifestOutcome::UnknownCollection:
            return "UnknownCollection";
        case ManifestOutcome::InvalidName:
            return "InvalidName";
        case ManifestOutcome::NotAllowed:
            return "NotAllowed";
        case ManifestOutcome::LimitReached:
            return "LimitReached";
        case ManifestOutcome::NotReady:
            return "NotReady";
        case ManifestOutcome::StorageFailure:
            return "StorageFailure";
    }
    return "?";
}

}  // namespace kvexec::engine
