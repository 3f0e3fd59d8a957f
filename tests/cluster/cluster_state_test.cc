// cluster_state.h as pure functions: node values, the view read from the
// keys under a root, the leader's decision and what a map asks of a node.
#include <gtest/gtest.h>

#include "cluster/cluster_state.h"

namespace kvexec::cluster {
namespace {

const ClusterKeys kKeys{"/kvexec/test"};

KeyValue keyValue(std::string key, std::string value, std::int64_t modRevision = 1,
                  std::int64_t lease = 0) {
    return KeyValue{std::move(key), std::move(value), 1, modRevision, lease};
}

TEST(NodeValuesTest, AddressRoundTripsAndBadOnesSayWhy) {
    const NodeAddress address{"127.0.0.1", 11210, 8091};
    EXPECT_EQ(decodeNodeAddress(encodeNodeAddress(address)), address);
    // A TLS port is written only when there is one: older nodes read the key.
    EXPECT_EQ(encodeNodeAddress(address).find("tlsPort"), std::string::npos);
    const NodeAddress withTls{"127.0.0.1", 11210, 8091, 11207, 18091};
    EXPECT_EQ(decodeNodeAddress(encodeNodeAddress(withTls)), withTls);
    EXPECT_THROW(decodeNodeAddress(R"({"host":"h","kvPort":1,"mgmtPort":0,"tlsPort":-1})"),
                 std::invalid_argument);
    EXPECT_THROW(decodeNodeAddress("[]"), std::invalid_argument);
    EXPECT_THROW(decodeNodeAddress(R"({"host":"","kvPort":1,"mgmtPort":0})"),
                 std::invalid_argument);
    try {
        decodeNodeAddress(R"({"host":"h","kvPort":70000,"mgmtPort":0})");
        FAIL() << "a port above 65535 was taken";
    } catch (const std::invalid_argument& error) {
        EXPECT_NE(std::string(error.what()).find("kvPort"), std::string::npos) << error.what();
    }
}

TEST(NodeValuesTest, StatusRoundTrips) {
    EXPECT_EQ(decodeNodeStatus(encodeNodeStatus(NodeStatus{42})), NodeStatus{42});
    EXPECT_THROW(decodeNodeStatus(R"({"mapRevision":-1})"), std::invalid_argument);
}

TEST(NodeValuesTest, StatusWithReplicationRoundTripsAndAnOlderOneStillDecodes) {
    const NodeStatus status{7, ReplicationStatus{3, 2, {{0, 10}, {5, 1}}, {{2, 9}}}};
    const std::string encoded = encodeNodeStatus(status);
    EXPECT_EQ(decodeNodeStatus(encoded), status);
    EXPECT_NE(encoded.find(R"("active":[[0,10],[5,1]])"), std::string::npos) << encoded;
    EXPECT_EQ(decodeNodeStatus(R"({"mapRevision":3})"), NodeStatus{3});
    for (const char* bad : {R"({"mapRevision":1,"replicaVBuckets":1})",
                            R"({"mapRevision":1,"replicaVBuckets":1,"streamsOpen":0,)"
                            R"("active":[[70000,1]],"replica":[]})",
                            R"({"mapRevision":1,"replicaVBuckets":1,"streamsOpen":0,)"
                            R"("active":[[1]],"replica":[]})"}) {
        EXPECT_THROW(decodeNodeStatus(bad), std::invalid_argument) << bad;
    }
}

TEST(ClusterViewTest, ReadsEveryKindOfKeyAndReportsWhatDoesNotDecode) {
    const VBucketMap map = computeMap({"n1", "n2"}, 4, 1);
    const std::vector<KeyValue> kvs = {
        keyValue(kKeys.leader(), "n1", 7, 99),
        keyValue(kKeys.map(), encodeVBucketMap(map), 9),
        keyValue(kKeys.node("n1"), encodeNodeAddress({"10.0.0.1", 11210, 0})),
        keyValue(kKeys.node("n2"), "not json"),
        keyValue(kKeys.status("n1"), encodeNodeStatus({1})),
        keyValue("/kvexec/test/unknown", "ignored"),
    };
    const ClusterView view = readClusterView(kKeys, kvs);
    EXPECT_EQ(view.membership.nodes, (std::vector<std::string>{"n1", "n2"}));
    EXPECT_EQ(view.membership.leader, "n1");
    EXPECT_EQ(view.membership.leaderRevision, 7);
    EXPECT_EQ(view.leaderLease, 99);
    ASSERT_TRUE(view.map);
    EXPECT_EQ(*view.map, map);
    EXPECT_EQ(view.mapModRevision, 9);
    EXPECT_EQ(view.addresses.size(), 1u);  // n2's value does not decode
    EXPECT_EQ(view.addresses.at("n1").host, "10.0.0.1");
    EXPECT_EQ(view.statuses.at("n1"), NodeStatus{1});
    ASSERT_EQ(view.problems.size(), 1u);
    EXPECT_NE(view.problems[0].find("/nodes/n2"), std::string::npos) << view.problems[0];
}

TEST(ClusterViewTest, AMalformedMapIsNoMapButKeepsItsRevisionForTheFence) {
    const ClusterView view = readClusterView(kKeys, {keyValue(kKeys.map(), "{}", 12)});
    EXPECT_FALSE(view.map);
    EXPECT_EQ(view.mapModRevision, 12);
    EXPECT_EQ(view.problems.size(), 1u);
}

TEST(ClusterStateTest, AMapOfAnotherVBucketCountIsIgnored) {
    ClusterView view;
    view.membership.nodes = {"n1"};
    view.map = computeMap({"n1"}, 8, 0);
    EXPECT_TRUE(clusterStateOf(view, 8, {}).map);
    EXPECT_FALSE(clusterStateOf(view, 16, {}).map);
}

TEST(ClusterStateTest, RemembersTheAddressOfANodeTheMapStillNames) {
    ClusterView view;
    view.membership.nodes = {"n1"};
    view.addresses["n1"] = {"h1", 1, 0};
    view.map = computeMap({"n1", "n2"}, 4, 1);
    const std::map<std::string, NodeAddress> remembered = {{"n2", {"h2", 2, 0}},
                                                           {"gone", {"h3", 3, 0}}};
    const ClusterState state = clusterStateOf(view, 4, remembered);
    EXPECT_EQ(state.registered, (std::vector<std::string>{"n1"}));
    ASSERT_EQ(state.addresses.size(), 2u);
    EXPECT_EQ(state.addresses.at("n2").host, "h2");
    EXPECT_FALSE(state.addresses.contains("gone"));
}

// A map is applied everywhere once each registered node it names says so
// in its status; a node that left (no lease, no status) does not hold it
// up, and one without a status yet does.
TEST(ClusterStateTest, AMapIsAppliedEverywhereOnceEveryLiveNodeOfItSaysSo) {
    ClusterView view;
    view.membership.nodes = {"n1", "n2"};
    view.map = computeMap({"n1", "n2", "n3"}, 4, 1);
    view.map->revision = 5;
    view.statuses = {{"n1", {5}}};
    EXPECT_EQ(clusterStateOf(view, 4, {}).appliedEverywhere, 0u) << "n2 has no status yet";
    view.statuses["n2"] = {4};
    EXPECT_EQ(clusterStateOf(view, 4, {}).appliedEverywhere, 4u);
    view.statuses["n2"] = {5};
    EXPECT_EQ(clusterStateOf(view, 4, {}).appliedEverywhere, 5u);
    view.membership.nodes = {"n1", "n2", "n4"};  // n4: not in the map, serves none of it
    EXPECT_EQ(clusterStateOf(view, 4, {}).appliedEverywhere, 5u);
}

// The manifest's value is carried to the nodes as etcd holds it; the
// uid every registered node holds comes from their statuses.
TEST(ClusterStateTest, TheManifestIsCarriedAndHeldEverywhereOnceEveryNodeSaysSo) {
    ClusterView view = readClusterView(
        kKeys, {keyValue(kKeys.manifest(), "{manifest}", 14), keyValue(kKeys.node("n1"), "{}")});
    EXPECT_EQ(view.manifest, "{manifest}");
    view.membership.nodes = {"n1", "n2"};
    NodeStatus holds3{1};
    holds3.manifestUid = 3;
    view.statuses = {{"n1", holds3}};
    EXPECT_EQ(clusterStateOf(view, 4, {}).manifest, "{manifest}");
    EXPECT_EQ(clusterStateOf(view, 4, {}).manifestEverywhere, 0u) << "n2 has said nothing";
    NodeStatus holds2{1};
    holds2.manifestUid = 2;
    view.statuses["n2"] = holds2;
    EXPECT_EQ(clusterStateOf(view, 4, {}).manifestEverywhere, 2u);
    view.membership.nodes = {"n1"};  // n2 left: it holds no client's writes
    EXPECT_EQ(clusterStateOf(view, 4, {}).manifestEverywhere, 3u);
    EXPECT_EQ(decodeNodeStatus(encodeNodeStatus(holds3)), holds3);
    EXPECT_EQ(decodeNodeStatus(R"({"mapRevision":1})").manifestUid, 0u);
}

// Flushes: the key's count is carried to the nodes, and the count every
// registered node has carried out comes from their statuses.
TEST(ClusterStateTest, AFlushIsDoneEverywhereOnceEveryNodeSaysSo) {
    ClusterView view = readClusterView(kKeys, {keyValue(kKeys.flush(), "2", 20)});
    EXPECT_EQ(view.flushes, 2u);
    view.membership.nodes = {"n1", "n2"};
    NodeStatus flushedTwice{1};
    flushedTwice.flushed = 2;
    view.statuses = {{"n1", flushedTwice}, {"n2", NodeStatus{1}}};
    EXPECT_EQ(clusterStateOf(view, 4, {}).flushes, 2u);
    EXPECT_EQ(clusterStateOf(view, 4, {}).flushedEverywhere, 0u);
    view.statuses["n2"] = flushedTwice;
    EXPECT_EQ(clusterStateOf(view, 4, {}).flushedEverywhere, 2u);
    EXPECT_EQ(decodeNodeStatus(encodeNodeStatus(flushedTwice)), flushedTwice);
    for (const char* bad : {"", "x", "-1", "2 ", "18446744073709551616"}) {
        EXPECT_THROW(decodeFlushCount(bad), std::invalid_argument) << bad;
    }
    const auto damaged = readClusterView(kKeys, {keyValue(kKeys.flush(), "two", 21)});
    EXPECT_EQ(damaged.flushes, 0u);
    EXPECT_EQ(damaged.problems.size(), 1u);
}

// A flush needs every node that leads vBuckets up: the state names those
// that are down; a node that holds only replicas, or none, is not named.
TEST(ClusterStateTest, NamesTheNodesThatLeadVBucketsAndAreDown) {
    VBucketMap map = computeMap({"n1", "n2", "n3"}, 6, 0);
    map.nodes.push_back("n4");  // named, leads nothing
    map.chains[0] = {1, 3};     // n2 leads vb 0; n4 holds its replica
    ClusterView view;
    view.map = map;
    view.membership.nodes = {"n1", "n2", "n3"};
    EXPECT_TRUE(clusterStateOf(view, 6, {}).activesDown.empty());
    view.membership.nodes = {"n1"};
    EXPECT_EQ(clusterStateOf(view, 6, {}).activesDown, (std::vector<std::string>{"n2", "n3"}));
}

TEST(MapToPublishTest, FirstMapThenNothingUntilTheNodesChange) {
    ClusterView view;
    view.membership.nodes = {"n1", "n2"};
    const auto first = mapToPublish(view, 8, 1, 0);
    ASSERT_TRUE(first);
    EXPECT_EQ(first->revision, 1u);
    EXPECT_EQ(first->nodes, view.membership.nodes);
    view.map = first;
    EXPECT_FALSE(mapToPublish(view, 8, 1, 1));
    view.membership.nodes = {"n1", "n2", "n3"};
    const auto second = mapToPublish(view, 8, 1, 1);
    ASSERT_TRUE(second);
    EXPECT_EQ(second->revision, 2u);
    EXPECT_FALSE(mapToPublish(ClusterView{}, 8, 1, 0));  // no node registered
}

// A node rebalanced out stays out of the map while it is registered.
TEST(MapToPublishTest, AnEjectedNodeIsLeftOut) {
    ClusterView view;
    view.membership.nodes = {"n1", "n2", "n3"};
    view.ejected = {"n2"};
    EXPECT_EQ(mappableNodes(view), (std::vector<std::string>{"n1", "n3"}));
    const auto map = mapToPublish(view, 8, 1, 0);
    ASSERT_TRUE(map);
    EXPECT_EQ(map->nodes, (std::vector<std::string>{"n1", "n3"}));
    view.membership.nodes = {"n2"};  // alone, and out
    EXPECT_FALSE(mapToPublish(view, 8, 1, 0));
}

TEST(MapToPublishTest, ARevisionNeverGoesBack) {
    ClusterView view;
    view.membership.nodes = {"n1"};  // the map in etcd stopped decoding
    const auto next = mapToPublish(view, 8, 0, 41);
    ASSERT_TRUE(next);
    EXPECT_EQ(next->revision, 42u);
}

// A node that joins gets no active, not even for a vBucket every status
// shows empty (its active may have taken writes since); the replica that
// holds the most is promoted where an active was lost.
TEST(MapToPublishTest, AJoiningNodeLeadsNothingAndTheFullestReplicaIsPromoted) {
    ClusterView view;
    view.membership.nodes = {"n1"};
    view.map = mapToPublish(view, 4, 1, 0);  // n1 alone, active everywhere
    ASSERT_TRUE(view.map);
    ReplicationStatus n1;
    n1.active = {{0, 7}, {1, 3}};  // vBuckets 0 and 1 hold data; 2 and 3 none
    view.statuses["n1"] = NodeStatus(view.map->revision, n1);
    view.membership.nodes = {"n1", "n2"};
    const auto next = mapToPublish(view, 4, 1, view.map->revision);
    ASSERT_TRUE(next);
    for (std::uint16_t vb = 0; vb < 4; ++vb) {
        EXPECT_EQ(next->nodes[next->chains[vb][0]], "n1") << vb;
        EXPECT_EQ(next->nodes[next->chains[vb][1]], "n2") << vb;
    }
    // Three nodes, two replicas, the active lost: n3 reports more of
    // vBucket 0 than n2, and leads it.
    ClusterView three;
    three.membership.nodes = {"n1", "n2", "n3"};
    three.map = mapToPublish(three, 3, 2, 0);
    ASSERT_TRUE(three.map);
    ASSERT_EQ(three.map->chains[0], (std::vector<int>{0, 1, 2}));
    ReplicationStatus n2;
    n2.replica = {{0, 5}};
    ReplicationStatus n3;
    n3.replica = {{0, 6}};
    three.statuses["n2"] = NodeStatus(1, n2);
    three.statuses["n3"] = NodeStatus(1, n3);
    three.membership.nodes = {"n2", "n3"};
    const auto failedOver = mapToPublish(three, 3, 2, 1);
    ASSERT_TRUE(failedOver);
    EXPECT_EQ(failedOver->nodes[failedOver->chains[0][0]], "n3");
}

// Three nodes under leases 11, 12, 13, one replica, a map made for them.
ClusterView threeLeasedNodes() {
    ClusterView view;
    view.membership.nodes = {"n1", "n2", "n3"};
    view.leases = {{"n1", 11}, {"n2", 12}, {"n3", 13}};
    view.map = mapToPublish(view, 6, 1, 0);
    return view;
}

TEST(MapToPublishTest, TheMapRecordsTheLeaseEachNodeIsRegisteredUnder) {
    const ClusterView view = threeLeasedNodes();
    ASSERT_TRUE(view.map);
    EXPECT_EQ(view.map->leases, (std::vector<std::int64_t>{11, 12, 13}));
    EXPECT_TRUE(rejoinedNodes(view).empty());
    EXPECT_FALSE(mapToPublish(view, 6, 1, 1)) << "nothing changed";
    const VBucketMap decoded = decodeVBucketMap(encodeVBucketMap(*view.map));
    EXPECT_EQ(decoded, *view.map);
}

// n1 restarted (or fenced itself and joined again) under lease 21: what it
// led goes to its replicas, and it comes back with replica slots only.
TEST(MapToPublishTest, ANodeBackUnderANewLeaseIsFailedOverAndLeadsNothing) {
    ClusterView view = threeLeasedNodes();
    ASSERT_TRUE(view.map);
    const NodeVBuckets before = vbucketsOf(*view.map, "n1");
    ASSERT_FALSE(before.active.empty());
    view.leases["n1"] = 21;
    EXPECT_EQ(rejoinedNodes(view), (std::vector<std::string>{"n1"}));

    const auto next = mapToPublish(view, 6, 1, 1);
    ASSERT_TRUE(next);
    EXPECT_EQ(leaseOf(*next, "n1"), 21);
    EXPECT_TRUE(vbucketsOf(*next, "n1").active.empty()) << "n1 leads again";
    for (const std::uint16_t vb : before.active) {
        const int replica = view.map->chains[vb][1];
        EXPECT_EQ(next->chains[vb][0], replica) << "vb " << vb << ": not its replica";
    }
    ClusterView after = view;
    after.map = next;
    EXPECT_TRUE(rejoinedNodes(after).empty());
    EXPECT_FALSE(mapToPublish(after, 6, 1, next->revision));
}

// The chain's node names, active first ("" for an empty slot).
std::vector<std::string> namesOf(const VBucketMap& map, std::size_t vb) {
    std::vector<std::string> names;
    for (const int index : map.chains[vb]) {
        names.push_back(nodeName(map, index));
    }
    return names;
}

// A vBucket all of whose copies are on nodes that came back keeps them
// (there is no other copy to promote; a node that holds nothing would make
// them roll back to zero). The others are failed over as usual.
TEST(MapToPublishTest, AChainWhoseEveryCopyCameBackKeepsItsNodes) {
    ClusterView view = threeLeasedNodes();
    ASSERT_TRUE(view.map);
    view.leases = {{"n1", 21}, {"n2", 22}, {"n3", 23}};  // the whole cluster restarted
    const auto all = mapToPublish(view, 6, 1, 1);
    ASSERT_TRUE(all);
    for (std::size_t vb = 0; vb < 6; ++vb) {
        EXPECT_EQ(namesOf(*all, vb), namesOf(*view.map, vb)) << "vb " << vb;
    }
    EXPECT_EQ(all->leases, (std::vector<std::int64_t>{21, 22, 23}));

    view = threeLeasedNodes();
    view.leases["n1"] = 21;
    view.leases["n2"] = 22;  // two of three
    const auto two = mapToPublish(view, 6, 1, 1);
    ASSERT_TRUE(two);
    for (std::size_t vb = 0; vb < 6; ++vb) {
        const auto before = namesOf(*view.map, vb);
        const auto after = namesOf(*two, vb);
        if (std::find(before.begin(), before.end(), "n3") == before.end()) {
            EXPECT_EQ(after, before) << "vb " << vb << ": only rejoined copies";
        } else {
            EXPECT_EQ(after.front(), "n3") << "vb " << vb << ": the copy that stayed leads";
        }
    }
}

// A promotion ranks seqnos that are final only in statuses written after
// the lost node stopped: under the membership without it (or with its new
// lease). The digest moves with every join, leave and rejoin.
TEST(StatusFreshnessTest, StatusesAreFreshOnlyUnderTheCurrentMembership) {
    ClusterView view = threeLeasedNodes();
    ASSERT_TRUE(view.map);
    const std::string digest = membershipDigest(view);
    EXPECT_EQ(digest.size(), 16u);
    EXPECT_FALSE(statusesFresh(view)) << "no status yet";
    for (const std::string node : {"n1", "n2", "n3"}) {
        view.statuses[node].membership = digest;
    }
    EXPECT_TRUE(statusesFresh(view));

    ClusterView rejoined = view;
    rejoined.leases["n1"] = 21;
    EXPECT_NE(membershipDigest(rejoined), digest);
    EXPECT_FALSE(statusesFresh(rejoined));
    ClusterView left = view;
    left.membership.nodes = {"n2", "n3"};
    left.leases.erase("n1");
    EXPECT_NE(membershipDigest(left), digest);
    EXPECT_FALSE(statusesFresh(left));
    for (const std::string node : {"n2", "n3"}) {
        left.statuses[node].membership = membershipDigest(left);
    }
    EXPECT_TRUE(statusesFresh(left)) << "the left node's status is not waited for";

    const auto failedOver = mapToPublish(left, 6, 1, 1);
    ASSERT_TRUE(failedOver);
    EXPECT_TRUE(changesActives(*view.map, *failedOver));
    EXPECT_FALSE(changesActives(*view.map, *view.map));

    NodeStatus status{7};
    status.membership = digest;
    EXPECT_EQ(decodeNodeStatus(encodeNodeStatus(status)), status);
    EXPECT_THROW(decodeNodeStatus(R"({"mapRevision":1,"membership":5})"), std::invalid_argument);
}

TEST(MapForLeaseTest, ANodeHoldsNothingInAMapMadeForAnotherLease) {
    const ClusterView view = threeLeasedNodes();
    ASSERT_TRUE(view.map);
    EXPECT_EQ(mapForLease(*view.map, "n1", 11), *view.map);
    const VBucketMap stale = mapForLease(*view.map, "n1", 21);
    EXPECT_EQ(stale.revision, view.map->revision);
    for (const auto& change : vbucketChanges(stale, "n1")) {
        EXPECT_EQ(change.role, VBucketRole::Dead) << "vb " << change.vbid;
    }
    EXPECT_EQ(vbucketsOf(stale, "n2").active, vbucketsOf(*view.map, "n2").active);
    VBucketMap unrecorded = *view.map;
    unrecorded.leases.clear();
    EXPECT_EQ(mapForLease(unrecorded, "n1", 21), unrecorded) << "an older map is acted on";
}

TEST(VBucketChangesTest, ActiveReplicaOrDeadByPlaceInTheChain) {
    VBucketMap map;
    map.revision = 3;
    map.numReplicas = 2;
    map.nodes = {"a", "b", "c"};
    map.chains = {{0, 1, kNoNode}, {1, 0, 2}, {2, 1, kNoNode}};
    const auto changes = vbucketChanges(map, "a");
    ASSERT_EQ(changes.size(), 3u);
    EXPECT_EQ(changes[0], (VBucketChange{0, VBucketRole::Active, {"a", "b", ""}}));
    EXPECT_EQ(changes[1], (VBucketChange{1, VBucketRole::Replica, {"b", "a", "c"}}));
    EXPECT_EQ(changes[2], (VBucketChange{2, VBucketRole::Dead, {"c", "b", ""}}));
    for (const auto& change : vbucketChanges(map, "not-in-map")) {
        EXPECT_EQ(change.role, VBucketRole::Dead);
    }
}

TEST(VBucketChangesTest, AgreesWithVbucketsOf) {
    const VBucketMap map = computeMap({"n0", "n1", "n2"}, 64, 1);
    for (const std::string& node : map.nodes) {
        const NodeVBuckets held = vbucketsOf(map, node);
        std::vector<std::uint16_t> active, replica;
        for (const auto& change : vbucketChanges(map, node)) {
            if (change.role == VBucketRole::Active) {
                active.push_back(change.vbid);
            } else if (change.role == VBucketRole::Replica) {
                replica.push_back(change.vbid);
            }
        }
        EXPECT_EQ(active, held.active) << node;
        EXPECT_EQ(replica, held.replica) << node;
    }
}

}  // namespace
}  // namespace kvexec::cluster
