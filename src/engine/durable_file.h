// engine/durable_file.h: the small files of a bucket's data directory
// (the collections manifest, the vBucket states) replaced whole, so that
// a crash leaves the old or the new contents, never a mix: written to a
// temporary file, synced, renamed over the old one, the directory synced.
//
// Thread safety: plain functions; the caller serialises writes to one file.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace kvexec::engine {

// The file's bytes, or nullopt if it does not exist. Throws
// std::runtime_error naming the file if it exists but cannot be read.
std::optional<std::string> readFileIfPresent(const std::filesystem::path& path);

// Throws std::system_error naming the step that failed (the old file then
// stands).
void replaceFileDurably(const std::filesystem::path& path, const std::string& bytes);

}  // namespace kvexec::engine
