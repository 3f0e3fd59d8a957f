// kvexec-server's --bucket: names as Couchbase accepts them, each once,
// where each bucket keeps its files, and each one's --memory-quota.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "server/server_config.h"

namespace kvexec::server {
namespace {

ServerConfig parse(const std::vector<std::string>& args) {
    bool help = false;
    return parseCommandLine(args, help);
}

TEST(BucketCommandLineTest, BucketsAreGivenOnceEachWithCouchbasesNames) {
    EXPECT_EQ(parse({}).buckets, std::vector<std::string>{"default"});
    EXPECT_EQ(parse({"--bucket", "b"}).buckets, std::vector<std::string>{"b"});
    EXPECT_EQ(parse({"--bucket", "travel-sample", "--bucket=b_2.x%"}).buckets,
              (std::vector<std::string>{"travel-sample", "b_2.x%"}));
    for (const std::string& bad :
         std::vector<std::string>{"", ".hidden", "a/b", "a b", std::string(101, 'x')}) {
        EXPECT_THROW(parse({"--bucket", bad}), std::invalid_argument) << bad;
    }
    EXPECT_NO_THROW(parse({"--bucket", std::string(100, 'x')}));
    EXPECT_THROW(parse({"--bucket", "a", "--bucket", "a"}), std::invalid_argument);
}

TEST(BucketCommandLineTest, TheMemoryQuotaIsInMebibytes) {
    EXPECT_EQ(parse({}).memoryQuotaMb, 256u);
    EXPECT_EQ(parse({"--memory-quota", "1024"}).memoryQuotaMb, 1024u);
    EXPECT_THROW(parse({"--memory-quota", "0"}), std::invalid_argument);
    EXPECT_THROW(parse({"--memory-quota", "lots"}), std::invalid_argument);
}

TEST(BucketCommandLineTest, OneBucketKeepsTheDataDirAndSeveralASubdirectoryEach) {
    const ServerConfig one = parse({"--data-dir", "/d", "--bucket", "a"});
    EXPECT_EQ(bucketDataDir(one, "a"), "/d");
    const ServerConfig two = parse({"--data-dir", "/d", "--bucket", "a", "--bucket", "b"});
    EXPECT_EQ(bucketDataDir(two, "a"), "/d/a");
    EXPECT_EQ(bucketDataDir(two, "b"), "/d/b");
}

}  // namespace
}  // namespace kvexec::server
