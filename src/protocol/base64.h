// protocol/base64.h: the base64 coding of the meta commands' b flag (binary
// keys travel base64-encoded on the text protocol), decoding as leniently
// as memcached 1.6.18 does, so that the same keys are accepted and refused.
//
// Pure functions; safe from any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kvexec::protocol {

// Standard alphabet, '=' padding, no line breaks.
std::string encodeBase64(std::string_view bytes);

// memcached's rules: bytes outside the alphabet are skipped; the symbols
// left must be a non-zero multiple of four; decoding stops after the first
// group that holds padding, and a group of three or four '=' is refused.
// nullopt when the text does not decode.
std::optional<std::string> decodeBase64(std::string_view text);

}  // namespace kvexec::protocol
