#include "engine/manifest_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <system_error>

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

void check(bool ok, const std::string& what) {
    if (!ok) {
        throw std::system_error(errno, std::generic_category(), what);
    }
}

void writeAndSync(const std::filesystem::path& path, const std::string& bytes) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    check(fd >= 0, "open " + path.string());
    std::size_t done = 0;
    bool ok = true;
    while (ok && done < bytes.size()) {
        const auto n = ::write(fd, bytes.data() + done, bytes.size() - done);
        ok = n > 0 || (n < 0 && errno == EINTR);
        done += n > 0 ? static_cast<std::size_t>(n) : 0;
    }
    ok = ok && ::fsync(fd) == 0;
    const int saved = errno;
    ::close(fd);
    errno = saved;
    check(ok, "write " + path.string());
}

void syncDirectory(const std::filesystem::path& dir) {
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    check(fd >= 0, "open " + dir.string());
    const bool ok = ::fsync(fd) == 0;
    ::close(fd);
    check(ok, "fsync " + dir.string());
}

}  // namespace

std::optional<ManifestState> loadManifest(const std::filesystem::path& dir) {
    const auto path = dir / kManifestFileName;
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        if (!std::filesystem::exists(path)) {
            return std::nullopt;
        }
        throw std::runtime_error("cannot read the collections manifest " + path.string());
    }
    std::stringstream bytes;
    bytes << in.rdbuf();
    try {
        return fromJson(json::parse(bytes.str()));
    } catch (const std::exception& error) {
        throw std::runtime_error("the collections manifest " + path.string() +
                                 " is damaged: " + error.what());
    }
}

void saveManifest(const std::filesystem::path& dir, const ManifestState& state) {
    const auto path = dir / kManifestFileName;
    const auto temporary = dir / (std::string(kManifestFileName) + ".tmp");
    writeAndSync(temporary, toJson(state));
    check(::rename(temporary.c_str(), path.c_str()) == 0, "rename " + temporary.string());
    syncDirectory(dir);
}

}  // namespace kvexec::engine
