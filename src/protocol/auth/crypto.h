// protocol/auth/crypto.h: the few libcrypto primitives SASL needs, as small
// functions over strings (PBKDF2, HMAC, digest, random bytes, base64).
//
// Stateless wrappers over OpenSSL; safe from any thread.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace kvexec::protocol::auth {

enum class HashAlgorithm { Sha1, Sha256, Sha512 };

std::string pbkdf2(HashAlgorithm hash, std::string_view password, std::string_view salt,
                   int iterations);
std::string hmac(HashAlgorithm hash, std::string_view key, std::string_view data);
std::string digest(HashAlgorithm hash, std::string_view data);
std::string randomBytes(std::size_t count);
std::string base64Encode(std::string_view bytes);
std::optional<std::string> base64Decode(std::string_view text);
// Compares without an early exit, so timing does not tell where they differ.
bool constantTimeEqual(std::string_view a, std::string_view b);

}  // namespace kvexec::protocol::auth
