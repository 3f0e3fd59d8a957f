// The text protocol parser: every verb (meta commands and get-and-touch
// included), noreply, data blocks, and the errors memcached 1.6.18 answers
// with (checked against it by tests/clients/meta_commands_test.sh).
#include <gtest/gtest.h>

#include "protocol/text_request.h"

namespace kvexec::protocol {
namespace {

TextParseResult parse(std::string_view input, TextLimits limits = {}) {
    return parseTextCommand(input, limits);
}

TEST(TextRequest, GetTakesManyKeys) {
    auto r = parse("get a bb ccc\r\n");
    ASSERT_EQ(r.outcome, TextOutcome::Ok);
    EXPECT_EQ(r.command.verb, TextVerb::Get);
    ASSERT_EQ(r.command.keys.size(), 3u);
    EXPECT_EQ(r.command.keys[2], "ccc");
    EXPECT_EQ(r.consumed, 14u);
}

TEST(TextRequest, BareNewlineEndsALineToo) {
    auto r = parse("gets k\n");
    ASSERT_EQ(r.outcome, TextOutcome::Ok);
    EXPECT_EQ(r.command.verb, TextVerb::Gets);
}

TEST(TextRequest, SetWaitsForItsDataBlock) {
    const std::string full = "set k 5 100 3 noreply\r\nabc\r\n";
    for (std::size_t n = 0; n < full.size(); ++n) {
        EXPECT_EQ(parse(full.substr(0, n)).outcome, TextOutcome::Incomplete) << n;
    }
    const std::string pipelined = full + "get k\r\n";
    auto r = parse(pipelined);
    ASSERT_EQ(r.outcome, TextOutcome::Ok);
    EXPECT_EQ(r.command.verb, TextVerb::Set);
    EXPECT_EQ(r.command.keys[0], "k");
    EXPECT_EQ(r.command.flags, 5u);
    EXPECT_EQ(r.command.exptime, 100);
    EXPECT_EQ(r.command.value, "abc");
    EXPECT_TRUE(r.command.noreply);
    EXPECT_EQ(r.consumed, full.size());
}

TEST(TextRequest, CasCarriesItsUniqueValue) {
    auto r = parse("cas k 0 0 1 123456789012\r\nx\r\n");
    ASSERT_EQ(r.outcome, TextOutcome::Ok);
    EXPECT_EQ(r.command.cas, 123456789012ULL);
    EXPECT_FALSE(r.command.noreply);
}

TEST(TextRequest, DataBlockWithoutCrlfIsABadDataChunk) {
    auto r = parse("set k 0 0 3\r\nabcd\r\n");
    EXPECT_EQ(r.outcome, TextOutcome::Error);
    EXPECT_EQ(r.errorLine, "CLIENT_ERROR bad data chunk\r\n");
}

TEST(TextRequest, MalformedStorageLineIsAClientError) {
    for (auto line : {"set k 0 0\r\n", "set k x 0 1\r\n", "set k 0 0 -1\r\n", "cas k 0 0 1\r\n"}) {
        auto r = parse(line);
        EXPECT_EQ(r.outcome, TextOutcome::Error) << line;
        EXPECT_EQ(r.errorLine.rfind("CLIENT_ERROR", 0), 0u) << line;
    }
}

TEST(TextRequest, UnknownVerbIsError) {
    auto r = parse("frobnicate\r\n");
    EXPECT_EQ(r.outcome, TextOutcome::Error);
    EXPECT_EQ(r.errorLine, "ERROR\r\n");
    EXPECT_EQ(r.consumed, 12u);
    EXPECT_EQ(parse("\r\n").errorLine, "ERROR\r\n");
}

TEST(TextRequest, DeleteAcceptsAZeroTimeOnly) {
    EXPECT_EQ(parse("delete k\r\n").outcome, TextOutcome::Ok);
    EXPECT_EQ(parse("delete k 0\r\n").outcome, TextOutcome::Ok);
    auto noreply = parse("delete k noreply\r\n");
    EXPECT_TRUE(noreply.command.noreply);
    EXPECT_EQ(parse("delete k 10\r\n").outcome, TextOutcome::Error);
}

TEST(TextRequest, IncrDecrTouchFlushVerbosityStats) {
    auto incr = parse("incr k 18446744073709551615\r\n");
    ASSERT_EQ(incr.outcome, TextOutcome::Ok);
    EXPECT_EQ(incr.command.delta, 18446744073709551615ULL);
    EXPECT_EQ(parse("decr k abc\r\n").errorLine, "CLIENT_ERROR invalid numeric delta argument\r\n");
    auto touch = parse("touch k 60 noreply\r\n");
    ASSERT_EQ(touch.outcome, TextOutcome::Ok);
    EXPECT_EQ(touch.command.exptime, 60);
    EXPECT_TRUE(touch.command.noreply);
    auto flush = parse("flush_all 10\r\n");
    ASSERT_EQ(flush.outcome, TextOutcome::Ok);
    EXPECT_EQ(flush.command.exptime, 10);
    EXPECT_TRUE(parse("flush_all noreply\r\n").command.noreply);
    EXPECT_EQ(parse("verbosity 1\r\n").command.verbosity, 1u);
    EXPECT_EQ(parse("stats timings\r\n").command.statsGroup, "timings");
    EXPECT_EQ(parse("version\r\n").command.verb, TextVerb::Version);
    EXPECT_EQ(parse("quit\r\n").command.verb, TextVerb::Quit);
}

// memccapable checks these as memcached 1.6.18 answers them.
TEST(TextRequest, VersionQuitAndVerbosityAnswerLikeMemcached) {
    EXPECT_EQ(parse("version foo bar\r\n").outcome, TextOutcome::Ok);
    EXPECT_EQ(parse("quit noreply\r\n").outcome, TextOutcome::Ok);
    EXPECT_EQ(parse("verbosity\r\n").errorLine, "ERROR\r\n");
    EXPECT_EQ(parse("verbosity foo bar my\r\n").errorLine, "ERROR\r\n");
    auto quiet = parse("verbosity noreply\r\n");
    ASSERT_EQ(quiet.outcome, TextOutcome::Ok);
    EXPECT_TRUE(quiet.command.noreply);
}

TEST(TextRequest, KeysLongerThan250AreRefused) {
    EXPECT_EQ(parse("get " + std::string(251, 'k') + "\r\n").outcome, TextOutcome::Error);
    EXPECT_EQ(parse("get " + std::string(250, 'k') + "\r\n").outcome, TextOutcome::Ok);
}

// As memcached: only spaces end a key, so control characters are key bytes
// (memcaslap's text mode puts 0x10 bytes at the front of its keys).
TEST(TextRequest, KeysMayHoldControlCharactersAsInMemcached) {
    const std::string key = "\x10\x10\x10\x10\x10\x10\x10\x10Lrr\x01\t";
    const std::string setLine = "set " + key + " 0 0 1\r\nx\r\n";
    auto set = parse(setLine);
    ASSERT_EQ(set.outcome, TextOutcome::Ok);
    EXPECT_EQ(set.command.keys.at(0), key);
    const std::string getLine = "get " + key + " other\r\n";
    auto get = parse(getLine);
    ASSERT_EQ(get.outcome, TextOutcome::Ok);
    ASSERT_EQ(get.command.keys.size(), 2u);
    EXPECT_EQ(get.command.keys[0], key);
}

TEST(TextRequest, LineWithoutEndPastTheLimitIsFatal) {
    TextLimits limits;
    limits.maxLineLength = 16;
    EXPECT_EQ(parse(std::string(16, 'g'), limits).outcome, TextOutcome::Incomplete);
    EXPECT_EQ(parse(std::string(17, 'g'), limits).outcome, TextOutcome::Fatal);
}

TEST(TextRequest, ValueOverTheLimitIsRefusedFromItsLineAndItsBlockDropped) {
    TextLimits limits;
    limits.maxValueLength = 10;
    const std::string line = "set k 0 0 11\r\n";
    auto r = parse(line, limits);
    EXPECT_EQ(r.outcome, TextOutcome::Error);
    EXPECT_EQ(r.errorLine, "SERVER_ERROR object too large for cache\r\n");
    EXPECT_EQ(r.consumed, line.size());
    EXPECT_EQ(r.discard, 13u);  // the block and its "\r\n"
}

TEST(TextRequest, GatTakesAnExptimeThenKeys) {
    auto r = parse("gats 100 a bb\r\n");
    ASSERT_EQ(r.outcome, TextOutcome::Ok);
    EXPECT_EQ(r.command.verb, TextVerb::Gats);
    EXPECT_EQ(r.command.exptime, 100);
    ASSERT_EQ(r.command.keys.size(), 2u);
    EXPECT_EQ(r.command.keys[1], "bb");
    auto none = parse("gat -1\r\n");  // memcached answers END
    ASSERT_EQ(none.outcome, TextOutcome::Ok);
    EXPECT_TRUE(none.command.keys.empty());
    EXPECT_EQ(none.command.exptime, -1);
    EXPECT_EQ(parse("gat\r\n").errorLine, "ERROR\r\n");
    EXPECT_EQ(parse("gat x k\r\n").errorLine, "CLIENT_ERROR invalid exptime argument\r\n");
    EXPECT_EQ(parse("gat 99999999999 k\r\n").errorLine,
              "CLIENT_ERROR invalid exptime argument\r\n");
    EXPECT_EQ(parse("gat x " + std::string(251, 'k') + "\r\n").errorLine,
              "CLIENT_ERROR invalid exptime argument\r\n");
    EXPECT_EQ(parse("gat 1 k " + std::string(251, 'k') + "\r\n").errorLine,
              "CLIENT_ERROR bad command line format\r\n");
}

TEST(TextRequest, MetaGetReadsItsFlagsInOrder) {
    auto r = parse("mg key v f t s k c O123 q T30 N40 u P1 Lx\r\n");
    ASSERT_EQ(r.outcome, TextOutcome::Ok);
    EXPECT_EQ(r.command.verb, TextVerb::MetaGet);
    const MetaRequest& m = r.command.meta;
    EXPECT_EQ(m.key, "key");
    EXPECT_EQ(m.flags, "vftskcOqTNuPL");
    EXPECT_EQ(m.opaque, "O123");
    EXPECT_TRUE(m.quiet);
    EXPECT_TRUE(m.returnValue);
    EXPECT_EQ(m.ttl, 30);
    EXPECT_EQ(m.vivifyTtl, 40);
    EXPECT_FALSE(m.base64Key);
    auto bare = parse("mg key\r\n");
    ASSERT_EQ(bare.outcome, TextOutcome::Ok);
    EXPECT_TRUE(bare.command.meta.flags.empty());
}

TEST(TextRequest, MetaBase64KeysAreDecoded) {
    auto r = parse("mg YmluAA== b k\r\n");
    ASSERT_EQ(r.outcome, TextOutcome::Ok);
    EXPECT_EQ(r.command.meta.key, std::string("bin\0", 4));
    EXPECT_TRUE(r.command.meta.base64Key);
    for (const char* line : {"mg !!!! b\r\n", "mg abc b\r\n", "mg a=== b\r\n", "mg YQ b k\r\n"}) {
        EXPECT_EQ(parse(line).errorLine, "CLIENT_ERROR error decoding key\r\n") << line;
    }
    // md and ma answer one line for every flag error.
    EXPECT_EQ(parse("md !!!! b\r\n").errorLine, "CLIENT_ERROR invalid or duplicate flag\r\n");
    EXPECT_EQ(parse("ma !!!! b\r\n").errorLine, "CLIENT_ERROR invalid or duplicate flag\r\n");
    // me reads b only as its third token.
    EXPECT_EQ(parse("me YQ== b\r\n").command.meta.key, "a");
    EXPECT_EQ(parse("me YQ== q b\r\n").command.meta.key, "YQ==");
    EXPECT_EQ(parse("me k b\r\n").errorLine, "CLIENT_ERROR bad command line format\r\n");
}

TEST(TextRequest, MetaFlagErrorsAreMemcachedsLines) {
    const std::pair<const char*, const char*> cases[] = {
        {"mg\r\n", "ERROR\r\n"},
        {"md\r\n", "ERROR\r\n"},
        {"ma\r\n", "ERROR\r\n"},
        {"me\r\n", "CLIENT_ERROR bad command line format\r\n"},
        {"mg k v v\r\n", "CLIENT_ERROR duplicate flag\r\n"},
        {"mg k \x80\r\n", "CLIENT_ERROR duplicate flag\r\n"},
        {"mg k z\r\n", "CLIENT_ERROR invalid flag\r\n"},
        {"mg k E5\r\n", "CLIENT_ERROR invalid flag\r\n"},  // not in 1.6.18
        {"mg k Nx\r\n", "CLIENT_ERROR bad token in command line format\r\n"},
        {"mg k T\r\n", "CLIENT_ERROR bad token in command line format\r\n"},
        {"mg k T99999999999\r\n", "CLIENT_ERROR bad token in command line format\r\n"},
        {"mg k Fx\r\n", "CLIENT_ERROR bad command line format\r\n"},
        {"mg k Tx Fx\r\n", "CLIENT_ERROR bad token in command line format\r\n"},
        {"mg k C-1\r\n", "CLIENT_ERROR bad token in command line format\r\n"},
        {"mg k MEE\r\n", "CLIENT_ERROR incorrect length for M token\r\n"},
        {"mg k Jx\r\n", "CLIENT_ERROR invalid numeric initial value\r\n"},
        {"mg k D-1\r\n", "CLIENT_ERROR invalid numeric delta value\r\n"},
        {"md k x\r\n", "CLIENT_ERROR invalid or duplicate flag\r\n"},
        {"ma k Mx\r\n", "CLIENT_ERROR invalid mode for ma M token\r\n"},
        {"ma k MS\r\n", "CLIENT_ERROR invalid mode for ma M token\r\n"},
        {"mg k O123456789012345678901234567890123\r\n", "CLIENT_ERROR opaque token too long\r\n"},
        {"md k O123456789012345678901234567890123\r\n", "CLIENT_ERROR opaque token too long\r\n"},
    };
    for (const auto& [line, error] : cases) {
        auto r = parse(line);
        EXPECT_EQ(r.outcome, TextOutcome::Error) << line;
        EXPECT_EQ(r.errorLine, error) << line;
        EXPECT_EQ(r.consumed, std::string_view(line).size()) << line;
    }
    EXPECT_EQ(parse("mg " + std::string(251, 'k') + " v\r\n").errorLine,
              "CLIENT_ERROR bad command line format\r\n");
    EXPECT_EQ(parse("mg k O1234567890123456789012345678901\r\n").outcome, TextOutcome::Ok);
}

TEST(TextRequest, MetaFlagCountIsLimitedAsInMemcached) {
    // Distinct flags (a repeated letter is an error of its own).
    auto flags = [](std::size_t n) {
        const char* letters[] = {"k", "s",  "t", "c",  "f",  "h",  "u",  "q", "l",
                                 "I", "O1", "P", "L1", "T1", "N1", "R1", "v", "C1"};
        std::string out;
        for (std::size_t i = 0; i < n; ++i) {
            out += std::string(" ") + letters[i];
        }
        return out;
    };
    EXPECT_EQ(parse("mg k" + flags(17) + "\r\n").outcome, TextOutcome::Ok);
    EXPECT_EQ(parse("mg k" + flags(18) + "\r\n").errorLine,
              "CLIENT_ERROR options flags are too long\r\n");
    EXPECT_EQ(parse("md k" + flags(18) + "\r\n").errorLine,
              "CLIENT_ERROR options flags too long\r\n");
    EXPECT_EQ(parse("ms k 1" + flags(16) + "\r\nx\r\n").outcome, TextOutcome::Ok);
    auto tooMany = parse("ms k 1" + flags(17) + "\r\nx\r\n");  // refused before the length
    EXPECT_EQ(tooMany.errorLine, "CLIENT_ERROR options flags too long\r\n");
    EXPECT_EQ(tooMany.consumed, ("ms k 1" + flags(17) + "\r\n").size());
}

TEST(TextRequest, MetaSetWaitsForItsDataBlock) {
    const std::string full = "ms k 3 T10 F5 C99 MA I c k O1 q\r\nabc\r\n";
    for (std::size_t n = 0; n < full.size(); ++n) {
        EXPECT_EQ(parse(full.substr(0, n)).outcome, TextOutcome::Incomplete) << n;
    }
    const std::string pipelined = full + "mn\r\n";  // the command's views point into it
    auto r = parse(pipelined);
    ASSERT_EQ(r.outcome, TextOutcome::Ok);
    EXPECT_EQ(r.consumed, full.size());
    EXPECT_EQ(r.command.verb, TextVerb::MetaSet);
    EXPECT_EQ(r.command.value, "abc");
    const MetaRequest& m = r.command.meta;
    EXPECT_EQ(m.ttl, 10);
    EXPECT_EQ(m.clientFlags, 5u);
    EXPECT_EQ(m.compareCas, 99u);
    EXPECT_EQ(m.mode, 'A');
    EXPECT_TRUE(m.invalidate);
    EXPECT_TRUE(m.quiet);
    EXPECT_EQ(parse("ms k 0\r\n\r\n").command.value, "");
}

// Refused after its length was read, an ms swallows its data block
// (unchecked); refused before, it owes none (the block is then a line).
TEST(TextRequest, MetaSetErrorsSwallowTheDataBlockOnlyOnceTheLengthIsRead) {
    const std::pair<const char*, const char*> swallowing[] = {
        {"ms k 2 Z\r\n", "CLIENT_ERROR invalid flag\r\n"},
        {"ms k 2 v v\r\n", "CLIENT_ERROR duplicate flag\r\n"},
        {"ms k 2 MX\r\n", "CLIENT_ERROR invalid mode for ms M token\r\n"},
        {"ms k 2 Fx\r\n", "CLIENT_ERROR bad command line format\r\n"},
        {"ms !!!! 2 b\r\n", "CLIENT_ERROR error decoding key\r\n"},
        {"ms k 2 O123456789012345678901234567890123\r\n", "CLIENT_ERROR opaque token too long\r\n"},
        {"ms k 2 E1\r\n", "CLIENT_ERROR invalid flag\r\n"},
    };
    for (const auto& [line, error] : swallowing) {
        const std::string input = std::string(line) + "xyzw";  // not even a CRLF: unchecked
        EXPECT_EQ(parse(std::string(line) + "xy").outcome, TextOutcome::Incomplete) << line;
        auto r = parse(input + "mn\r\n");
        EXPECT_EQ(r.outcome, TextOutcome::Error) << line;
        EXPECT_EQ(r.errorLine, error) << line;
        EXPECT_EQ(r.consumed, input.size()) << line;
    }
    const std::pair<std::string, const char*> lineOnly[] = {
        {"ms\r\n", "ERROR\r\n"},
        {"ms k\r\n", "CLIENT_ERROR bad command line format\r\n"},
        {"ms k x\r\n", "CLIENT_ERROR bad command line format\r\n"},
        {"ms k -1\r\n", "CLIENT_ERROR bad command line format\r\n"},
        {"ms k 2147483647\r\n", "CLIENT_ERROR bad command line format\r\n"},
        {"ms " + std::string(251, 'k') + " 1\r\n", "CLIENT_ERROR bad command line format\r\n"},
    };
    for (const auto& [line, error] : lineOnly) {
        auto r = parse(line + "ab\r\n");
        EXPECT_EQ(r.outcome, TextOutcome::Error) << line;
        EXPECT_EQ(r.errorLine, error) << line;
        EXPECT_EQ(r.consumed, line.size()) << line;
    }
    auto chunk = parse("ms k 2\r\nabc\r\n");
    EXPECT_EQ(chunk.errorLine, "CLIENT_ERROR bad data chunk\r\n");
    EXPECT_EQ(chunk.consumed, 12u);  // as memcached: the stray "\n" is a line of its own
    TextLimits limits;
    limits.maxValueLength = 10;
    EXPECT_EQ(parse("ms k 11 Z\r\n", limits).discard, 13u);  // refused, swallowed
}

TEST(TextRequest, MetaArithmeticDeleteNoopAndDebug) {
    auto ma = parse("ma k N0 J10 D5 MD v t c\r\n");
    ASSERT_EQ(ma.outcome, TextOutcome::Ok);
    EXPECT_EQ(ma.command.meta.initial, 10u);
    EXPECT_EQ(ma.command.meta.delta, 5u);
    EXPECT_EQ(ma.command.meta.mode, 'D');
    EXPECT_EQ(ma.command.meta.vivifyTtl, 0);
    EXPECT_EQ(parse("ma k\r\n").command.meta.delta, 1u);
    auto md = parse("md k C12 I T30 q k O9\r\n");
    ASSERT_EQ(md.outcome, TextOutcome::Ok);
    EXPECT_EQ(md.command.meta.compareCas, 12u);
    EXPECT_TRUE(md.command.meta.invalidate);
    EXPECT_EQ(parse("mn\r\n").command.verb, TextVerb::MetaNoop);
    EXPECT_EQ(parse("mn with arguments\r\n").outcome, TextOutcome::Ok);  // memcached ignores them
    auto me = parse("me k\r\n");
    ASSERT_EQ(me.outcome, TextOutcome::Ok);
    EXPECT_EQ(me.command.verb, TextVerb::MetaDebug);
    EXPECT_EQ(me.command.meta.key, "k");
}

TEST(TextRequest, StatsCachedumpTakesAClassAndALimit) {
    auto r = parse("stats cachedump 1 100\r\n");
    ASSERT_EQ(r.outcome, TextOutcome::Ok);
    EXPECT_EQ(r.command.statsGroup, "cachedump");
    EXPECT_EQ(r.command.dumpClass, 1u);
    EXPECT_EQ(r.command.dumpLimit, 100u);
    EXPECT_EQ(parse("stats cachedump 63 0 extra\r\n").outcome, TextOutcome::Ok);
    EXPECT_EQ(parse("stats cachedump\r\n").errorLine, "CLIENT_ERROR bad command line\r\n");
    EXPECT_EQ(parse("stats cachedump 1\r\n").errorLine, "CLIENT_ERROR bad command line\r\n");
    EXPECT_EQ(parse("stats cachedump x 0\r\n").errorLine,
              "CLIENT_ERROR bad command line format\r\n");
    EXPECT_EQ(parse("stats cachedump 64 0\r\n").errorLine, "CLIENT_ERROR Illegal slab id\r\n");
    EXPECT_EQ(parse("stats conns\r\n").command.statsGroup, "conns");
}

TEST(TextRequest, GarbageMetaLinesNeverCrash) {
    const std::string pieces[] = {"mg", "ms", "md", "ma", "me", "mn", "b",  "q",    "O",    "T-1",
                                  "N",  "C",  "M",  "MX", "2",  "-2", "!!", "YQ==", "\x80", "="};
    std::uint32_t seed = 7;
    for (int i = 0; i < 5000; ++i) {
        std::string line;
        const int n = 1 + i % 7;
        for (int j = 0; j < n; ++j) {
            seed = seed * 1664525u + 1013904223u;
            line += pieces[(seed >> 16) % std::size(pieces)] + " ";
        }
        const std::string input = line + "\r\nab\r\n";
        auto r = parse(input);
        EXPECT_LE(r.consumed, input.size());
        if (r.outcome == TextOutcome::Error) {
            EXPECT_TRUE(r.errorLine.ends_with("\r\n"));
        }
    }
}

}  // namespace
}  // namespace kvexec::protocol
