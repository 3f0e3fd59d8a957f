// protocol/meta_request.h: the arguments of memcached's meta commands (mg,
// ms, md, ma, mn, me) on the text protocol: their one-letter flags, read and
// refused the way memcached 1.6.18 reads and refuses them, with its error
// lines, so that clients see the same answers from kvexec-server.
//
// memcached 1.6.18 checks every meta command's flags against one set (so
// "mg k D5" is accepted and D ignored) and rejects letters it does not know
// (E, x, S...: later versions added some) with "CLIENT_ERROR invalid flag".
// What a flag does is the server's business (meta_commands.cc); this file
// only reads it.
//
// Pure functions over caller-owned tokens; a MetaRequest owns its bytes
// (the key may be base64-decoded), so it outlives the input. Safe from any
// thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvexec::protocol {

enum class MetaVerb { Get, Set, Delete, Arithmetic, Noop, Debug };

struct MetaRequest {
    std::string key;         // decoded when base64Key
    bool base64Key = false;  // b: the key travels base64-encoded (and is echoed so)
    // Each flag's letter in request order: reply tokens follow this order.
    std::string flags;
    std::string opaque;                       // the O token, its letter included; empty if none
    bool quiet = false;                       // q: no reply for the nominal outcome
    bool returnValue = false;                 // v
    bool invalidate = false;                  // I
    std::optional<std::int64_t> ttl;          // T: new TTL (relative or absolute, as exptime)
    std::optional<std::int64_t> vivifyTtl;    // N: create on miss with this TTL
    std::optional<std::int64_t> recacheTtl;   // R
    std::optional<std::uint64_t> compareCas;  // C
    std::uint32_t clientFlags = 0;            // F
    std::uint64_t delta = 1;                  // D (ma)
    std::uint64_t initial = 0;                // J (ma)
    char mode = 0;                            // M: ms E/A/P/R/S, ma I/+/D/-; 0 if none

    bool has(char flag) const { return flags.find(flag) != std::string::npos; }
};

struct MetaParseResult {
    // Empty on success; else the line to answer, with its "\r\n".
    std::string error;
    // ms: the data block's length once it was read from the line. An ms
    // refused after that point still owes its data block, which is then
    // swallowed (as memcached does); one refused before it owes none.
    std::optional<std::uint32_t> dataBytes;
};

inline constexpr std::size_t kMaxOpaqueLength = 32;  // the O token, its letter included

// `tokens` is the whole command line split at spaces, tokens[0] the verb.
MetaParseResult parseMetaCommand(MetaVerb verb, const std::vector<std::string_view>& tokens,
                                 MetaRequest& request);

}  // namespace kvexec::protocol
