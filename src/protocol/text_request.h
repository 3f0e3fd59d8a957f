// protocol/text_request.h: parses one memcached text-protocol command
// (get, gets, gat, gats, set, add, replace, append, prepend, cas, delete,
// incr, decr, touch, flush_all, stats, version, verbosity, quit; noreply
// where memcached takes it; and the meta commands mg, ms, md, ma, mn, me,
// whose flags meta_request.h reads) out of received bytes.
//
// Pure functions over caller-owned bytes: a TextCommand's string_views
// point into the input. Safe from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/meta_request.h"

namespace kvexec::protocol {

enum class TextVerb {
    Get,
    Gets,
    Gat,   // get-and-touch: gat <exptime> <key>*
    Gats,  // the same, with CAS
    Set,
    Add,
    Replace,
    Append,
    Prepend,
    Cas,
    Delete,
    Incr,
    Decr,
    Touch,
    FlushAll,
    Stats,
    Version,
    Verbosity,
    Quit,
    MetaGet,
    MetaSet,
    MetaDelete,
    MetaArithmetic,
    MetaNoop,
    MetaDebug,
};

struct TextCommand {
    TextVerb verb = TextVerb::Version;
    std::vector<std::string_view> keys;  // get/gets/gat/gats: all keys; others: one; meta: none
    std::uint32_t flags = 0;
    std::int64_t exptime = 0;  // also flush_all's delay and gat's exptime
    std::uint64_t cas = 0;
    std::uint64_t delta = 0;
    std::uint32_t verbosity = 0;
    std::string_view value;
    std::string_view statsGroup;
    // stats cachedump <dumpClass> <dumpLimit> (0: no limit)
    std::uint32_t dumpClass = 0;
    std::uint32_t dumpLimit = 0;
    bool noreply = false;
    MetaRequest meta;  // the meta commands' key and flags (owns its bytes)

    bool isStorage() const;  // has a data block (ms included)
};

enum class TextOutcome {
    Incomplete,  // need more bytes (`needed` of them, if known); nothing consumed
    Ok,          // `command` is valid; `consumed` bytes belong to it
    Error,       // send `errorLine`, drop `consumed` bytes, go on
    Fatal,       // send `errorLine`, then close the connection
};

struct TextParseResult {
    TextOutcome outcome = TextOutcome::Incomplete;
    TextCommand command;
    std::size_t consumed = 0;
    // Incomplete: the whole command's length once its line was read (a
    // storage command waiting for its data block); 0 while the line is not.
    std::size_t needed = 0;
    std::string errorLine;  // with its "\r\n"
    // Error: bytes after `consumed` to drop as they arrive (the data block
    // of a storage command refused from its line, as memcached swallows it).
    std::size_t discard = 0;
};

// Command lines are short, except multi-key gets, which memcached accepts
// far longer; a line over its limit is refused (and the connection closed)
// before it is buffered further.
struct TextLimits {
    std::size_t maxLineLength = 2048;
    std::size_t maxGetLineLength = 1024 * 1024;  // lines starting with get or gets
    std::size_t maxValueLength = 20 * 1024 * 1024;
};

inline constexpr std::size_t kMaxTextKeyLength = 250;
// memcached's slab class ids, which stats cachedump takes: 0 to 63.
inline constexpr std::uint32_t kCachedumpClasses = 64;

TextParseResult parseTextCommand(std::string_view input, const TextLimits& limits);

// The limit on the line at the front of `input`, by its first bytes.
std::size_t lineLimit(std::string_view input, const TextLimits& limits);

}  // namespace kvexec::protocol
