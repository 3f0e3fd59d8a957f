#include "protocol/auth/crypto.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <stdexcept>

namespace kvexec::protocol::auth {
namespace {

const EVP_MD* md(HashAlgorithm hash) {
    switch (hash) {
        case HashAlgorithm::Sha1:
            return EVP_sha1();
        case HashAlgorithm::Sha256:
            return EVP_sha256();
        case HashAlgorithm::Sha512:
            return EVP_sha512();
    }
    return EVP_sha512();
}

const unsigned char* bytes(std::string_view s) {
    return reinterpret_cast<const unsigned char*>(s.data());
}

}  // namespace

std::string pbkdf2(HashAlgorithm hash, std::string_view password, std::string_view salt,
                   int iterations) {
    std::string out(static_cast<std::size_t>(EVP_MD_get_size(md(hash))), '\0');
    if (PKCS5_PBKDF2_HMAC(password.data(), static_cast<int>(password.size()), bytes(salt),
                          static_cast<int>(salt.size()), iterations, md(hash),
                          static_cast<int>(out.size()),
                          reinterpret_cast<unsigned char*>(out.data())) != 1) {
        throw std::runtime_error("PKCS5_PBKDF2_HMAC failed");
    }
    return out;
}

std::string hmac(HashAlgorithm hash, std::string_view key, std::string_view data) {
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    if (HMAC(md(hash), key.data(), static_cast<int>(key.size()), bytes(data), data.size(), out,
             &length) == nullptr) {
        throw std::runtime_error("HMAC failed");
    }
    return std::string(reinterpret_cast<char*>(out), length);
}

std::string digest(HashAlgorithm hash, std::string_view data) {
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    if (EVP_Digest(data.data(), data.size(), out, &length, md(hash), nullptr) != 1) {
        throw std::runtime_error("EVP_Digest failed");
    }
    return std::string(reinterpret_cast<char*>(out), length);
}

std::string randomBytes(std::size_t count) {
    std::string out(count, '\0');
    if (RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(count)) != 1) {
        throw std::runtime_error("RAND_bytes failed");
    }
    return out;
}

std::string base64Encode(std::string_view in) {
    std::string out(4 * ((in.size() + 2) / 3) + 1, '\0');
    const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), bytes(in),
                                  static_cast<int>(in.size()));
    out.resize(static_cast<std::size_t>(n));
    return out;
}

std::optional<std::string> base64Decode(std::string_view in) {
    // Padding is one or two '=' that end the text, nowhere else: OpenSSL's
    // decoder takes '=' as data, so "====" or "A===" would pass it.
    const std::size_t padding = in.ends_with("==") ? 2 : in.ends_with("=") ? 1 : 0;
    if (in.size() % 4 != 0 ||
        in.substr(0, in.size() - padding).find('=') != std::string_view::npos) {
        return std::nullopt;
    }
    std::string out(3 * in.size() / 4 + 1, '\0');
    const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()), bytes(in),
                                  static_cast<int>(in.size()));
    if (n < 0 || static_cast<std::size_t>(n) < padding) {
        return std::nullopt;
    }
    // EVP_DecodeBlock counts the padding as data: drop one byte per '='.
    out.resize(static_cast<std::size_t>(n) - padding);
    return out;
}

bool constantTimeEqual(std::string_view a, std::string_view b) {
    return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace kvexec::protocol::auth
