#include "protocol/base64.h"

#include <array>
#include <cstdint>

namespace kvexec::protocol {
namespace {

constexpr std::string_view kAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr std::uint8_t kSkip = 0xff;

// Each byte's 6-bit value; '=' counts as a zero symbol; kSkip otherwise.
constexpr std::array<std::uint8_t, 256> symbolValues() {
    std::array<std::uint8_t, 256> values{};
    for (auto& v : values) {
        v = kSkip;
    }
    for (std::size_t i = 0; i < kAlphabet.size(); ++i) {
        values[static_cast<unsigned char>(kAlphabet[i])] = static_cast<std::uint8_t>(i);
    }
    values['='] = 0;
    return values;
}

constexpr auto kValues = symbolValues();

std::uint8_t valueOf(char c) {
    return kValues[static_cast<unsigned char>(c)];
}

}  // namespace

std::string encodeBase64(std::string_view bytes) {
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    for (std::size_t i = 0; i < bytes.size(); i += 3) {
        const std::size_t n = std::min<std::size_t>(3, bytes.size() - i);
        std::uint32_t group = 0;
        for (std::size_t j = 0; j < 3; ++j) {
            const auto byte = j < n ? static_cast<unsigned char>(bytes[i + j]) : 0u;
            group = (group << 8) | byte;
        }
        for (std::size_t j = 0; j < 4; ++j) {
            out += j <= n ? kAlphabet[(group >> (18 - 6 * j)) & 0x3f] : '=';
        }
    }
    return out;
}

std::optional<std::string> decodeBase64(std::string_view text) {
    std::size_t symbols = 0;
    for (char c : text) {
        symbols += valueOf(c) != kSkip ? 1 : 0;
    }
    if (symbols == 0 || symbols % 4 != 0) {
        return std::nullopt;
    }
    std::string out;
    std::uint32_t group = 0;
    std::size_t inGroup = 0, padding = 0;
    for (char c : text) {
        const std::uint8_t value = valueOf(c);
        if (value == kSkip) {
            continue;
        }
        padding += c == '=' ? 1 : 0;
        group = (group << 6) | value;
        if (++inGroup < 4) {
            continue;
        }
        if (padding > 2) {
            return std::nullopt;
        }
        for (std::size_t j = 0; j < 3 - padding; ++j) {
            out += static_cast<char>((group >> (16 - 8 * j)) & 0xff);
        }
        if (padding != 0) {
            break;  // nothing after a padded group counts
        }
        group = 0;
        inGroup = 0;
    }
    return out;
}

}  // namespace kvexec::protocol
