#include "engine/manifest_file.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "engine/durable_file.h"

namespace kvexec::engine {
namespace {

using nlohmann::json;

std::uint64_t parseHex(const json& value) {
    const auto text = value.get<std::string>();
    std::size_t used = 0;
    const auto parsed = std::stoull(text, &used, 16);
    if (used != text.size()) {
        throw std::invalid_argument("not a hex number: " + text);
    }
    return parsed;
}

ManifestState fromJson(const json& doc) {
    ManifestState state;
    state.manifest.uid = parseHex(doc.at("uid"));
    state.nextScopeId = static_cast<ScopeId>(parseHex(doc.at("next_scope_uid")));
    state.nextCollectionId = static_cast<CollectionId>(parseHex(doc.at("next_collection_uid")));
    state.manifest.scopes.clear();
    for (const auto& scope : doc.at("scopes")) {
        ScopeEntry entry{static_cast<ScopeId>(parseHex(scope.at("uid"))),
                         scope.at("name").get<std::string>(),
                         {}};
        for (const auto& collection : scope.at("collections")) {
            entry.collections.push_back(
                CollectionEntry{static_cast<CollectionId>(parseHex(collection.at("uid"))),
                                collection.at("name").get<std::string>(),
                                collection.value("maxTTL", std::uint32_t{0})});
        }
        state.manifest.scopes.push_back(std::move(entry));
    }
    if (state.manifest.findCollection(kDefaultCollection) == nullptr) {
        throw std::invalid_argument("the _default collection is missing");
    }
    return state;
}

std::string toJson(const ManifestState& state) {
    json doc = json::parse(state.manifest.toJson());
    doc["next_scope_uid"] = hexId(state.nextScopeId);
    doc["next_collection_uid"] = hexId(state.nextCollectionId);
    return doc.dump(1) + "\n";
}

}  // namespace

std::optional<ManifestState> loadManifest(const std::filesystem::path& dir) {
    const auto path = dir / kManifestFileName;
    std::optional<std::string> bytes;
    try {
        bytes = readFileIfPresent(path);
    } catch (const std::runtime_error&) {
        throw std::runtime_error("cannot read the collections manifest " + path.string());
    }
    if (!bytes) {
        return std::nullopt;
    }
    try {
        return fromJson(json::parse(*bytes));
    } catch (const std::exception& error) {
        throw std::runtime_error("the collections manifest " + path.string() +
                                 " is damaged: " + error.what());
    }
}

void saveManifest(const std::filesystem::path& dir, const ManifestState& state) {
    replaceFileDurably(dir / kManifestFileName, toJson(state));
}

}  // namespace kvexec::engine
