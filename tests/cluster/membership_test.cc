// Who is in the cluster and who leads, from the keys etcd holds
// (cluster/membership.h), without etcd.
#include <gtest/gtest.h>

#include "cluster/membership.h"

namespace kvexec::cluster {
namespace {

KeyValue kv(std::string key, std::string value, std::int64_t modRevision = 1) {
    return KeyValue{std::move(key), std::move(value), modRevision, modRevision, 0};
}

TEST(MembershipTest, KeysLiveUnderTheRoot) {
    const ClusterKeys keys("/kvexec/c1");
    EXPECT_EQ(keys.all(), "/kvexec/c1/");
    EXPECT_EQ(keys.nodesPrefix(), "/kvexec/c1/nodes/");
    EXPECT_EQ(keys.node("n1"), "/kvexec/c1/nodes/n1");
    EXPECT_EQ(keys.leader(), "/kvexec/c1/leader");
    EXPECT_EQ(keys.map(), "/kvexec/c1/map");
}

TEST(MembershipTest, ReadsRegisteredNodesSortedAndTheLeader) {
    const ClusterKeys keys("/r");
    const Membership membership = readMembership(
        keys, {kv("/r/leader", "n2", 9), kv("/r/map", "{}"), kv("/r/nodes/n2", "127.0.0.1:2"),
               kv("/r/nodes/n1", "127.0.0.1:1"), kv("/r/nodes/", "nameless"), kv("/r/other", "x")});
    EXPECT_EQ(membership.nodes, (std::vector<std::string>{"n1", "n2"}));
    EXPECT_EQ(membership.leader, "n2");
    EXPECT_EQ(membership.leaderRevision, 9);
}

TEST(MembershipTest, NoLeaderKeyMeansNoLeader) {
    const Membership membership = readMembership(ClusterKeys("/r"), {kv("/r/nodes/n1", "a")});
    EXPECT_FALSE(membership.leader);
    EXPECT_EQ(membership.leaderRevision, 0);
}

TEST(MembershipTest, RoleComesFromTheLeaderKey) {
    Membership membership;
    membership.nodes = {"n1", "n2"};
    EXPECT_EQ(roleOf(membership, "n1"), Role::Candidate);
    membership.leader = "n1";
    EXPECT_EQ(roleOf(membership, "n1"), Role::Leader);
    EXPECT_EQ(roleOf(membership, "n2"), Role::Follower);
    // A leader whose registration is gone still holds the key until their
    // shared lease expires: nobody else can win yet.
    membership.nodes = {"n2"};
    EXPECT_EQ(roleOf(membership, "n2"), Role::Follower);
}

}  // namespace
}  // namespace kvexec::cluster
