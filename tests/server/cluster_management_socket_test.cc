// The management endpoint of a cluster's node answers requests side by
// side: a flush waits for every node (cluster_admin.h, up to 15 s), and
// while it waits for a node that stopped (SIGSTOP), the same node still
// lists its scopes at once; the flush succeeds once the node goes on.
#include <event2/http.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include "cluster/etcd_client.h"
#include "cluster/membership.h"
#include "server/cluster_processes.h"
#include "server/http_client.h"

namespace kvexec::server::test {
namespace {

using Clock = std::chrono::steady_clock;

const cluster::ClusterKeys kKeys("/kvexec/default");
const std::string kBucket = "/pools/default/buckets/default";

// The count of flushes asked (etcd's <root>/flush); 0 before the first.
std::uint64_t flushesAsked(cluster::EtcdClient& etcd) {
    const auto count = etcd.get(kKeys.flush());
    return count ? std::stoull(count->value) : 0;
}

TEST(ClusterManagementSocketTest, AFlushWaitingForAStoppedNodeHoldsUpNoOtherRequest) {
    // A lease long enough that the stopped node stays a member: the flush
    // waits for it (up to ClusterAdmin::kFlushWait) rather than failing it over.
    ClusterProcesses cluster(2, 1, 16, {"--mgmt-port", "0", "--failover-timeout", "30"});
    ASSERT_TRUE(cluster.waitForMap());
    cluster::EtcdClient etcd(cluster::parseEtcdUrl(cluster.etcdUrl()));
    const std::uint16_t mgmt = cluster.node(0).mgmtPort();
    ASSERT_NE(mgmt, 0);

    ASSERT_EQ(::kill(cluster.node(1).pid(), SIGSTOP), 0);
    std::atomic<bool> flushed{false};
    auto flush = std::async(std::launch::async, [&] {
        auto reply = httpRequest(mgmt, EVHTTP_REQ_POST, kBucket + "/controller/doFlush");
        flushed = true;
        return reply;
    });
    // The flush is asked in etcd, then waits for node 1 to carry it out.
    const auto deadline = Clock::now() + kSocketDeadline;
    while (flushesAsked(etcd) == 0 && Clock::now() < deadline && !flushed) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ASSERT_EQ(flushesAsked(etcd), 1u);

    const auto scopes =
        httpRequest(mgmt, EVHTTP_REQ_GET, kBucket + "/scopes", "", "", std::chrono::seconds(5));
    EXPECT_EQ(scopes.status, 200) << scopes.body;
    EXPECT_FALSE(flushed) << "the listing was answered only once the flush ended";
    EXPECT_TRUE(scopes.parsed().contains("scopes")) << scopes.body;

    ASSERT_EQ(::kill(cluster.node(1).pid(), SIGCONT), 0);
    const auto flushReply = flush.get();
    EXPECT_EQ(flushReply.status, 200) << flushReply.body;
    EXPECT_TRUE(cluster.stopAll());
}

}  // namespace
}  // namespace kvexec::server::test
