// Path syntax (docs/SubDocument.md, "Path").
#include <gtest/gtest.h>

#include "subdoc/path.h"

namespace kvexec::subdoc {
namespace {

PathComponent key(std::string k) {
    return {false, 0, std::move(k)};
}
PathComponent index(std::int64_t i) {
    return {true, i, {}};
}

TEST(Path, EmptyPathIsTheRoot) {
    auto p = parsePath("");
    EXPECT_EQ(p.status, Status::Success);
    EXPECT_TRUE(p.components.empty());
}

TEST(Path, KeysAndIndexes) {
    auto p = parsePath("a.b[2].c");
    ASSERT_EQ(p.status, Status::Success);
    EXPECT_EQ(p.components, (std::vector{key("a"), key("b"), index(2), key("c")}));
}

TEST(Path, NestedIndexesAndRootIndex) {
    auto p = parsePath("[0][1].x");
    ASSERT_EQ(p.status, Status::Success);
    EXPECT_EQ(p.components, (std::vector{index(0), index(1), key("x")}));
}

TEST(Path, MinusOneIsTheLastElement) {
    auto p = parsePath("a[-1]");
    ASSERT_EQ(p.status, Status::Success);
    EXPECT_EQ(p.components.back(), index(-1));
}

TEST(Path, OtherNegativeIndexesAreInvalid) {
    EXPECT_EQ(parsePath("a[-2]").status, Status::PathInvalid);
}

TEST(Path, BackticksQuoteMetaCharacters) {
    auto p = parsePath("`dot.ted.field`.subfield");
    ASSERT_EQ(p.status, Status::Success);
    EXPECT_EQ(p.components, (std::vector{key("dot.ted.field"), key("subfield")}));
    EXPECT_EQ(parsePath("`a[0]`").components, (std::vector{key("a[0]")}));
}

TEST(Path, DoubledBacktickIsALiteralBacktick) {
    auto p = parsePath("`back``tick``field`");
    ASSERT_EQ(p.status, Status::Success);
    EXPECT_EQ(p.components, (std::vector{key("back`tick`field")}));
}

TEST(Path, MalformedPathsAreInvalid) {
    for (const char* bad : {".a", "a.", "a..b", "a[", "a[]", "a[x]", "a[1", "a]", "a[0]b", "a.[0]",
                            "`unterminated", "a[1.5]", "a[ 1]"}) {
        EXPECT_EQ(parsePath(bad).status, Status::PathInvalid) << bad;
    }
}

TEST(Path, IndexBeyondInt64IsInvalid) {
    EXPECT_EQ(parsePath("a[99999999999999999999]").status, Status::PathInvalid);
}

TEST(Path, ThirtyTwoComponentsFitThirtyThreeDoNot) {
    std::string path = "a";
    for (int i = 1; i < 32; ++i) {
        path += ".a";
    }
    EXPECT_EQ(parsePath(path).status, Status::Success);
    EXPECT_EQ(parsePath(path + ".a").status, Status::PathTooBig);
    EXPECT_EQ(parsePath(path + "[0]").status, Status::PathTooBig);
}

TEST(Path, LongerThan1024BytesIsTooBig) {
    EXPECT_EQ(parsePath(std::string(1025, 'a')).status, Status::PathTooBig);
    EXPECT_EQ(parsePath(std::string(1024, 'a')).status, Status::Success);
}

TEST(XattrPath, KeyRunsToTheFirstDotOrBracket) {
    auto p = parseXattrPath("_sync.rev[0]");
    ASSERT_EQ(p.status, Status::Success);
    EXPECT_EQ(p.components, (std::vector{key("_sync"), key("rev"), index(0)}));
    EXPECT_EQ(xattrKeyOf("meta[1].x"), "meta");
}

TEST(XattrPath, KeyTakesNoBacktickEscapes) {
    auto p = parseXattrPath("a`b.c");
    ASSERT_EQ(p.status, Status::Success);
    EXPECT_EQ(p.components.front(), key("a`b"));
}

TEST(XattrPath, KeyNamingRules) {
    EXPECT_TRUE(isValidXattrKey("meta"));
    EXPECT_TRUE(isValidXattrKey("_sync"));
    EXPECT_TRUE(isValidXattrKey("$document"));
    EXPECT_TRUE(isValidXattrKey(std::string(15, 'k')));
    EXPECT_FALSE(isValidXattrKey(std::string(16, 'k')));
    EXPECT_FALSE(isValidXattrKey(""));
    EXPECT_FALSE(isValidXattrKey("_"));
    EXPECT_FALSE(isValidXattrKey("$"));
    EXPECT_FALSE(isValidXattrKey("#hash"));
    EXPECT_FALSE(isValidXattrKey("\x01key"));
    EXPECT_FALSE(isValidXattrKey("bad\xff"));
    EXPECT_EQ(parseXattrPath(".x").status, Status::XattrInvalid);
    EXPECT_EQ(parseXattrPath("").status, Status::XattrInvalid);
}

TEST(XattrPath, SystemAndVirtualKeys) {
    EXPECT_TRUE(isSystemXattr("_sync"));
    EXPECT_FALSE(isSystemXattr("meta"));
    EXPECT_TRUE(isVirtualXattr("$XTOC"));
}

}  // namespace
}  // namespace kvexec::subdoc
