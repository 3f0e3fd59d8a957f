#include "protocol/meta_request.h"

#include <array>
#include <charconv>
#include <limits>

#include "protocol/base64.h"

namespace kvexec::protocol {
namespace {

constexpr std::size_t kMaxKeyLength = 250;
// memcached counts the tokens of a line, plus one, against this.
constexpr std::size_t kMaxTokensPlusOne = 20;

constexpr std::string_view kBadFormat = "CLIENT_ERROR bad command line format\r\n";
constexpr std::string_view kBadToken = "CLIENT_ERROR bad token in command line format\r\n";

// Decimal with an optional sign, as strtol/strtoull read a whole token;
// unsigned ones refuse a minus sign (memcached's safe_strtoull does).
template <class T>
std::optional<T> decimal(std::string_view token) {
    if (!token.empty() && token[0] == '+') {
        token.remove_prefix(1);
        if (!token.empty() && token[0] == '-') {
            return std::nullopt;
        }
    }
    T value{};
    const char* end = token.data() + token.size();
    const auto [ptr, ec] = std::from_chars(token.data(), end, value);
    if (token.empty() || ec != std::errc() || ptr != end) {
        return std::nullopt;
    }
    return value;
}

// memcached's TTL tokens are 32-bit signed.
std::optional<std::int64_t> ttlToken(std::string_view argument) {
    auto value = decimal<std::int32_t>(argument);
    return value ? std::optional<std::int64_t>(*value) : std::nullopt;
}

// The flag checks every meta command shares (memcached's pre-parse): reads
// each flag into `request`. A duplicate or unknown letter stops at once;
// a bad argument is remembered and reading goes on (the last one's error
// line wins, as in memcached).
class FlagReader {
  public:
    explicit FlagReader(MetaRequest& request) : r_(request) {}

    // Returns false on an error; error() says which line to answer.
    bool read(const std::vector<std::string_view>& tokens, std::size_t first,
              std::string_view encodedKey) {
        std::array<bool, 128> seen{};
        for (std::size_t i = first; i < tokens.size(); ++i) {
            const auto letter = static_cast<unsigned char>(tokens[i][0]);
            if (letter >= 127 || seen[letter]) {
                error_ = "CLIENT_ERROR duplicate flag\r\n";
                return false;
            }
            seen[letter] = true;
            r_.flags += static_cast<char>(letter);
            if (!readOne(tokens[i], encodedKey)) {
                error_ = "CLIENT_ERROR invalid flag\r\n";
                return false;
            }
        }
        return !failed_;
    }

    const std::string& error() const { return error_; }

  private:
    void fail(std::string_view line) {
        failed_ = true;
        error_ = line;
    }

    // False for a letter memcached 1.6.18 does not know.
    bool readOne(std::string_view token, std::string_view encodedKey) {
        const std::string_view argument = token.substr(1);
        switch (token[0]) {
            case 'b':
                r_.base64Key = true;
                if (auto key = decodeBase64(encodedKey)) {
                    r_.key = std::move(*key);
                } else {
                    fail("CLIENT_ERROR error decoding key\r\n");
                }
                return true;
            case 'N':
            case 'T':
            case 'R': {
                auto ttl = ttlToken(argument);
                if (!ttl) {
                    fail(kBadToken);
                }
                (token[0] == 'N' ? r_.vivifyTtl : token[0] == 'T' ? r_.ttl : r_.recacheTtl) = ttl;
                return true;
            }
            case 'F':
                if (auto flags = decimal<std::uint32_t>(argument)) {
                    r_.clientFlags = *flags;
                } else {
                    failed_ = true;  // memcached names no error for F: the last one named stands
                }
                return true;
            case 'C':
                r_.compareCas = decimal<std::uint64_t>(argument);
                if (!r_.compareCas) {
                    fail(kBadToken);
                }
                return true;
            case 'M':
                if (token.size() != 2) {
                    fail("CLIENT_ERROR incorrect length for M token\r\n");
                } else {
                    r_.mode = token[1];
                }
                return true;
            case 'J':
            case 'D': {
                auto number = decimal<std::uint64_t>(argument);
                if (!number) {
                    fail(token[0] == 'J' ? "CLIENT_ERROR invalid numeric initial value\r\n"
                                         : "CLIENT_ERROR invalid numeric delta value\r\n");
                }
                (token[0] == 'J' ? r_.initial : r_.delta) = number.value_or(0);
                return true;
            }
            case 'O':
                r_.opaque = token;
                return true;
            case 'q':
                r_.quiet = true;
                return true;
            case 'v':
                r_.returnValue = true;
                return true;
            case 'I':
                r_.invalidate = true;
                return true;
            case 'P':  // proxy hints: ignored
            case 'L':
            case 'k':
            case 's':
            case 't':
            case 'c':
            case 'f':
            case 'h':
            case 'l':
            case 'u':
                return true;
            default:
                return false;
        }
    }

    MetaRequest& r_;
    std::string error_ = std::string(kBadFormat);
    bool failed_ = false;
};

bool opaqueTooLong(const MetaRequest& r) {
    return r.opaque.size() > kMaxOpaqueLength;
}

constexpr std::string_view kOpaqueTooLong = "CLIENT_ERROR opaque token too long\r\n";

bool validMode(MetaVerb verb, char mode) {
    constexpr std::string_view kSetModes = "EAPRS";
    constexpr std::string_view kArithmeticModes = "I+D-";
    if (mode == 0) {
        return true;
    }
    return (verb == MetaVerb::Set ? kSetModes : kArithmeticModes).find(mode) !=
           std::string_view::npos;
}

// me <key> [b]: memcached reads b only as the third token, exactly "b".
MetaParseResult parseDebug(const std::vector<std::string_view>& t, MetaRequest& r) {
    if (t.size() < 2 || t[1].size() > kMaxKeyLength) {
        return {std::string(kBadFormat), std::nullopt};
    }
    r.key = t[1];
    if (t.size() >= 3 && t[2] == "b") {
        auto key = decodeBase64(t[1]);
        if (!key) {
            return {std::string(kBadFormat), std::nullopt};
        }
        r.key = std::move(*key);
        r.base64Key = true;
    }
    return {};
}

// The checks of mg, md and ma, whose flags follow the key.
MetaParseResult parseKeyed(MetaVerb verb, const std::vector<std::string_view>& t, MetaRequest& r) {
    if (t.size() + 1 > kMaxTokensPlusOne) {
        return {verb == MetaVerb::Get ? "CLIENT_ERROR options flags are too long\r\n"
                                      : "CLIENT_ERROR options flags too long\r\n",
                std::nullopt};
    }
    FlagReader reader(r);
    if (!reader.read(t, 2, t[1])) {
        // md and ma answer one line for every flag error.
        return {
            verb == MetaVerb::Get ? reader.error() : "CLIENT_ERROR invalid or duplicate flag\r\n",
            std::nullopt};
    }
    if (verb == MetaVerb::Arithmetic && !validMode(verb, r.mode)) {
        return {"CLIENT_ERROR invalid mode for ma M token\r\n", std::nullopt};
    }
    if (opaqueTooLong(r)) {
        return {std::string(kOpaqueTooLong), std::nullopt};
    }
    return {};
}

// ms <key> <datalen> <flags>*: errors found before the length is read owe
// no data block; later ones do.
MetaParseResult parseSet(const std::vector<std::string_view>& t, MetaRequest& r) {
    if (t.size() == 2) {
        return {std::string(kBadFormat), std::nullopt};
    }
    if (t.size() + 1 > kMaxTokensPlusOne) {
        return {"CLIENT_ERROR options flags too long\r\n", std::nullopt};
    }
    const auto length = decimal<std::int32_t>(t[2]);
    if (!length || *length < 0 || *length > std::numeric_limits<std::int32_t>::max() - 2) {
        return {std::string(kBadFormat), std::nullopt};
    }
    MetaParseResult result{{}, static_cast<std::uint32_t>(*length)};
    FlagReader reader(r);
    if (!reader.read(t, 3, t[1])) {
        result.error = reader.error();
    } else if (!validMode(MetaVerb::Set, r.mode)) {
        result.error = "CLIENT_ERROR invalid mode for ms M token\r\n";
    } else if (opaqueTooLong(r)) {
        result.error = kOpaqueTooLong;
    }
    return result;
}

}  // namespace

MetaParseResult parseMetaCommand(MetaVerb verb, const std::vector<std::string_view>& tokens,
                                 MetaRequest& request) {
    switch (verb) {
        case MetaVerb::Noop:
            return {};  // memcached ignores mn's arguments
        case MetaVerb::Debug:
            return parseDebug(tokens, request);
        default:
            break;
    }
    if (tokens.size() < 2) {
        return {"ERROR\r\n", std::nullopt};
    }
    if (tokens[1].size() > kMaxKeyLength) {
        return {std::string(kBadFormat), std::nullopt};
    }
    request.key = tokens[1];
    return verb == MetaVerb::Set ? parseSet(tokens, request) : parseKeyed(verb, tokens, request);
}

}  // namespace kvexec::protocol
