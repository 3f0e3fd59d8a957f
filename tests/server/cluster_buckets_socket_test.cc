// Two buckets on a cluster of two kvexec-server nodes with one replica
// (--bucket default --bucket travel): each bucket is a cluster of its own
// in etcd (/kvexec/NAME) on the same nodes, with its own map, streams and
// durable writes. The same key is a different document in each, both on
// the active and on the replica; when a node dies, both buckets fail it
// over and keep every acknowledged write, and a client on the second
// bucket is pushed that bucket's maps.
#include <gtest/gtest.h>

#include <string>

#include "protocol/binary_response.h"
#include "protocol/client_codec.h"
#include "server/cluster_processes.h"

namespace kvexec::server::test {
namespace {

using protocol::DurabilityLevel;
using protocol::Opcode;
using protocol::Status;

constexpr std::uint16_t kVBuckets = 16;
constexpr auto kSuccess = static_cast<std::uint16_t>(Status::Success);
const std::vector<std::string> kBuckets = {"default", "travel"};

class ClusterBucketsSocketTest : public ::testing::Test {
  protected:
    // Writes `key` durably in each bucket (its name as the value) and
    // checks that the copy at `slot` of its chain holds it.
    void writeInEachBucket(const std::string& key, DurabilityLevel level) {
        for (const auto& bucket : kBuckets) {
            cluster_.selectBucket(bucket);
            ASSERT_TRUE(cluster_.waitForMap()) << bucket << ": no map of every node";
            const auto written = cluster_.writeOnceReplicated(key, bucket + "-" + key, level);
            ASSERT_TRUE(written.has_value()) << bucket;
            ASSERT_EQ(written->status, kSuccess) << bucket;
        }
    }
    // The copy at `slot` of the key's chain in each bucket holds that
    // bucket's value.
    void expectEachBucketsCopy(const std::string& key, std::size_t slot) {
        for (const auto& bucket : kBuckets) {
            cluster_.selectBucket(bucket);
            const auto copy = cluster_.readWhenItHolds(key, slot, bucket + "-" + key);
            ASSERT_TRUE(copy.has_value()) << bucket << " slot " << slot;
            EXPECT_EQ(copy->status, kSuccess) << bucket << " slot " << slot;
            EXPECT_EQ(copy->value, bucket + "-" + key) << bucket << " slot " << slot;
        }
    }

    ClusterProcesses cluster_{
        2, 1, kVBuckets, {"--bucket", "default", "--bucket", "travel", "--failover-timeout", "2"}};
};

TEST_F(ClusterBucketsSocketTest, EachBucketReplicatesItsOwnDocuments) {
    for (const auto& bucket : kBuckets) {
        cluster_.selectBucket(bucket);
        ASSERT_TRUE(cluster_.waitForMap()) << bucket;
        EXPECT_EQ(cluster_.config(cluster_.node(0).port()).value("name", ""), bucket);
    }
    for (int i = 0; i < 8; ++i) {
        writeInEachBucket("key-" + std::to_string(i), DurabilityLevel::Majority);
    }
    for (int i = 0; i < 8; ++i) {
        expectEachBucketsCopy("key-" + std::to_string(i), 0);
        expectEachBucketsCopy("key-" + std::to_string(i), 1);
    }
    EXPECT_TRUE(cluster_.stopAll());
}

TEST_F(ClusterBucketsSocketTest, BothBucketsFailADeadNodeOverAndKeepItsWrites) {
    for (int i = 0; i < 8; ++i) {
        writeInEachBucket("key-" + std::to_string(i), DurabilityLevel::Majority);
    }
    // A client of n1 on travel that asked for map pushes.
    std::string features;
    for (const auto feature : {protocol::Feature::Xerror, protocol::Feature::Duplex,
                               protocol::Feature::ClustermapChangeNotification}) {
        protocol::appendBe16(features, static_cast<std::uint16_t>(feature));
    }
    Client subscribed(cluster_.node(1).port());
    ASSERT_EQ(subscribed.call(request(Opcode::Hello, "push", {}, features))->status, kSuccess);
    ASSERT_EQ(subscribed.call(request(Opcode::SelectBucket, "travel"))->status, kSuccess);

    cluster_.kill(0);
    for (const auto& bucket : kBuckets) {
        cluster_.selectBucket(bucket);
        ASSERT_TRUE(cluster_.waitForMap({{1}})) << bucket << ": n0 was not failed over";
    }
    for (int i = 0; i < 8; ++i) {
        expectEachBucketsCopy("key-" + std::to_string(i), 0);  // all on n1 now
    }
    // Travel's maps are pushed to it, named travel, up to the one of n1
    // alone.
    for (;;) {
        const auto packet = subscribed.readResponse();
        ASSERT_TRUE(packet) << "no map of travel without n0 was pushed";
        ASSERT_EQ(packet->opcode, 0x01);  // ClustermapChangeNotification
        EXPECT_EQ(packet->key, "travel");
        const auto config = nlohmann::json::parse(packet->value);
        EXPECT_EQ(config.value("name", ""), "travel");
        if (config["vBucketServerMap"]["serverList"].size() == 1) {
            break;
        }
    }
    EXPECT_TRUE(cluster_.stopAll());
}

}  // namespace
}  // namespace kvexec::server::test
