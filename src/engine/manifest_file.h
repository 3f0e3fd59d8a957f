// engine/manifest_file.h: the bucket's collections manifest on disk, in
// its data directory, with the next ids to hand out (so that a dropped
// id is never reused, also across restarts).
//
// The file is JSON (encodeManifestState: the manifest plus the next ids), replaced
// whole (durable_file.h), so a crash leaves the old or the new manifest,
// never a mix.
//
// Thread safety: plain functions; the caller serialises writes to one
// directory (BucketImpl's manifest change mutex).
#pragma once

#include <filesystem>
#include <optional>

#include "kvexec/engine/manifest_state.h"

namespace kvexec::engine {

inline constexpr const char* kManifestFileName = "collections.json";

// The persisted state, or nullopt if `dir` has no manifest (a bucket that
// never changed it). Throws std::runtime_error naming the file if it
// cannot be read or parsed.
std::optional<ManifestState> loadManifest(const std::filesystem::path& dir);
// Throws std::system_error if any step fails (the old file then stands).
void saveManifest(const std::filesystem::path& dir, const ManifestState& state);

}  // namespace kvexec::engine
