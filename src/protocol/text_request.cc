#include "protocol/text_request.h"

#include <charconv>
#include <optional>
#include <utility>

namespace kvexec::protocol {
namespace {

constexpr std::string_view kBadFormat = "CLIENT_ERROR bad command line format\r\n";

std::vector<std::string_view> tokenize(std::string_view line) {
    std::vector<std::string_view> tokens;
    std::size_t at = 0;
    while (at < line.size()) {
        while (at < line.size() && line[at] == ' ') {
            ++at;
        }
        const std::size_t start = at;
        while (at < line.size() && line[at] != ' ') {
            ++at;
        }
        if (at > start) {
            tokens.push_back(line.substr(start, at - start));
        }
    }
    return tokens;
}

template <class T>
std::optional<T> number(std::string_view token) {
    T value{};
    const auto* end = token.data() + token.size();
    auto [ptr, ec] = std::from_chars(token.data(), end, value);
    if (ec != std::errc() || ptr != end) {
        return std::nullopt;
    }
    return value;
}

// memcached 1.6.18 checks a key's length only: the tokenizer splits on
// spaces, so any other byte is part of the key (memcaslap's text mode sends
// keys that start with control characters).
bool validKey(std::string_view key) {
    return !key.empty() && key.size() <= kMaxTextKeyLength;
}

const std::pair<std::string_view, TextVerb> kVerbs[] = {
    {"get", TextVerb::Get},
    {"gets", TextVerb::Gets},
    {"gat", TextVerb::Gat},
    {"gats", TextVerb::Gats},
    {"set", TextVerb::Set},
    {"add", TextVerb::Add},
    {"replace", TextVerb::Replace},
    {"append", TextVerb::Append},
    {"prepend", TextVerb::Prepend},
    {"cas", TextVerb::Cas},
    {"delete", TextVerb::Delete},
    {"incr", TextVerb::Incr},
    {"decr", TextVerb::Decr},
    {"touch", TextVerb::Touch},
    {"flush_all", TextVerb::FlushAll},
    {"stats", TextVerb::Stats},
    {"version", TextVerb::Version},
    {"verbosity", TextVerb::Verbosity},
    {"quit", TextVerb::Quit},
    {"mg", TextVerb::MetaGet},
    {"ms", TextVerb::MetaSet},
    {"md", TextVerb::MetaDelete},
    {"ma", TextVerb::MetaArithmetic},
    {"mn", TextVerb::MetaNoop},
    {"me", TextVerb::MetaDebug},
};

MetaVerb metaVerbOf(TextVerb verb) {
    switch (verb) {
        case TextVerb::MetaGet:
            return MetaVerb::Get;
        case TextVerb::MetaSet:
            return MetaVerb::Set;
        case TextVerb::MetaDelete:
            return MetaVerb::Delete;
        case TextVerb::MetaArithmetic:
            return MetaVerb::Arithmetic;
        case TextVerb::MetaNoop:
            return MetaVerb::Noop;
        default:
            return MetaVerb::Debug;
    }
}

// gat <exptime> <key>*: no keys is a valid (empty) answer; the exptime is
// checked before the keys, as memcached does.
std::string parseGetAndTouch(const std::vector<std::string_view>& t, TextCommand& cmd) {
    if (t.size() < 2) {
        return "ERROR\r\n";
    }
    auto exptime = number<std::int32_t>(t[1]);
    if (!exptime) {
        return "CLIENT_ERROR invalid exptime argument\r\n";
    }
    cmd.exptime = *exptime;
    for (std::size_t i = 2; i < t.size(); ++i) {
        if (!validKey(t[i])) {
            return std::string(kBadFormat);
        }
        cmd.keys.push_back(t[i]);
    }
    return {};
}

std::optional<TextVerb> verbOf(std::string_view token) {
    for (const auto& [name, verb] : kVerbs) {
        if (name == token) {
            return verb;
        }
    }
    return std::nullopt;
}

// stats cachedump <class> <limit>: memcached's words for each mistake.
std::string parseCachedump(const std::vector<std::string_view>& t, TextCommand& cmd) {
    if (t.size() < 4) {
        return "CLIENT_ERROR bad command line\r\n";
    }
    auto slabClass = number<std::uint32_t>(t[2]);
    auto limit = number<std::uint32_t>(t[3]);
    if (!slabClass || !limit) {
        return std::string(kBadFormat);
    }
    if (*slabClass >= kCachedumpClasses) {
        return "CLIENT_ERROR Illegal slab id\r\n";
    }
    cmd.statsGroup = t[1];
    cmd.dumpClass = *slabClass;
    cmd.dumpLimit = *limit;
    return {};
}

// Strips a trailing "noreply" into the command; returns the other tokens.
std::size_t argCount(std::vector<std::string_view>& t, TextCommand& cmd) {
    if (t.size() > 1 && t.back() == "noreply") {
        cmd.noreply = true;
        t.pop_back();
    }
    return t.size() - 1;
}

// Parses the arguments of a command whose line is complete; returns an
// error line, or empty on success. `dataBytes` is set when the line owes a
// data block (even with an error: ms then swallows it).
std::string parseArguments(std::vector<std::string_view>& t, TextCommand& cmd,
                           std::optional<std::uint32_t>& dataBytes) {
    switch (cmd.verb) {
        case TextVerb::Gat:
        case TextVerb::Gats:
            return parseGetAndTouch(t, cmd);
        case TextVerb::MetaGet:
        case TextVerb::MetaSet:
        case TextVerb::MetaDelete:
        case TextVerb::MetaArithmetic:
        case TextVerb::MetaNoop:
        case TextVerb::MetaDebug: {
            auto parsed = parseMetaCommand(metaVerbOf(cmd.verb), t, cmd.meta);
            dataBytes = parsed.dataBytes;
            return parsed.error;
        }
        case TextVerb::Get:
        case TextVerb::Gets:
            if (t.size() < 2) {
                return "ERROR\r\n";
            }
            for (std::size_t i = 1; i < t.size(); ++i) {
                if (!validKey(t[i])) {
                    return std::string(kBadFormat);
                }
                cmd.keys.push_back(t[i]);
            }
            return {};
        case TextVerb::Set:
        case TextVerb::Add:
        case TextVerb::Replace:
        case TextVerb::Append:
        case TextVerb::Prepend:
        case TextVerb::Cas: {
            const std::size_t want = cmd.verb == TextVerb::Cas ? 5 : 4;
            if (argCount(t, cmd) != want || !validKey(t[1])) {
                return std::string(kBadFormat);
            }
            auto flags = number<std::uint32_t>(t[2]);
            auto exptime = number<std::int64_t>(t[3]);
            auto bytes = number<std::uint32_t>(t[4]);
            auto cas = want == 5 ? number<std::uint64_t>(t[5]) : std::optional<std::uint64_t>(0);
            if (!flags || !exptime || !bytes || !cas) {
                return std::string(kBadFormat);
            }
            cmd.keys.push_back(t[1]);
            cmd.flags = *flags;
            cmd.exptime = *exptime;
            cmd.cas = *cas;
            dataBytes = *bytes;
            return {};
        }
        case TextVerb::Delete: {
            const std::size_t n = argCount(t, cmd);
            if (n < 1 || n > 2 || !validKey(t[1]) || (n == 2 && t[2] != "0")) {
                return "CLIENT_ERROR bad command line format.  Usage: delete <key> [noreply]\r\n";
            }
            cmd.keys.push_back(t[1]);
            return {};
        }
        case TextVerb::Incr:
        case TextVerb::Decr: {
            if (argCount(t, cmd) != 2 || !validKey(t[1])) {
                return std::string(kBadFormat);
            }
            auto delta = number<std::uint64_t>(t[2]);
            if (!delta) {
                return "CLIENT_ERROR invalid numeric delta argument\r\n";
            }
            cmd.keys.push_back(t[1]);
            cmd.delta = *delta;
            return {};
        }
        case TextVerb::Touch: {
            auto exptime = argCount(t, cmd) == 2 ? number<std::int64_t>(t[2]) : std::nullopt;
            if (!exptime || !validKey(t[1])) {
                return std::string(kBadFormat);
            }
            cmd.keys.push_back(t[1]);
            cmd.exptime = *exptime;
            return {};
        }
        case TextVerb::FlushAll: {
            const std::size_t n = argCount(t, cmd);
            auto delay = n == 1 ? number<std::int64_t>(t[1]) : std::optional<std::int64_t>(0);
            if (n > 1 || !delay) {
                return std::string(kBadFormat);
            }
            cmd.exptime = *delay;
            return {};
        }
        case TextVerb::Stats:
            if (t.size() > 1 && t[1] == "cachedump") {
                return parseCachedump(t, cmd);
            }
            if (t.size() > 2) {
                return std::string(kBadFormat);
            }
            cmd.statsGroup = t.size() == 2 ? t[1] : std::string_view{};
            return {};
        case TextVerb::Verbosity: {
            // As memcached 1.6: a malformed line is an ERROR, but a noreply
            // one gets no answer at all (verbosity changes nothing here).
            auto level = argCount(t, cmd) == 1 ? number<std::uint32_t>(t[1]) : std::nullopt;
            if (!level && !cmd.noreply) {
                return "ERROR\r\n";
            }
            cmd.verbosity = level.value_or(0);
            return {};
        }
        case TextVerb::Version:
        case TextVerb::Quit:
            // memcached 1.6 ignores their arguments (memccapable checks it).
            return {};
    }
    return "ERROR\r\n";
}

}  // namespace

bool TextCommand::isStorage() const {
    switch (verb) {
        case TextVerb::Set:
        case TextVerb::Add:
        case TextVerb::Replace:
        case TextVerb::Append:
        case TextVerb::Prepend:
        case TextVerb::Cas:
        case TextVerb::MetaSet:
            return true;
        default:
            return false;
    }
}

namespace {

// A storage command's data block after its line (result.consumed bytes).
// A command refused after its length was read (`error`) swallows the
// block unchecked, as memcached does.
void takeDataBlock(std::string_view input, std::uint32_t dataBytes, std::string error,
                   const TextLimits& limits, TextParseResult& result) {
    if (dataBytes > limits.maxValueLength) {
        // memcached's answer; the block is dropped as it arrives and the
        // connection goes on.
        result.outcome = TextOutcome::Error;
        result.errorLine = "SERVER_ERROR object too large for cache\r\n";
        result.discard = std::size_t{dataBytes} + 2;
        result.command = {};
        return;
    }
    const std::size_t need = result.consumed + dataBytes + 2;
    if (input.size() < need) {
        result.outcome = TextOutcome::Incomplete;
        result.needed = need;
        result.consumed = 0;
        result.command = {};
        return;
    }
    if (error.empty() && input.substr(result.consumed + dataBytes, 2) != "\r\n") {
        error = "CLIENT_ERROR bad data chunk\r\n";
    }
    if (!error.empty()) {
        result.outcome = TextOutcome::Error;
        result.errorLine = std::move(error);
        result.consumed = need;
        result.command = {};
        return;
    }
    result.command.value = input.substr(result.consumed, dataBytes);
    result.consumed = need;
    result.outcome = TextOutcome::Ok;
}

}  // namespace

std::size_t lineLimit(std::string_view input, const TextLimits& limits) {
    const bool get = input.starts_with("get ") || input.starts_with("gets ");
    return get ? limits.maxGetLineLength : limits.maxLineLength;
}

TextParseResult parseTextCommand(std::string_view input, const TextLimits& limits) {
    TextParseResult result;
    // The line end is looked for within the limit only, so the outcome does
    // not depend on how much input follows.
    const std::size_t limit = lineLimit(input, limits);
    const std::size_t newline = input.substr(0, limit + 1).find('\n');
    if (newline == std::string_view::npos) {
        if (input.size() > limit) {
            result.outcome = TextOutcome::Fatal;
            result.errorLine = "CLIENT_ERROR line too long\r\n";
        }
        return result;
    }
    std::string_view line = input.substr(0, newline);
    if (!line.empty() && line.back() == '\r') {
        line.remove_suffix(1);
    }
    result.consumed = newline + 1;
    auto tokens = tokenize(line);
    auto verb = tokens.empty() ? std::nullopt : verbOf(tokens[0]);
    if (!verb) {
        result.outcome = TextOutcome::Error;
        result.errorLine = "ERROR\r\n";
        return result;
    }
    result.command.verb = *verb;
    std::optional<std::uint32_t> dataBytes;
    std::string error = parseArguments(tokens, result.command, dataBytes);
    if (!dataBytes) {
        result.outcome = error.empty() ? TextOutcome::Ok : TextOutcome::Error;
        if (!error.empty()) {
            result.errorLine = std::move(error);
            result.command = {};
        }
        return result;
    }
    takeDataBlock(input, *dataBytes, std::move(error), limits, result);
    return result;
}

}  // namespace kvexec::protocol
