#include "engine/manifest_file.h"

#include <stdexcept>

#include "engine/durable_file.h"

namespace kvexec::engine {

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
        return decodeManifestState(*bytes);
    } catch (const std::exception& error) {
        throw std::runtime_error("the collections manifest " + path.string() +
                                 " is damaged: " + error.what());
    }
}

void saveManifest(const std::filesystem::path& dir, const ManifestState& state) {
    replaceFileDurably(dir / kManifestFileName, encodeManifestState(state));
}

}  // namespace kvexec::engine
