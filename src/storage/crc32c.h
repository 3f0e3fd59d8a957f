// storage/crc32c.h: CRC-32C (Castagnoli), the checksum of every record.
//
// Uses the SSE4.2 crc32 instruction when the CPU has it, a table otherwise;
// both give the same result. Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kvexec::storage {

// Extends `crc` (0 to start) over data[0, size).
std::uint32_t crc32c(const void* data, std::size_t size, std::uint32_t crc = 0) noexcept;

}  // namespace kvexec::storage
