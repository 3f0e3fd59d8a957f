// subdoc/crc32c.h: CRC-32C (Castagnoli), which `$document.value_crc32c`
// and the `${Mutation.value_crc32c}` macro report for a body.
//
// A pure function over a constant table. Safe from any thread.
#pragma once

#include <cstdint>
#include <string_view>

namespace kvexec::subdoc {

std::uint32_t crc32c(std::string_view bytes);

}  // namespace kvexec::subdoc
