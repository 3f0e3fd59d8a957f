#include "subdoc/crc32c.h"

#include <array>

namespace kvexec::subdoc {

namespace {

constexpr std::uint32_t kPolynomial = 0x82f63b78;  // reflected Castagnoli

constexpr std::array<std::uint32_t, 256> makeTable() {
    std::array<std::uint32_t, 256> table{};
    for (std::uint32_t i = 0; i < 256; ++i) {
        std::uint32_t c = i;
        for (int k = 0; k < 8; ++k) {
            c = (c & 1) ? (c >> 1) ^ kPolynomial : c >> 1;
        }
        table[i] = c;
    }
    return table;
}

constexpr auto kTable = makeTable();

}  // namespace

std::uint32_t crc32c(std::string_view bytes) {
    std::uint32_t crc = 0xffffffff;
    for (const char c : bytes) {
        crc = kTable[(crc ^ static_cast<unsigned char>(c)) & 0xff] ^ (crc >> 8);
    }
    return crc ^ 0xffffffff;
}

}  // namespace kvexec::subdoc
