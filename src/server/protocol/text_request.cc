#include "server/protocol/text_request.h"

#include <charconv>
#include <optional>
#include <utility>

namespace kvexec::server::protocol {
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
};

std::optional<TextVerb> verbOf(std::string_view token) {
    for (const auto& [name, verb] : kVerbs) {
        if (name == token) {
            return verb;
        }
    }
    return std::nullopt;
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
// error line, or empty on success.
std::string parseArguments(std::vector<std::string_view>& t, TextCommand& cmd,
                           std::uint32_t& dataBytes) {
    switch (cmd.verb) {
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
            return true;
        default:
            return false;
    }
}

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
    std::uint32_t dataBytes = 0;
    if (std::string error = parseArguments(tokens, result.command, dataBytes); !error.empty()) {
        result.outcome = TextOutcome::Error;
        result.errorLine = std::move(error);
        result.command = {};
        return result;
    }
    if (!result.command.isStorage()) {
        result.outcome = TextOutcome::Ok;
        return result;
    }
    if (dataBytes > limits.maxValueLength) {
        // The data block cannot be swallowed safely: tell the client, close.
        result.outcome = TextOutcome::Fatal;
        result.errorLine = "SERVER_ERROR object too large for cache\r\n";
        result.command = {};
        return result;
    }
    const std::size_t need = result.consumed + dataBytes + 2;
    if (input.size() < need) {
        result.outcome = TextOutcome::Incomplete;
        result.needed = need;
        result.consumed = 0;
        result.command = {};
        return result;
    }
    if (input.substr(result.consumed + dataBytes, 2) != "\r\n") {
        result.outcome = TextOutcome::Error;
        result.errorLine = "CLIENT_ERROR bad data chunk\r\n";
        result.consumed = need;
        result.command = {};
        return result;
    }
    result.command.value = input.substr(result.consumed, dataBytes);
    result.consumed = need;
    result.outcome = TextOutcome::Ok;
    return result;
}

}  // namespace kvexec::server::protocol
