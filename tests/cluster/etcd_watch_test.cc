// EtcdWatch (cluster/etcd_watch.h) against a real etcd: events in order,
// a start revision, the end of the stream, and stop().
#include <gtest/gtest.h>

#include "cluster/etcd_client.h"
#include "etcd_fixture.h"
#include "watch_recorder.h"

namespace kvexec::cluster::test {
namespace {

using Type = WatchEvent::Type;

class EtcdWatchTest : public EtcdTest {
  protected:
    EtcdClient& client() {
        if (!client_) {
            client_ = std::make_unique<EtcdClient>(etcd().endpoint());
        }
        return *client_;
    }

  private:
    std::unique_ptr<EtcdClient> client_;
};

TEST_F(EtcdWatchTest, SeesPutsAndDeletesInOrder) {
    WatchRecorder recorder;
    const auto watch = client().watchPrefix("/w/", 0, recorder.onEvent(), recorder.onEnd());
    const std::int64_t a = client().put("/w/a", "1");
    const std::int64_t b = client().put("/w/b", "2");
    client().put("/elsewhere", "x");
    client().del("/w/a");
    const std::int64_t a2 = client().put("/w/a", "3");
    ASSERT_TRUE(recorder.waitForEvents(4, kEtcdDeadline));
    const auto events = recorder.events();
    ASSERT_EQ(events.size(), 4u);
    EXPECT_EQ(events[0], (WatchEvent{Type::Put, "/w/a", "1", a}));
    EXPECT_EQ(events[1], (WatchEvent{Type::Put, "/w/b", "2", b}));
    EXPECT_EQ(events[2].type, Type::Delete);
    EXPECT_EQ(events[2].key, "/w/a");
    EXPECT_GT(events[2].modRevision, b);
    EXPECT_EQ(events[3], (WatchEvent{Type::Put, "/w/a", "3", a2}));
}

TEST_F(EtcdWatchTest, StartsFromTheGivenRevision) {
    client().put("/w/a", "old");
    const std::int64_t from = client().put("/w/a", "new");
    client().del("/w/a");
    WatchRecorder recorder;
    const auto watch = client().watchPrefix("/w/", from, recorder.onEvent(), recorder.onEnd());
    ASSERT_TRUE(recorder.waitForEvents(2, kEtcdDeadline));
    const auto events = recorder.events();
    EXPECT_EQ(events[0], (WatchEvent{Type::Put, "/w/a", "new", from}));
    EXPECT_EQ(events[1].type, Type::Delete);
}

TEST_F(EtcdWatchTest, EndsWithAReasonWhenEtcdGoesAway) {
    WatchRecorder recorder;
    const auto watch = client().watchPrefix("/w/", 0, recorder.onEvent(), recorder.onEnd());
    etcd().stop();
    ASSERT_TRUE(recorder.waitForEnd(kEtcdDeadline));
    EXPECT_NE(recorder.endReason().find(etcd().url()), std::string::npos) << recorder.endReason();
}

TEST_F(EtcdWatchTest, StopEndsDeliveryAndIsIdempotent) {
    WatchRecorder recorder;
    auto watch = client().watchPrefix("/w/", 0, recorder.onEvent(), recorder.onEnd());
    client().put("/w/a", "1");
    ASSERT_TRUE(recorder.waitForEvents(1, kEtcdDeadline));
    watch->stop();
    watch->stop();
    client().put("/w/a", "2");
    // Anything after stop() would have to come from a joined thread; the
    // one event is all there is, and onEnd was not called.
    EXPECT_EQ(recorder.events().size(), 1u);
    EXPECT_EQ(recorder.endReason(), "");
    watch.reset();
}

}  // namespace
}  // namespace kvexec::cluster::test
