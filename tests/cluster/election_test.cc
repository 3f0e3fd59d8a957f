// Registration and leader election (cluster/election.h) against a real
// etcd: of two candidates one wins; when the winner's lease goes, the
// other wins.
#include <gtest/gtest.h>

#include "cluster/election.h"
#include "etcd_fixture.h"
#include "watch_recorder.h"

namespace kvexec::cluster::test {
namespace {

class ElectionTest : public EtcdTest {
  protected:
    void SetUp() override {
        EtcdTest::SetUp();
        if (HasFatalFailure()) {
            return;
        }
        client_ = std::make_unique<EtcdClient>(etcd().endpoint());
    }

    // A member with a lease of its own, registered.
    ClusterMember join(const std::string& name, std::chrono::seconds ttl) {
        ClusterMember member(*client_, keys_, name, client_->grantLease(ttl));
        std::string address = "127.0.0.1:";
        address += std::to_string(11210 + members_++);
        member.registerNode(address);
        return member;
    }

    EtcdClient& client() { return *client_; }
    const ClusterKeys keys_{"/kvexec/test"};

  private:
    std::unique_ptr<EtcdClient> client_;
    int members_ = 0;
};

TEST_F(ElectionTest, RegisteredNodesAreMembers) {
    join("n2", std::chrono::seconds(60));
    join("n1", std::chrono::seconds(60));
    const Membership membership = readMembership(keys_, client().getPrefix(keys_.all()));
    EXPECT_EQ(membership.nodes, (std::vector<std::string>{"n1", "n2"}));
    EXPECT_FALSE(membership.leader);
    EXPECT_EQ(client().get(keys_.node("n1"))->value, "127.0.0.1:11211");
}

TEST_F(ElectionTest, OfTwoCandidatesExactlyOneWins) {
    ClusterMember first = join("n1", std::chrono::seconds(60));
    ClusterMember second = join("n2", std::chrono::seconds(60));
    EXPECT_TRUE(first.campaign());
    EXPECT_FALSE(second.campaign());
    const Membership membership = second.membership();
    EXPECT_EQ(membership.leader, "n1");
    EXPECT_GT(membership.leaderRevision, 0);
    EXPECT_EQ(roleOf(membership, "n1"), Role::Leader);
    EXPECT_EQ(roleOf(membership, "n2"), Role::Follower);
}

TEST_F(ElectionTest, CampaignAgainKeepsTheWinnersTerm) {
    ClusterMember first = join("n1", std::chrono::seconds(60));
    ASSERT_TRUE(first.campaign());
    const std::int64_t term = first.membership().leaderRevision;
    EXPECT_TRUE(first.campaign());
    EXPECT_EQ(first.membership().leaderRevision, term);
}

TEST_F(ElectionTest, RevokedLeaderHandsOverToTheOther) {
    const std::int64_t lease = client().grantLease(std::chrono::seconds(60));
    ClusterMember first(client(), keys_, "n1", lease);
    first.registerNode("127.0.0.1:1");
    ClusterMember second = join("n2", std::chrono::seconds(60));
    ASSERT_TRUE(first.campaign());
    const std::int64_t firstTerm = first.membership().leaderRevision;
    ASSERT_FALSE(second.campaign());

    ASSERT_TRUE(client().revoke(lease));
    const Membership between = second.membership();
    EXPECT_EQ(roleOf(between, "n2"), Role::Candidate);
    EXPECT_EQ(between.nodes, (std::vector<std::string>{"n2"}));

    EXPECT_TRUE(second.campaign());
    const Membership after = second.membership();
    EXPECT_EQ(after.leader, "n2");
    EXPECT_GT(after.leaderRevision, firstTerm);  // a new term: a new fence
}

TEST_F(ElectionTest, ExpiredLeaderHandsOverToTheOther) {
    ClusterMember first = join("n1", std::chrono::seconds(1));
    ClusterMember second = join("n2", std::chrono::seconds(60));
    ASSERT_TRUE(first.campaign());
    // The follower watches the leader key and campaigns when it goes.
    WatchRecorder recorder;
    const auto watch =
        client().watchPrefix(keys_.leader(), 0, recorder.onEvent(), recorder.onEnd());
    ASSERT_TRUE(recorder.waitFor(
        [](const WatchEvent& event) { return event.type == WatchEvent::Type::Delete; },
        kEtcdDeadline));
    EXPECT_TRUE(second.campaign());
    EXPECT_EQ(second.membership().leader, "n2");
}

}  // namespace
}  // namespace kvexec::cluster::test
