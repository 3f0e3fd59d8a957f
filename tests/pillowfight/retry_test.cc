// Which answers pillowfight sends again, and when (retry.h): the
// Couchbase SDKs' rules for a map that changes under load.
#include <gtest/gtest.h>

#include "pillowfight/retry.h"

namespace kvexec::pillowfight {
namespace {

using protocol::Status;
using std::chrono::milliseconds;

TEST(PillowfightRetry, NotMyVbucketGoesAtOnceToTheActiveOfANewerMap) {
    const Retry r = retryOf(Status::NotMyVbucket, 0, /*routedElsewhere=*/true);
    EXPECT_TRUE(r.again);
    EXPECT_EQ(r.after, milliseconds(0));
}

TEST(PillowfightRetry, NotMyVbucketWithoutANewRouteWaitsForTheMapToMove) {
    const Retry r = retryOf(Status::NotMyVbucket, 0, /*routedElsewhere=*/false);
    EXPECT_TRUE(r.again);
    EXPECT_GT(r.after, milliseconds(0));
}

TEST(PillowfightRetry, TmpfailBacksOffDoublingUpToTheCap) {
    milliseconds last{0};
    milliseconds total{0};
    for (unsigned retries = 0; retries < kMaxRetries; ++retries) {
        const Retry r = retryOf(Status::TemporaryFailure, retries, true);
        ASSERT_TRUE(r.again) << retries;
        EXPECT_GE(r.after, last) << retries;
        EXPECT_LE(r.after, kMaxBackoff) << retries;
        last = r.after;
        total += r.after;
    }
    EXPECT_EQ(retryOf(Status::TemporaryFailure, 0, true).after, kFirstBackoff);
    EXPECT_LE(kFirstBackoff, milliseconds(5)) << "a few ms: a node a moment behind";
    EXPECT_EQ(last, kMaxBackoff);
    // The retries span a takeover (two status reports, 500 ms apart, and
    // the map's publication) with room to spare, as an SDK's 2.5 s would.
    EXPECT_GE(total, milliseconds(2500));
}

TEST(PillowfightRetry, AReCommitInProgressIsRetriedLikeATmpfail) {
    const Retry r = retryOf(Status::SyncWriteReCommitInProgress, 0, true);
    EXPECT_TRUE(r.again);
    EXPECT_EQ(r.after, kFirstBackoff);
    EXPECT_FALSE(retryOf(Status::SyncWriteInProgress, 0, true).again) << "final, as before";
}

TEST(PillowfightRetry, AnOpRetriedTheMostTimesIsAnError) {
    EXPECT_FALSE(retryOf(Status::TemporaryFailure, kMaxRetries, true).again);
    EXPECT_FALSE(retryOf(Status::NotMyVbucket, kMaxRetries, true).again);
}

TEST(PillowfightRetry, OtherStatusesAreFinal) {
    for (const Status s : {Status::Success, Status::KeyNotFound, Status::SyncWriteAmbiguous,
                           Status::DurabilityImpossible, Status::Busy}) {
        EXPECT_FALSE(retryOf(s, 0, true).again) << static_cast<int>(s);
    }
}

// A connection to one node of a cluster drops: what happens to its ops.
TEST(PillowfightRetry, AReadLostWithItsConnectionIsSentAgainAfterABackoff) {
    const Retry r = retryOfLost(/*idempotent=*/true, /*sent=*/true, 0);
    EXPECT_TRUE(r.again);
    EXPECT_EQ(r.after, kFirstBackoff);
    EXPECT_EQ(retryOfLost(true, true, 3).after, retryOf(Status::TemporaryFailure, 3, true).after);
}

TEST(PillowfightRetry, AWriteLostWithItsConnectionIsAmbiguousNotRetried) {
    EXPECT_FALSE(retryOfLost(/*idempotent=*/false, /*sent=*/true, 0).again);
}

TEST(PillowfightRetry, AnOpNeverSentWaitsForItsNodeWhateverItIs) {
    for (const bool idempotent : {true, false}) {
        const Retry r = retryOfLost(idempotent, /*sent=*/false, 0);
        EXPECT_TRUE(r.again) << idempotent;
        EXPECT_EQ(r.after, kFirstBackoff) << idempotent;
    }
}

TEST(PillowfightRetry, AnOpWaitingForAnUnreachableNodeRunsOutOfRetries) {
    milliseconds total{0};
    unsigned retries = 0;
    for (; retryOfLost(false, false, retries).again; ++retries) {
        total += retryOfLost(false, false, retries).after;
    }
    EXPECT_EQ(retries, kMaxRetries);
    EXPECT_FALSE(retryOfLost(true, true, kMaxRetries).again);
    // About 3 s: a batch waits that long for a dead node, then goes on.
    EXPECT_GE(total, milliseconds(2500));
    EXPECT_LE(total, milliseconds(5000));
}

TEST(PillowfightRetry, ReconnectionsBackOffDoublingFrom10MsUpToASecond) {
    EXPECT_EQ(reconnectDelay(0), milliseconds(10));
    EXPECT_EQ(reconnectDelay(1), milliseconds(20));
    EXPECT_EQ(reconnectDelay(2), milliseconds(40));
    milliseconds last{0};
    for (unsigned attempts = 0; attempts < 40; ++attempts) {
        EXPECT_GE(reconnectDelay(attempts), last) << attempts;
        EXPECT_LE(reconnectDelay(attempts), kMaxBackoff) << attempts;
        last = reconnectDelay(attempts);
    }
    EXPECT_EQ(last, milliseconds(1000)) << "a node that stays down: once a second, forever";
}

}  // namespace
}  // namespace kvexec::pillowfight
