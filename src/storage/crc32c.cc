// crc32c.cc: CRC-32C, by the SSE4.2 instruction when the CPU has it, else by table.
#include "storage/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace kvexec::storage {
namespace {

constexpr std::uint32_t kPolynomial = 0x82F63B78u;  // reflected Castagnoli

constexpr std::array<std::uint32_t, 256> makeTable() {
    std::array<std::uint32_t, 256> table{};
    for (std::uint32_t i = 0; i < 256; ++i) {
        std::uint32_t c = i;
        for (int bit = 0; bit < 8; ++bit) {
            c = (c & 1) ? (c >> 1) ^ kPolynomial : c >> 1;
        }
        table[i] = c;
    }
    return table;
}
constexpr auto kTable = makeTable();

std::uint32_t crcTable(const unsigned char* p, std::size_t n, std::uint32_t crc) noexcept {
    while (n--) {
        crc = kTable[(crc ^ *p++) & 0xFF] ^ (crc >> 8);
    }
    return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) std::uint32_t crcHardware(const unsigned char* p, std::size_t n,
                                                            std::uint32_t crc) noexcept {
    std::uint64_t c = crc;
    while (n >= 8) {
        std::uint64_t word;
        std::memcpy(&word, p, 8);
        c = _mm_crc32_u64(c, word);
        p += 8;
        n -= 8;
    }
    auto c32 = static_cast<std::uint32_t>(c);
    while (n--) {
        c32 = _mm_crc32_u8(c32, *p++);
    }
    return c32;
}

bool haveHardwareCrc() noexcept {
    static const bool have = __builtin_cpu_supports("sse4.2");
    return have;
}
#endif

}  // namespace

std::uint32_t crc32c(const void* data, std::size_t size, std::uint32_t crc) noexcept {
    const auto* p = static_cast<const unsigned char*>(data);
    crc = ~crc;
#if defined(__x86_64__)
    if (haveHardwareCrc()) {
        return ~crcHardware(p, size, crc);
    }
#endif
    return ~crcTable(p, size, crc);
}

}  // namespace kvexec::storage
