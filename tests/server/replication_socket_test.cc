// Replication between kvexec-server processes (issue 26): a private etcd
// and two nodes with --replicas 1. Every vBucket's active streams to its
// replica over DCP; durable writes commit once the replica holds them, and
// GET_REPLICA reads the replica's copy, with the same value and CAS.
// A stopped replica (SIGSTOP) makes durable writes ambiguous at their
// deadline; resumed, new ones succeed.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <thread>

#include "protocol/binary_response.h"
#include "protocol/client_codec.h"
#include "protocol/keys.h"
#include "server/cluster_processes.h"

namespace kvexec::server::test {
namespace {

using protocol::Opcode;
using protocol::Status;
using Clock = std::chrono::steady_clock;

constexpr std::uint16_t kVBuckets = 16;
constexpr auto kSuccess = static_cast<std::uint16_t>(Status::Success);
constexpr auto kAmbiguous = static_cast<std::uint16_t>(Status::SyncWriteAmbiguous);
constexpr auto kNotMyVbucket = static_cast<std::uint16_t>(Status::NotMyVbucket);

class ReplicationSocketTest : public ::testing::Test {
  protected:
    void SetUp() override {
        ASSERT_TRUE(cluster_.waitForMap()) << "the nodes never agreed on a map of both";
    }
    void TearDown() override { EXPECT_TRUE(cluster_.stopAll()); }

    std::uint16_t portOf(const std::string& key, std::size_t slot) {
        return cluster_.portOf(key, slot);
    }
    std::optional<BinaryResponse> writeOnceReplicated(const std::string& key,
                                                      const std::string& value,
                                                      protocol::DurabilityLevel level,
                                                      std::uint32_t expiry = 0) {
        return cluster_.writeOnceReplicated(key, value, level, expiry);
    }
    // The replica's copy once it holds `value`: the active acknowledges a
    // Majority write when the replica holds its prepare, and the commit
    // follows on the stream.
    std::optional<BinaryResponse> replicaRead(const std::string& key, const std::string& value) {
        return cluster_.readWhenItHolds(key, 1, value);
    }

    // The high seqno of the key's vBucket on the node at `slot` of its
    // chain (OBSERVE_SEQNO); 0 if it does not answer.
    std::uint64_t highSeqno(const std::string& key, std::size_t slot) {
        RawRequest observe = request(Opcode::ObserveSeqno, {}, {}, std::string(8, '\0'));
        observe.vbucket = protocol::vbucketOfKey(key, kVBuckets);
        Client client(portOf(key, slot));
        const auto answer = client.call(observe);
        if (!answer || answer->status != kSuccess || answer->value.size() < 27) {
            return 0;
        }
        return protocol::readBe64(answer->value, 19);  // format, vb, uuid, persisted, current
    }

    ClusterProcesses cluster_{2, 1, kVBuckets};
};

TEST_F(ReplicationSocketTest, DurableWritesAtEveryLevelReachTheReplicaWithTheirCas) {
    const protocol::DurabilityLevel levels[] = {
        protocol::DurabilityLevel::Majority, protocol::DurabilityLevel::MajorityAndPersistOnMaster,
        protocol::DurabilityLevel::PersistToMajority};
    for (int i = 0; i < 24; ++i) {
        const std::string key = "key-" + std::to_string(i);
        const auto written = writeOnceReplicated(key, "value-" + key, levels[i % 3]);
        ASSERT_TRUE(written.has_value()) << key;
        ASSERT_EQ(written->status, kSuccess) << key;
        const auto copy = replicaRead(key, "value-" + key);
        ASSERT_TRUE(copy.has_value()) << key;
        ASSERT_EQ(copy->status, kSuccess) << key;
        EXPECT_EQ(copy->value, "value-" + key);
        EXPECT_EQ(copy->cas, written->cas) << key;
    }
}

TEST_F(ReplicationSocketTest, TheActiveRefusesReplicaReadsAndTheReplicaRefusesWrites) {
    const std::string key = "k";
    ASSERT_EQ(writeOnceReplicated(key, "v", protocol::DurabilityLevel::Majority)->status, kSuccess);
    Client replica(portOf(key, 1));
    RawRequest set = request(Opcode::Set, key, std::string(8, '\0'), "w");
    EXPECT_EQ(replica.call(set)->status, kNotMyVbucket);
    Client active(portOf(key, 0));
    RawRequest get = request(Opcode::GetReplica, key);
    EXPECT_EQ(active.call(get)->status, kNotMyVbucket);
}

TEST_F(ReplicationSocketTest, AStoppedReplicaMakesMajorityWritesAmbiguousUntilItResumes) {
    const std::string key = "paused";
    ASSERT_EQ(writeOnceReplicated(key, "before", protocol::DurabilityLevel::Majority)->status,
              kSuccess);
    ServerProcess& replica = cluster_.node(cluster_.indexOf(portOf(key, 1)));
    ASSERT_EQ(::kill(replica.pid(), SIGSTOP), 0);
    ASSERT_TRUE(waitUntilStopped(replica.pid()));
    for (const auto level :
         {protocol::DurabilityLevel::Majority, protocol::DurabilityLevel::PersistToMajority}) {
        Client client(portOf(key, 0));
        const auto answer = client.call(durableSet(key, "during", level, 300, kVBuckets));
        ASSERT_TRUE(answer.has_value());
        EXPECT_EQ(answer->status, kAmbiguous);
    }
    ASSERT_EQ(::kill(replica.pid(), SIGCONT), 0);
    const auto after = writeOnceReplicated(key, "after", protocol::DurabilityLevel::Majority);
    ASSERT_TRUE(after.has_value());
    EXPECT_EQ(after->status, kSuccess);
    EXPECT_EQ(replicaRead(key, "after")->value, "after");
}

// A read that finds a document expired on its active deletes it there;
// the deletion reaches the replica (as DCP_EXPIRATION, which the nodes
// enable), which ends at the active's seqno.
TEST_F(ReplicationSocketTest, AnExpiredDocumentIsDeletedOnItsReplicaToo) {
    const std::string key = "expiring";
    const auto written =
        writeOnceReplicated(key, "v", protocol::DurabilityLevel::Majority, /*expiry=*/1);
    ASSERT_TRUE(written.has_value());
    ASSERT_EQ(written->status, kSuccess);
    const auto seqnoOfWrite = highSeqno(key, 0);
    const auto deadline = Clock::now() + kSocketDeadline;
    bool expired = false;
    while (!expired && Clock::now() < deadline) {
        Client active(portOf(key, 0));
        const auto answer = active.call(request(Opcode::Get, key));
        expired = answer && answer->status == static_cast<std::uint16_t>(Status::KeyNotFound);
        if (!expired) {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));  // expiry is in seconds
        }
    }
    ASSERT_TRUE(expired) << "the document never expired";
    const auto seqnoOfExpiry = highSeqno(key, 0);
    ASSERT_GT(seqnoOfExpiry, seqnoOfWrite) << "the read deleted nothing";
    while (highSeqno(key, 1) != seqnoOfExpiry && Clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    EXPECT_EQ(highSeqno(key, 1), seqnoOfExpiry) << "the replica never got the expiry";
}

// With --cluster the map owns the vBucket states: SET_VBUCKET is refused
// (NOT_SUPPORTED, not applied), and GET_VBUCKET answers what the map made
// of each node.
TEST_F(ReplicationSocketTest, SetVbucketIsRefusedWhereTheClusterMapOwnsTheStates) {
    const std::string key = "k";
    ASSERT_EQ(writeOnceReplicated(key, "v", protocol::DurabilityLevel::Majority)->status, kSuccess);
    const auto vb = protocol::vbucketOfKey(key, kVBuckets);
    RawRequest setReplica = request(Opcode::SetVbucket, {}, std::string(1, '\x02'));
    setReplica.vbucket = vb;
    RawRequest get = request(Opcode::GetVbucket);
    get.vbucket = vb;
    Client active(portOf(key, 0));
    const auto refused = active.call(setReplica);
    ASSERT_TRUE(refused.has_value());
    EXPECT_EQ(refused->status, static_cast<std::uint16_t>(Status::NotSupported));
    for (const auto& [slot, state] : {std::pair{0, 1u}, std::pair{1, 2u}}) {
        Client node(portOf(key, slot));
        const auto answer = node.call(get);
        ASSERT_TRUE(answer.has_value());
        ASSERT_EQ(answer->status, kSuccess);
        ASSERT_EQ(answer->value.size(), 4u);
        EXPECT_EQ(protocol::readBe32(answer->value, 0), state) << "chain slot " << slot;
    }
}

// A replica killed while its active takes writes comes back on the same
// data directory, resumes its streams from what it persisted and catches
// up: it ends with every document its active has.
TEST_F(ReplicationSocketTest, AReplicaKilledAndRestartedCatchesUp) {
    std::vector<std::string> keys;
    for (int i = 0; i < 40; ++i) {
        keys.push_back("key-" + std::to_string(i));
        ASSERT_EQ(
            writeOnceReplicated(keys.back(), "one", protocol::DurabilityLevel::Majority)->status,
            kSuccess);
    }
    cluster_.kill(1);
    // While it is down, node 0's actives take plain writes.
    const auto alive = cluster_.node(0).port();
    std::vector<std::string> written;
    for (const auto& key : keys) {
        if (portOf(key, 0) == alive) {
            Client client(alive);
            RawRequest set = request(Opcode::Set, key, std::string(8, '\0'), "two");
            ASSERT_EQ(client.call(set)->status, kSuccess) << key;
            written.push_back(key);
        }
    }
    ASSERT_FALSE(written.empty());
    cluster_.restart(1);
    ASSERT_TRUE(cluster_.waitForMap());
    for (const auto& key : written) {
        const auto copy = replicaRead(key, "two");
        ASSERT_TRUE(copy.has_value()) << key;
        EXPECT_EQ(copy->value, "two") << key << " did not catch up";
    }
    // The other way round, the restarted node's actives may have lost what
    // they had not persisted (a Majority write survives the loss of its
    // active only through a failover, issue 27; here the active came back
    // first); their replicas roll back to agree with them.
    for (const auto& key : keys) {
        if (portOf(key, 0) == alive) {
            continue;
        }
        Client active(portOf(key, 0));
        const auto original = active.call(request(Opcode::Get, key));
        ASSERT_TRUE(original.has_value()) << key;
        if (original->status != kSuccess) {
            continue;  // lost with the crash (never persisted): nothing to compare
        }
        const auto copy = replicaRead(key, original->value);
        ASSERT_TRUE(copy.has_value()) << key;
        EXPECT_EQ(copy->value, original->value) << key;
        EXPECT_EQ(copy->cas, original->cas) << key;
    }
}

}  // namespace
}  // namespace kvexec::server::test
