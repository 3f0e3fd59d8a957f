// HELLO negotiation: what the server grants the Couchbase SDKs and what it
// refuses because it does not implement it.
#include <gtest/gtest.h>

#include <initializer_list>

#include "protocol/binary_response.h"
#include "protocol/binary_types.h"
#include "protocol/hello.h"

namespace kvexec::protocol {
namespace {

std::string features(std::initializer_list<std::uint16_t> codes) {
    std::string out;
    for (auto code : codes) {
        appendBe16(out, code);
    }
    return out;
}

// What the Node.js SDK 4.7 asks for, in its order.
const std::string kSdkHello =
    features({0x03, 0x06, 0x07, 0x08, 0x0b, 0x0c, 0x10, 0x0f, 0x11, 0x15,
              0x12, 0x17, 0x14, 0x1c, 0x21, 0x0e, 0x0d, 0x1e, 0x0a, 0x04});

TEST(Hello, GrantsWhatTheSdkNeedsInTheOrderAsked) {
    const HelloReply reply = negotiateHello(kSdkHello);
    EXPECT_EQ(reply.granted, features({0x03, 0x06, 0x07, 0x08, 0x0b, 0x0c, 0x10, 0x11, 0x15, 0x12,
                                       0x17, 0x14, 0x1c, 0x21, 0x0d, 0x1e, 0x04}));
    EXPECT_TRUE(reply.features.dedupeNotMyVbucketMaps);
    EXPECT_TRUE(reply.features.xerror);
    EXPECT_TRUE(reply.features.collections);
    EXPECT_TRUE(reply.features.mutationSeqno);
    EXPECT_TRUE(reply.features.json);
    EXPECT_TRUE(reply.features.duplex);
    EXPECT_TRUE(reply.features.clustermapNotification);
}

// Pushed maps are server requests: a client that does not take them
// (no Duplex in the same HELLO) is not sent any.
TEST(Hello, ClusterMapPushesNeedDuplex) {
    const HelloReply alone = negotiateHello(features({0x0d}));
    EXPECT_TRUE(alone.granted.empty());
    EXPECT_FALSE(alone.features.clustermapNotification);
    const HelloReply both = negotiateHello(features({0x0d, 0x0c}));
    EXPECT_EQ(both.granted, features({0x0d, 0x0c}));
    EXPECT_TRUE(both.features.clustermapNotification);
    EXPECT_TRUE(both.features.duplex);
}

// A granted feature is a promise the server keeps on every later request.
TEST(Hello, RefusesFeaturesTheServerDoesNotImplement) {
    for (auto feature : {Feature::Tls, Feature::TcpDelay, Feature::Snappy,
                         Feature::UnorderedExecution, Feature::Tracing}) {
        const HelloReply reply = negotiateHello(features({static_cast<std::uint16_t>(feature)}));
        EXPECT_TRUE(reply.granted.empty()) << static_cast<int>(feature);
    }
    EXPECT_TRUE(negotiateHello(features({0xffff})).granted.empty());
    // Brief notifications (0x1f: the revision without the map).
    EXPECT_TRUE(negotiateHello(features({0x1f})).granted.empty());
}

TEST(Hello, AFeatureAskedTwiceIsGrantedOnce) {
    EXPECT_EQ(negotiateHello(features({0x07, 0x12, 0x07})).granted, features({0x07, 0x12}));
}

TEST(Hello, AnEmptyHelloGrantsNothingAndResetsEverything) {
    const HelloReply reply = negotiateHello({});
    EXPECT_TRUE(reply.granted.empty());
    EXPECT_FALSE(reply.features.xerror || reply.features.collections ||
                 reply.features.mutationSeqno || reply.features.json || reply.features.duplex ||
                 reply.features.clustermapNotification || reply.features.dedupeNotMyVbucketMaps);
}

}  // namespace
}  // namespace kvexec::protocol
