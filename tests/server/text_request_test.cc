// The text protocol parser: every verb, noreply, data blocks, and the
// errors memcached answers with.
#include <gtest/gtest.h>

#include "server/protocol/text_request.h"

namespace kvexec::server::protocol {
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

TEST(TextRequest, ValueOverTheLimitIsFatal) {
    TextLimits limits;
    limits.maxValueLength = 10;
    auto r = parse("set k 0 0 11\r\n", limits);
    EXPECT_EQ(r.outcome, TextOutcome::Fatal);
    EXPECT_EQ(r.errorLine, "SERVER_ERROR object too large for cache\r\n");
}

}  // namespace
}  // namespace kvexec::server::protocol
