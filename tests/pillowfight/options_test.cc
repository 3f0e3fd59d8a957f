// kvexec-pillowfight's command line: cbc-pillowfight's names and meanings,
// and clear errors for bad input.
#include <gtest/gtest.h>

#include "pillowfight/options.h"

namespace kvexec::pillowfight {
namespace {

using protocol::DurabilityLevel;

Options parse(std::vector<std::string> args) {
    bool help = false;
    return parseOptions(args, help);
}

std::string errorOf(std::vector<std::string> args) {
    try {
        parse(std::move(args));
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "no error";
}

TEST(PillowfightOptions, TheSeedsCommandLineMeansWhatCbcPillowfightMeans) {
    const Options o = parse({"-U", "couchbase://127.0.0.1:12000/default", "-u", "Administrator",
                             "-P", "asdasd", "--batch-size=1", "--num-items=3200000",
                             "--min-size=512", "--max-size=512", "--random-body", "--set-pct=100",
                             "--no-population", "--durability=persist_to_majority",
                             "--num-threads=2", "--sequential", "--num-cycles=100"});
    EXPECT_EQ(o.host, "127.0.0.1");
    EXPECT_EQ(o.port, 12000);
    EXPECT_EQ(o.bucket, "default");
    EXPECT_EQ(o.user, "Administrator");
    EXPECT_EQ(o.password, "asdasd");
    EXPECT_EQ(o.batchSize, 1u);
    EXPECT_EQ(o.numItems, 3200000u);
    EXPECT_EQ(o.minSize, 512u);
    EXPECT_EQ(o.maxSize, 512u);
    EXPECT_TRUE(o.randomBody);
    EXPECT_EQ(o.setPercent, 100u);
    EXPECT_TRUE(o.noPopulation);
    EXPECT_EQ(o.durability, DurabilityLevel::PersistToMajority);
    EXPECT_EQ(o.threads, 2u);
    EXPECT_TRUE(o.sequential);
    EXPECT_EQ(o.numCycles, 100);
    EXPECT_EQ(o.clientCount(), 2u);  // one client per thread unless --connections
}

TEST(PillowfightOptions, ShortOptionsTakeAttachedOrSeparateValues) {
    const Options o = parse({"-t4", "-B", "10", "-I100", "-r", "0", "-c", "-1", "--connections",
                             "200", "-d", "majority", "--duration", "2.5"});
    EXPECT_EQ(o.threads, 4u);
    EXPECT_EQ(o.batchSize, 10u);
    EXPECT_EQ(o.numItems, 100u);
    EXPECT_EQ(o.setPercent, 0u);
    EXPECT_EQ(o.numCycles, -1);
    EXPECT_EQ(o.clientCount(), 200u);
    EXPECT_EQ(o.durability, DurabilityLevel::Majority);
    EXPECT_EQ(o.duration, std::chrono::milliseconds(2500));
}

TEST(PillowfightOptions, SpecDefaultsAndIpv6) {
    Options o = parse({"-U", "couchbase://localhost"});
    EXPECT_EQ(o.host, "localhost");
    EXPECT_EQ(o.port, 11210);
    EXPECT_EQ(o.bucket, "default");
    o = parse({"-U", "couchbase://[::1]:11999/travel?timeout=3"});
    EXPECT_EQ(o.host, "::1");
    EXPECT_EQ(o.port, 11999);
    EXPECT_EQ(o.bucket, "travel");
}

TEST(PillowfightOptions, EveryDurabilityLevelByItsName) {
    EXPECT_EQ(parseDurability("none"), std::nullopt);
    for (const auto level : {DurabilityLevel::Majority, DurabilityLevel::MajorityAndPersistOnMaster,
                             DurabilityLevel::PersistToMajority}) {
        EXPECT_EQ(parseDurability(durabilityName(level)), level);
    }
}

TEST(PillowfightOptions, SubdocAsInCbcPillowfightNeedsAndImpliesJsonValues) {
    Options o = parse({});
    EXPECT_FALSE(o.subdoc);
    EXPECT_FALSE(o.jsonValues);
    EXPECT_EQ(o.subdocPaths, 1u);
    o = parse({"--subdoc"});
    EXPECT_TRUE(o.subdoc);
    EXPECT_TRUE(o.jsonValues);  // the specs need JSON documents to act on
    o = parse({"-J"});
    EXPECT_TRUE(o.jsonValues);
    EXPECT_FALSE(o.subdoc);
    EXPECT_TRUE(parse({"--json-values"}).jsonValues);
    // cbc-pillowfight: giving --pathcount turns --subdoc on.
    o = parse({"--pathcount", "3"});
    EXPECT_TRUE(o.subdoc);
    EXPECT_EQ(o.subdocPaths, 3u);
    // --json still names the results file, not JSON values.
    o = parse({"--json", "out.json"});
    EXPECT_EQ(o.jsonPath, "out.json");
    EXPECT_FALSE(o.jsonValues);
}

TEST(PillowfightOptions, ACollectionIsScopeDotCollectionOverTheCouchbaseProtocol) {
    EXPECT_EQ(parse({}).collection, "");
    EXPECT_EQ(parse({"--collection", "app.orders"}).collection, "app.orders");
    EXPECT_NE(errorOf({"--collection", "orders"}).find("--collection"), std::string::npos);
    EXPECT_NE(errorOf({"--collection", "app.%x"}).find("--collection"), std::string::npos);
    EXPECT_NE(errorOf({"--collection", "a.b", "--protocol", "memcached"}).find("--collection"),
              std::string::npos);
}

TEST(PillowfightOptions, BadInputIsRefusedNamingTheOption) {
    EXPECT_NE(errorOf({"-t", "zero"}).find("-t"), std::string::npos);
    EXPECT_NE(errorOf({"--batch-size", "0"}).find("--batch-size"), std::string::npos);
    EXPECT_NE(errorOf({"--set-pct", "101"}).find("--set-pct"), std::string::npos);
    EXPECT_NE(errorOf({"-d", "always"}).find("--durability"), std::string::npos);
    EXPECT_NE(errorOf({"-m", "10", "-M", "5"}).find("--min-size"), std::string::npos);
    EXPECT_NE(errorOf({"--frobnicate"}).find("unknown option"), std::string::npos);
    EXPECT_NE(errorOf({"-B"}).find("needs a value"), std::string::npos);
    EXPECT_NE(errorOf({"-U", "http://host"}).find("couchbase://"), std::string::npos);
    EXPECT_NE(errorOf({"-U", "couchbase://host:99999"}).find("port"), std::string::npos);
    EXPECT_NE(errorOf({"--protocol", "memcached", "-d", "majority"}).find("--durability"),
              std::string::npos);
    EXPECT_NE(errorOf({"--sequential=yes"}).find("takes no value"), std::string::npos);
    EXPECT_NE(errorOf({"--subdoc=yes"}).find("takes no value"), std::string::npos);
    EXPECT_NE(errorOf({"--pathcount", "17"}).find("--pathcount"), std::string::npos);  // 16 specs
    EXPECT_NE(errorOf({"--pathcount", "0"}).find("--pathcount"), std::string::npos);
}

}  // namespace
}  // namespace kvexec::pillowfight
