// Bad input and load against the real kvexec-server binary over loopback
// sockets (issue 12): malformed binary framing and text lines get a clear
// error and a close, unknown commands do not close, slow, trickling, idle
// and non-reading clients are dropped after the idle timeout, a connection
// flood beyond --max-connections (or beyond the descriptors) is refused
// while connections already in go on, nothing stalls a healthy client,
// authentication is enforced, requests that complete after their handler
// returned (durable writes, stats conns) have the requests pipelined behind
// them answered in order, and SIGTERM stops gracefully with every
// acknowledged write persisted.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "executor/test_support.h"
#include "kvexec/engine/vbucket_state.h"
#include "protocol/binary_response.h"
#include "protocol/client_codec.h"
#include "protocol/dcp.h"
#include "protocol/keys.h"
#include "server_process.h"
#include "server_process_test.h"
#include "support/wait.h"

namespace kvexec::server::test {
namespace {

using protocol::Opcode;
using protocol::Status;

constexpr auto kSuccess = static_cast<std::uint16_t>(Status::Success);
constexpr auto kNotFound = static_cast<std::uint16_t>(Status::KeyNotFound);
constexpr auto kTooBig = static_cast<std::uint16_t>(Status::ValueTooLarge);
constexpr auto kInvalid = static_cast<std::uint16_t>(Status::InvalidArguments);
constexpr auto kAuthError = static_cast<std::uint16_t>(Status::AuthError);
constexpr auto kUnknownCommand = static_cast<std::uint16_t>(Status::UnknownCommand);
constexpr auto kNotMyVbucket = static_cast<std::uint16_t>(Status::NotMyVbucket);
constexpr std::uint16_t kVBuckets = 16;  // ServerProcess starts every server with --vbuckets 16
constexpr auto kNotSupported = static_cast<std::uint16_t>(Status::NotSupported);

RawRequest setRequest(const std::string& key, const std::string& value) {
    return request(Opcode::Set, key, std::string(8, '\0'), value);
}

// A binary SET and a GET that reads it back: the connection is served.
void expectServed(Client& client, const std::string& key) {
    auto stored = client.call(setRequest(key, "v-" + key));
    ASSERT_TRUE(stored.has_value()) << key;
    ASSERT_EQ(stored->status, kSuccess) << key;
    auto got = client.call(request(Opcode::Get, key));
    ASSERT_TRUE(got.has_value()) << key;
    ASSERT_EQ(got->status, kSuccess) << key;
    EXPECT_EQ(got->value, "v-" + key);
}

// One counter of the text protocol's "stats" (of `group`; "": the default).
std::optional<std::uint64_t> statOf(Client& client, const std::string& name,
                                    const std::string& group = "") {
    if (!client.send(group.empty() ? "stats\r\n" : "stats " + group + "\r\n")) {
        return std::nullopt;
    }
    std::optional<std::uint64_t> value;
    const std::string prefix = "STAT " + name + " ";
    while (auto line = client.readLine()) {
        if (*line == "END\r\n") {
            return value;
        }
        if (line->rfind(prefix, 0) == 0) {
            value = std::stoull(line->substr(prefix.size()));
        }
    }
    return std::nullopt;
}

std::optional<std::uint64_t> statOf(std::uint16_t port, const std::string& name) {
    Client client(port);
    return statOf(client, name);
}

using ServerSocketTest = ServerProcessTest;

// A document written over and over leaves its old versions in its
// vBucket's file; once they are --compaction-threshold percent of it, the
// server compacts the file by itself: `stats file_cache` counts it, and
// the document reads back, before and after a restart.
TEST_F(ServerSocketTest, AFileOfOldVersionsIsCompactedInTheBackground) {
    const std::vector<std::string> args = {"--compaction-threshold", "50",
                                           "--compaction-min-file-bytes", "65536"};
    start(args);
    Client client(port());
    const std::string value(1000, 'c');
    int writes = 0;
    const auto compactions = [&] { return statOf(client, "auto_compactions", "file_cache"); };
    while (compactions() == 0u && writes < 5000) {
        ASSERT_EQ(client.call(setRequest("doc", value + std::to_string(++writes)))->status,
                  kSuccess);
    }
    // The file qualified long before; its compaction (an AuxIO task that
    // syncs the copy) may still be running on a loaded machine.
    ASSERT_TRUE(kvexec::test::waitUntil([&] { return compactions().value_or(0) >= 1; },
                                        std::chrono::seconds(60)))
        << "after " << writes << " writes";
    EXPECT_GT(statOf(client, "compaction_bytes_reclaimed", "file_cache").value_or(0), 32768u);
    const std::string last = value + std::to_string(writes);
    EXPECT_EQ(client.call(request(Opcode::Get, "doc"))->value, last);
    ASSERT_EQ(server_->stop(SIGTERM), 0);
    start(args);
    Client again(port());
    EXPECT_EQ(again.call(request(Opcode::Get, "doc"))->value, last);
}

TEST_F(ServerSocketTest, UnknownMagicGetsInvalidArgumentsThenClose) {
    start();
    Client client(port());
    RawRequest garbage = request(Opcode::Noop);
    garbage.magic = 0x81;  // a response magic is no request
    auto response = client.call(garbage);
    ASSERT_TRUE(response.has_value());
    EXPECT_EQ(response->magic, 0x81);
    EXPECT_EQ(response->status, kInvalid);
    EXPECT_TRUE(client.closedByServer());
}

TEST_F(ServerSocketTest, BodyOverThePacketLimitGetsTooBigFromTheHeaderAndItsBytesAreDropped) {
    start({"--max-value-bytes", "1000", "--max-body-bytes", "70000"});
    Client client(port());
    RawRequest huge = setRequest("k", "");
    huge.bodyLength = 70001;
    huge.opaque = 0x1234;
    // Only the header is sent: the server must not wait for the body.
    auto response = client.call(huge);
    ASSERT_TRUE(response.has_value());
    EXPECT_EQ(response->status, kTooBig);
    EXPECT_EQ(response->opaque, 0x1234u);
    EXPECT_EQ(response->opcode, static_cast<std::uint8_t>(Opcode::Set));
    // The rest of the body follows, in pieces; then the connection is
    // served as before.
    const std::size_t sent = huge.encode().size() - protocol::kHeaderSize;  // extras and key
    ASSERT_TRUE(client.send(std::string(30000, 'x')));
    ASSERT_TRUE(client.send(std::string(40001 - sent, 'y')));
    expectServed(client, "after-huge");
}

TEST_F(ServerSocketTest, AValueOfExactlyTheLimitIsStoredAndOneByteMoreGetsTooBig) {
    start();  // Couchbase's limit: 20 MiB of value, whatever the key and extras
    Client client(port());
    const std::string limit(20 * 1024 * 1024, 'v');
    auto stored = client.call(setRequest("at-the-limit", limit));
    ASSERT_TRUE(stored.has_value());
    EXPECT_EQ(stored->status, kSuccess);
    auto got = client.call(request(Opcode::Get, "at-the-limit"));
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(got->value.size(), limit.size());
    for (int i = 0; i < 3; ++i) {  // every time, and the connection goes on
        auto refused = client.call(setRequest("over", limit + "v"));
        ASSERT_TRUE(refused.has_value());
        EXPECT_EQ(refused->status, kTooBig);
    }
    expectServed(client, "after-too-big");
}

TEST_F(ServerSocketTest, MalformedSubdocRequestsGetTheirStatusAndTheConnectionGoesOn) {
    start();
    Client client(port());
    ASSERT_EQ(client.call(setRequest("doc", std::string(40, '[') + std::string(40, ']')))->status,
              kSuccess);
    // A multi-mutation whose only spec claims more path bytes than follow.
    const std::string truncated{'\xc8', 0, 0, 9, 0, 0, 0, 1, 'a'};
    auto r = client.call(request(Opcode::SubdocMultiMutation, "doc", "", truncated));
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, kInvalid);
    // A single-path get with a malformed path; then one into a document
    // nested deeper than 32 levels.
    const std::string getExtras{0, 3, 0};
    r = client.call(request(Opcode::SubdocGet, "doc", getExtras, "a[x"));
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, 0xc2);  // PATH_EINVAL
    r = client.call(request(Opcode::SubdocGet, "doc", std::string{0, 4, 0}, "[0]."));
    ASSERT_TRUE(r.has_value());
    EXPECT_NE(r->status, kSuccess);
    const std::string countExtras{0, 3, 0};
    r = client.call(request(Opcode::SubdocGetCount, "doc", countExtras, "[0]"));
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, 0xc4);  // DOC_E2DEEP
    expectServed(client, "after-subdoc");
}

// Binary xattr values (HELLO 0x21): stored as Couchbase's base64 string,
// read back as bytes (not labelled JSON) with the flag and as the string
// without; a value that only looks encoded is refused.
TEST_F(ServerSocketTest, SubdocKeepsABinaryXattrValueAndReturnsItsBytes) {
    constexpr char kXattr = 0x04;
    constexpr char kBinary = 0x20;
    constexpr char kMkdoc = 0x01;
    const auto extras = [](std::size_t pathLength, char pathFlags, std::string more = {}) {
        return std::string{0, static_cast<char>(pathLength), pathFlags} + more;
    };
    start();
    Client client(port());
    std::string features;
    protocol::appendBe16(features, 0x0b);  // JSON
    protocol::appendBe16(features, 0x21);  // SubdocBinaryXattr
    ASSERT_EQ(client.call(request(Opcode::Hello, "binary-xattr", "", features))->status, kSuccess);
    const std::string bytes("\x00\xff{", 3);
    // A client that sent HELLO names the key's vBucket.
    const auto call = [&](protocol::test::RawRequest raw) {
        raw.vbucket = protocol::vbucketOfKey("doc", kVBuckets);
        return client.call(raw);
    };
    auto r = call(request(Opcode::SubdocDictUpsert, "doc",
                          extras(5, kXattr | kBinary, std::string(1, kMkdoc)), "x.bin" + bytes));
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, kSuccess);
    r = call(request(Opcode::SubdocGet, "doc", extras(5, kXattr | kBinary), "x.bin"));
    EXPECT_EQ(r->status, kSuccess);
    EXPECT_EQ(r->value, bytes);
    EXPECT_EQ(r->datatype, 0) << "raw bytes, not JSON";
    r = call(request(Opcode::SubdocGet, "doc", extras(5, kXattr), "x.bin"));
    EXPECT_EQ(r->value, "\"cb-content-base64-encoded:AP97\"");
    EXPECT_EQ(r->datatype, protocol::kDatatypeJson);
    r = call(request(Opcode::SubdocDictUpsert, "doc", extras(5, kXattr),
                     "x.bad\"cb-content-base64-encoded:====\""));
    EXPECT_EQ(r->status, 0x87) << "XATTR_EINVAL";
}

// Sub-document access to tombstones, as transactions use it: an insert
// staged as a tombstone carrying xattrs is seen only by requests that ask
// for deleted documents (AccessDeleted), and a revive makes it live.
TEST_F(ServerSocketTest, SubdocReachesATombstoneOnlyWhenAskedAndRevivesIt) {
    constexpr char kXattrPath = 0x04 | 0x01;  // xattr, create parents
    constexpr char kAccessDeleted = 0x04;
    constexpr char kStage = 0x02 | kAccessDeleted | 0x08;  // add, access, create as deleted
    constexpr char kRevive = kAccessDeleted | 0x10;
    constexpr std::uint16_t kSuccessDeleted = 0xcd;
    constexpr std::uint16_t kCanOnlyReviveDeleted = 0xd6;
    const auto extras = [](std::size_t pathLength, char pathFlags, char docFlags) {
        return std::string{0, static_cast<char>(pathLength), pathFlags, docFlags};
    };
    start();
    Client client(port());
    auto r = client.call(
        request(Opcode::SubdocDictUpsert, "staged", extras(6, kXattrPath, kStage), "txn.id\"t1\""));
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, kSuccessDeleted);
    r = client.call(request(Opcode::Get, "staged"));
    EXPECT_EQ(r->status, kNotFound) << "a tombstone is no document to a plain read";
    r = client.call(request(Opcode::SubdocGet, "staged", extras(6, 0x04, 0), "txn.id"));
    EXPECT_EQ(r->status, kNotFound);
    r = client.call(
        request(Opcode::SubdocGet, "staged", extras(6, 0x04, kAccessDeleted), "txn.id"));
    EXPECT_EQ(r->status, kSuccessDeleted);
    EXPECT_EQ(r->value, "\"t1\"");
    r = client.call(
        request(Opcode::SubdocDictUpsert, "staged", extras(6, kXattrPath, kStage), "txn.id\"t2\""));
    EXPECT_EQ(r->status, static_cast<std::uint16_t>(Status::KeyExists)) << "staged already";

    r = client.call(
        request(Opcode::SubdocReplaceBodyWithXattr, "staged", extras(6, 0x04, kRevive), "txn.id"));
    EXPECT_EQ(r->status, kSuccess);
    r = client.call(request(Opcode::Get, "staged"));
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, kSuccess);
    EXPECT_EQ(r->value, "\"t1\"");
    r = client.call(
        request(Opcode::SubdocReplaceBodyWithXattr, "staged", extras(6, 0x04, kRevive), "txn.id"));
    EXPECT_EQ(r->status, kCanOnlyReviveDeleted);

    // A whole-document delete keeps the system xattrs the request left,
    // the one it wrote too, and drops the user ones.
    ASSERT_EQ(client.call(setRequest("sysdoc", "{}"))->status, kSuccess);
    const auto spec = [](char opcode, char flags, const std::string& path,
                         const std::string& value) {
        return std::string{opcode, flags, 0, static_cast<char>(path.size()),
                           0,      0,     0, static_cast<char>(value.size())} +
               path + value;
    };
    r = client.call(request(Opcode::SubdocMultiMutation, "sysdoc", "",
                            spec('\xc8', kXattrPath, "_sys.a", "1") +
                                spec('\xc8', kXattrPath, "user.b", "2") + spec(0x04, 0, "", "")));
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, kSuccess);
    EXPECT_EQ(client.call(request(Opcode::Get, "sysdoc"))->status, kNotFound);
    r = client.call(request(
        Opcode::SubdocMultiLookup, "sysdoc", std::string{kAccessDeleted},
        std::string{'\xc5', 0x04, 0, 6} + "_sys.a" + std::string{'\xc5', 0x04, 0, 6} + "user.b"));
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, 0xd3);  // MULTI_PATH_FAILURE_DELETED: user.b is gone
    EXPECT_EQ(r->value,
              std::string({0, 0, 0, 0, 0, 1}) + "1" + std::string({0, '\xc0', 0, 0, 0, 0}));
    expectServed(client, "after-tombstones");
}

TEST_F(ServerSocketTest, ExtrasAndKeyLongerThanTheBodyGetInvalidArgumentsThenClose) {
    start();
    Client client(port());
    RawRequest broken = setRequest("key", "value");
    broken.keyLength = 200;  // more than the whole body
    auto response = client.call(broken);
    ASSERT_TRUE(response.has_value());
    EXPECT_EQ(response->status, kInvalid);
    EXPECT_TRUE(client.closedByServer());
}

TEST_F(ServerSocketTest, UnknownOpcodeGetsUnknownCommandAndTheConnectionGoesOn) {
    start();
    Client client(port());
    RawRequest unknown;
    unknown.opcode = 0x5f;
    unknown.opaque = 77;
    auto response = client.call(unknown);
    ASSERT_TRUE(response.has_value());
    EXPECT_EQ(response->status, kUnknownCommand);
    EXPECT_EQ(response->opaque, 77u);
    expectServed(client, "after-unknown");
}

TEST_F(ServerSocketTest, MalformedShapeGetsInvalidArgumentsAndTheConnectionGoesOn) {
    start();
    Client client(port());
    auto response = client.call(request(Opcode::Set, "k", "", "no extras"));
    ASSERT_TRUE(response.has_value());
    EXPECT_EQ(response->status, kInvalid);
    expectServed(client, "after-shape");
}

TEST_F(ServerSocketTest, TextLineTooLongGetsClientErrorThenClose) {
    start();
    Client client(port());
    ASSERT_TRUE(client.send(std::string(3000, 'x')));  // no line end
    EXPECT_EQ(client.readLine(), "CLIENT_ERROR line too long\r\n");
    EXPECT_TRUE(client.closedByServer());
}

TEST_F(ServerSocketTest, TextValueOverTheLimitGetsServerErrorAndItsBlockIsDropped) {
    start({"--max-value-bytes", "1000"});
    Client client(port());
    EXPECT_EQ(client.ask("set big 0 0 5000"), "SERVER_ERROR object too large for cache\r\n");
    ASSERT_TRUE(client.send(std::string(3000, 'x')));
    ASSERT_TRUE(client.send(std::string(2000, 'y') + "\r\n"));
    EXPECT_EQ(client.ask("set k 0 0 2\r\nhi"), "STORED\r\n");
    EXPECT_EQ(client.ask("ms big 2000 T0"), "SERVER_ERROR object too large for cache\r\n");
    ASSERT_TRUE(client.send(std::string(2000, 'z') + "\r\n"));
    EXPECT_EQ(client.ask("get k"), "VALUE k 0 2\r\n");
}

TEST_F(ServerSocketTest, TextUnknownCommandGetsErrorAndTheConnectionGoesOn) {
    start();
    Client client(port());
    EXPECT_EQ(client.ask("bogus command"), "ERROR\r\n");
    EXPECT_EQ(client.ask("set k 0 0 2\r\nhi"), "STORED\r\n");
    EXPECT_EQ(client.ask("get k"), "VALUE k 0 2\r\n");
    EXPECT_EQ(client.readLine(), "hi\r\n");
    EXPECT_EQ(client.readLine(), "END\r\n");
}

TEST_F(ServerSocketTest, HalfHeaderIsDroppedAfterTheIdleTimeoutWhileOthersAreServed) {
    start({"--idle-timeout", "1"});
    Client slow(port());
    const std::string header = setRequest("slow", "value").encode();
    ASSERT_TRUE(slow.send(header.substr(0, 10)));  // half a header, then nothing
    {
        Client healthy(port());
        for (int i = 0; i < 20; ++i) {
            expectServed(healthy, "healthy-" + std::to_string(i));
        }
    }
    EXPECT_TRUE(slow.closedByServer());
}

TEST_F(ServerSocketTest, RequestTricklingInIsDroppedAfterTheIdleTimeout) {
    start({"--idle-timeout", "1"});
    Client trickle(port());
    const std::string bytes = setRequest("trickle", std::string(1000, 't')).encode();
    // One byte every 200 ms: never idle for the timeout, but the request
    // would take minutes. Paced by waiting for the server's close.
    const auto until = std::chrono::steady_clock::now() + kSocketDeadline;
    bool closed = false;
    for (std::size_t i = 0; i < bytes.size() && !closed; ++i) {
        ASSERT_LT(std::chrono::steady_clock::now(), until) << "still open after " << i << " bytes";
        closed = !trickle.send(bytes.substr(i, 1)) ||
                 trickle.closedByServer(std::chrono::milliseconds(200));
    }
    EXPECT_TRUE(closed);
}

TEST_F(ServerSocketTest, ConnectionIdleBetweenRequestsIsDroppedAfterTheIdleTimeout) {
    start({"--idle-timeout", "1"});
    Client idle(port());
    expectServed(idle, "once");
    EXPECT_TRUE(idle.closedByServer());
}

TEST_F(ServerSocketTest, ClientThatReadsNoResponsesIsDroppedAfterTheIdleTimeout) {
    start({"--idle-timeout", "1"});
    const std::string value(1024 * 1024, 'v');
    {
        Client writer(port());
        auto stored = writer.call(setRequest("big", value));
        ASSERT_TRUE(stored.has_value());
        ASSERT_EQ(stored->status, kSuccess);
    }
    // 32 MiB of responses owed, more than the socket buffers and the
    // server's output high water mark hold: the server stops reading this
    // client, whose requests stay unread.
    Client hog(port());
    std::string pipeline;
    for (int i = 0; i < 32; ++i) {
        pipeline += request(Opcode::Get, "big").encode();
    }
    ASSERT_TRUE(hog.send(pipeline));
    // The only connection that can time out is the hog (the writer closed;
    // each stats connection lives for one request).
    EXPECT_TRUE(kvexec::test::waitFor([&] { return statOf(port(), "idle_timeouts") >= 1u; }));
    EXPECT_TRUE(hog.closedByServer());
}

// A client that pipelines more responses than the output high water mark
// holds, and then only reads, gets every one of them.
TEST_F(ServerSocketTest, APipelineOwingMoreThanTheHighWaterMarkIsServedInFull) {
    start();
    const std::string value(1024 * 1024, 'v');
    Client client(port());
    auto stored = client.call(setRequest("big", value));
    ASSERT_TRUE(stored.has_value());
    ASSERT_EQ(stored->status, kSuccess);
    constexpr int kGets = 16;  // 16 MiB owed
    std::string pipeline;
    for (int i = 0; i < kGets; ++i) {
        pipeline += request(Opcode::Get, "big").encode();
    }
    ASSERT_TRUE(client.send(pipeline));
    for (int i = 0; i < kGets; ++i) {
        auto got = client.readResponse();
        ASSERT_TRUE(got.has_value()) << "response " << i << " of " << kGets << " never came";
        EXPECT_EQ(got->value.size(), value.size());
    }
}

TEST_F(ServerSocketTest, LargeBodyArrivingSlowlyDoesNotStallOthers) {
    start();
    Client big(port());
    const std::string value(8 * 1024 * 1024, 'b');
    const std::string bytes = setRequest("big", value).encode();
    const std::size_t half = bytes.size() / 2;
    ASSERT_TRUE(big.send(std::string_view(bytes).substr(0, half)));
    Client healthy(port());
    for (int i = 0; i < 20; ++i) {
        expectServed(healthy, "healthy-" + std::to_string(i));
    }
    ASSERT_TRUE(big.send(std::string_view(bytes).substr(half)));
    auto stored = big.readResponse();
    ASSERT_TRUE(stored.has_value());
    EXPECT_EQ(stored->status, kSuccess);
    auto got = healthy.call(request(Opcode::Get, "big"));
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(got->value.size(), value.size());
}

TEST_F(ServerSocketTest, FloodBeyondMaxConnectionsIsRefusedWithoutHurtingThoseIn) {
    constexpr int kMax = 4;
    start({"--max-connections", std::to_string(kMax)});
    std::vector<std::unique_ptr<Client>> in;
    for (int i = 0; i < kMax; ++i) {
        in.push_back(std::make_unique<Client>(port()));
        expectServed(*in.back(), "in-" + std::to_string(i));  // accepted and counted
    }
    for (int i = 0; i < 3 * kMax; ++i) {
        Client refused(port());
        EXPECT_EQ(refused.readLine(), "ERROR Too many open connections\r\n");
        EXPECT_TRUE(refused.closedByServer());
        expectServed(*in[static_cast<std::size_t>(i % kMax)], "during-" + std::to_string(i));
    }
    for (auto& client : in) {
        expectServed(*client, "after");
    }
    // A slot freed is usable again (the server counts the close
    // asynchronously: retry until it has).
    in.pop_back();
    EXPECT_TRUE(kvexec::test::waitFor([&] {
        Client next(port());
        auto noop = next.call(request(Opcode::Noop));
        return noop.has_value() && noop->status == kSuccess;
    }));
}

// The server out of descriptors (its limit lowered under it, as a busy
// machine would): accept() fails, the server pauses accepting instead of
// spinning, connections already in go on, and accepting resumes once
// descriptors are free again.
TEST_F(ServerSocketTest, OutOfDescriptorsPausesAcceptingWithoutHurtingThoseIn) {
    start();
    Client in(port());
    // Nothing is written while descriptors are short: the storage would
    // need them to persist (and UBSan's own checks need a pipe). The paths
    // used below run once before, so nothing is first done in the window.
    const auto readMissing = [&] {
        auto got = in.call(request(Opcode::Get, "missing"));
        return got.has_value() && got->status == kNotFound;
    };
    ASSERT_TRUE(readMissing());
    ASSERT_EQ(statOf(in, "listen_disabled_num"), 0u);
    const std::string fds = "/proc/" + std::to_string(server_->pid()) + "/fd";
    const auto open = static_cast<rlim_t>(std::distance(std::filesystem::directory_iterator(fds),
                                                        std::filesystem::directory_iterator()));
    rlimit original{};
    ASSERT_EQ(prlimit(server_->pid(), RLIMIT_NOFILE, nullptr, &original), 0);
    const rlimit tight{open + 2, original.rlim_max};
    ASSERT_EQ(prlimit(server_->pid(), RLIMIT_NOFILE, &tight, nullptr), 0);
    {
        std::vector<std::unique_ptr<Client>> flood;
        for (int i = 0; i < 16; ++i) {
            flood.push_back(std::make_unique<Client>(port()));  // the backlog takes them
            ASSERT_TRUE(readMissing()) << i;
        }
        // The listener runs on its own loop: wait for it to have hit the limit.
        EXPECT_TRUE(kvexec::test::waitFor(
            [&] { return statOf(in, "listen_disabled_num").value_or(0) >= 1u; }));
        ASSERT_TRUE(readMissing());
    }
    ASSERT_EQ(prlimit(server_->pid(), RLIMIT_NOFILE, &original, nullptr), 0);
    expectServed(in, "after");
    EXPECT_TRUE(kvexec::test::waitFor([&] {
        Client next(port());
        auto noop = next.call(request(Opcode::Noop));
        return noop.has_value() && noop->status == kSuccess;
    }));
}

TEST_F(ServerSocketTest, WithCredentialsOnlyTheHandshakeRunsBeforeAuthentication) {
    start({"--user", "alice", "--password", "secret"});
    Client client(port());
    for (Opcode allowed : {Opcode::Noop, Opcode::Version, Opcode::SaslListMechs}) {
        auto response = client.call(request(allowed));
        ASSERT_TRUE(response.has_value());
        EXPECT_EQ(response->status, kSuccess) << protocol::opcodeName(allowed);
    }
    {
        // Another connection: HELLO makes it a Couchbase client, which must
        // then send the right vBucket with each key.
        Client sdk(port());
        auto hello = sdk.call(request(Opcode::Hello, "test-client"));
        ASSERT_TRUE(hello.has_value());
        EXPECT_EQ(hello->status, kSuccess);
        auto get = sdk.call(request(Opcode::Get, "k"));
        ASSERT_TRUE(get.has_value());
        EXPECT_EQ(get->status, kAuthError);
    }
    for (const RawRequest& refused :
         {request(Opcode::Get, "k"), setRequest("k", "v"), request(Opcode::Delete, "k"),
          request(Opcode::Stat), request(Opcode::Flush)}) {
        auto response = client.call(refused);
        ASSERT_TRUE(response.has_value());
        EXPECT_EQ(response->status, kAuthError) << int{refused.opcode};
    }
    auto wrong =
        client.call(request(Opcode::SaslAuth, "PLAIN", "", std::string("\0alice\0nope", 11)));
    ASSERT_TRUE(wrong.has_value());
    EXPECT_EQ(wrong->status, kAuthError);
    auto right =
        client.call(request(Opcode::SaslAuth, "PLAIN", "", std::string("\0alice\0secret", 13)));
    ASSERT_TRUE(right.has_value());
    EXPECT_EQ(right->status, kSuccess);
    auto get = client.call(request(Opcode::Get, "k"));
    ASSERT_TRUE(get.has_value());
    EXPECT_EQ(get->status, kNotFound);
    expectServed(client, "authenticated");

    Client text(port());
    EXPECT_EQ(text.ask("version").value_or("").rfind("VERSION ", 0), 0u);
    EXPECT_EQ(text.ask("get k").value_or("").rfind("CLIENT_ERROR", 0), 0u);
}

// DCP_OPEN with the producer flag (DCP's 4-byte seqno 0 and flags).
RawRequest dcpOpen(const std::string& name, std::uint32_t flags = protocol::dcp::kOpenProducer) {
    std::string extras(4, '\0');
    protocol::appendBe32(extras, flags);
    return request(Opcode::DcpOpen, name, extras);
}

// The DCP_MUTATION of seqno `seqno` from a producer opened with `flags`,
// streaming the key's vBucket from 0; nullopt if none comes before the
// deadline.
std::optional<BinaryResponse> dcpMutation(std::uint16_t port, std::uint32_t flags,
                                          const std::string& key, std::uint64_t seqno) {
    Client dcp(port);
    const auto opened = dcp.call(dcpOpen("observer:test", flags));
    if (!opened || opened->status != kSuccess) {
        return std::nullopt;
    }
    std::string streamRequest;
    protocol::dcp::encodeStreamRequest(streamRequest, {protocol::vbucketOfKey(key, kVBuckets), 1, 0,
                                                       0, ~std::uint64_t{0}, 0, 0, 0});
    if (!dcp.send(streamRequest)) {
        return std::nullopt;
    }
    while (auto message = dcp.readResponse()) {
        if (message->opcode == static_cast<std::uint8_t>(Opcode::DcpMutation) &&
            message->extras.size() >= 8 && protocol::readBe64(message->extras, 0) == seqno) {
            return message;
        }
    }
    return std::nullopt;
}

// A DCP client gets a document's xattrs only if its DCP_OPEN asked for
// them (IncludeXattrs), and no value with NoValue, as from kv_engine:
// without the flag, the mutation carries the body alone, and no XATTR
// datatype bit that would make the client read it as a blob.
TEST_F(ServerSocketTest, DcpSendsAsMuchOfADocumentAsDcpOpenAskedFor) {
    start();
    Client client(port());
    std::string features;
    protocol::appendBe16(features, 0x06);  // Xattr
    ASSERT_EQ(client.call(request(Opcode::Hello, "xattrs", "", features))->status, kSuccess);
    // Seqno 1 makes the document with an xattr (mkdoc); seqno 2 sets its
    // body, which keeps the xattr.
    RawRequest upsert =
        request(Opcode::SubdocDictUpsert, "doc", std::string{0, 8, 0x04 | 0x01, 0x01}, "meta.rev1");
    upsert.vbucket = protocol::vbucketOfKey("doc", kVBuckets);
    ASSERT_EQ(client.call(upsert)->status, kSuccess);
    RawRequest set = setRequest("doc", R"({"a":1})");
    set.vbucket = upsert.vbucket;
    ASSERT_EQ(client.call(set)->status, kSuccess);

    namespace wire = protocol::dcp;
    const auto whole =
        dcpMutation(port(), wire::kOpenProducer | wire::kOpenIncludeXattrs, "doc", 2);
    ASSERT_TRUE(whole.has_value());
    EXPECT_NE(whole->datatype & 0x04, 0) << "no XATTR bit";
    EXPECT_NE(whole->value.find("meta"), std::string::npos);
    EXPECT_TRUE(whole->value.ends_with(R"({"a":1})"));

    const auto body = dcpMutation(port(), wire::kOpenProducer, "doc", 2);
    ASSERT_TRUE(body.has_value());
    EXPECT_EQ(body->value, R"({"a":1})");
    EXPECT_EQ(body->datatype, whole->datatype & ~0x04);

    const auto none = dcpMutation(port(), wire::kOpenProducer | wire::kOpenNoValue, "doc", 2);
    ASSERT_TRUE(none.has_value());
    EXPECT_EQ(none->value, "");
    EXPECT_EQ(none->datatype, 0);
    EXPECT_EQ(none->key, "doc");
    EXPECT_EQ(none->cas, whole->cas);
}

TEST_F(ServerSocketTest, DcpOpenNeedsTheNodesCredentialsAndMalformedDcpClosesOnlyThatConnection) {
    start({"--user", "alice", "--password", "secret", "--node-password", "node-secret"});
    Client stranger(port());
    auto refused = stranger.call(dcpOpen("replication:x"));
    ASSERT_TRUE(refused.has_value());
    EXPECT_EQ(refused->status, kAuthError);

    // A client's credentials read and write documents, never open DCP (it
    // streams the whole bucket).
    Client client(port());
    ASSERT_EQ(
        client.call(request(Opcode::SaslAuth, "PLAIN", "", std::string("\0alice\0secret", 13)))
            ->status,
        kSuccess);
    auto clientOpen = client.call(dcpOpen("replication:client"));
    ASSERT_TRUE(clientOpen.has_value());
    EXPECT_EQ(clientOpen->status, static_cast<std::uint16_t>(Status::NoAccess));
    expectServed(client, "client-after-dcp-refused");

    Client peer(port());
    const std::string nodeLogin = std::string("\0@kvexec-node\0node-secret", 25);
    auto auth = peer.call(request(Opcode::SaslAuth, "PLAIN", "", nodeLogin));
    ASSERT_TRUE(auth.has_value());
    ASSERT_EQ(auth->status, kSuccess);
    auto opened = peer.call(dcpOpen("replication:peer"));
    ASSERT_TRUE(opened.has_value());
    EXPECT_EQ(opened->status, kSuccess);
    // A stream request with its extras cut short is refused, not fatal.
    auto shortRequest = peer.call(request(Opcode::DcpStreamReq, "", std::string(12, '\0')));
    ASSERT_TRUE(shortRequest.has_value());
    EXPECT_EQ(shortRequest->status, kInvalid);
    // A message only a producer sends, sent to one, closes the connection.
    ASSERT_TRUE(peer.send(request(Opcode::DcpMutation, "k", std::string(31, '\0'), "v").encode()));
    EXPECT_TRUE(peer.closedByServer());
    // The node goes on.
    Client other(port());
    ASSERT_EQ(
        other.call(request(Opcode::SaslAuth, "PLAIN", "", std::string("\0alice\0secret", 13)))
            ->status,
        kSuccess);
    expectServed(other, "after-dcp");
}

// SET_VBUCKET of vBucket `vb` with the state in `extras` (1 byte, or 4 in
// network order), and GET_VBUCKET.
RawRequest setVbucket(std::uint16_t vb, std::string extras, std::string value = {}) {
    RawRequest r = request(Opcode::SetVbucket, {}, std::move(extras), std::move(value));
    r.vbucket = vb;
    return r;
}
RawRequest setVbucket(std::uint16_t vb, engine::VBucketState state) {
    return setVbucket(vb, std::string(1, static_cast<char>(state)));
}
RawRequest getVbucket(std::uint16_t vb) {
    RawRequest r = request(Opcode::GetVbucket);
    r.vbucket = vb;
    return r;
}
std::uint16_t statusOf(Client& client, const RawRequest& r) {
    const auto answer = client.call(r);
    return answer ? answer->status : std::uint16_t{0xffff};
}
// GET_VBUCKET's answer: the state in 4 bytes; 0 if refused.
std::uint32_t vbucketState(Client& client, std::uint16_t vb) {
    const auto answer = client.call(getVbucket(vb));
    if (!answer || answer->status != kSuccess || answer->value.size() != 4) {
        return 0;
    }
    return protocol::readBe32(answer->value, 0);
}

// On a single node SET_VBUCKET sets the engine's state: a replica vBucket
// answers its keys NOT_MY_VBUCKET until it is active again.
TEST_F(ServerSocketTest, SetVbucketToReplicaAndBackMovesItsKeysOutOfServiceAndBack) {
    start();
    const std::string key = "moved";
    const auto vb = protocol::vbucketOfKey(key, kVBuckets);
    Client client(port());
    ASSERT_EQ(client.call(setRequest(key, "v"))->status, kSuccess);
    EXPECT_EQ(vbucketState(client, vb), 1u);
    ASSERT_EQ(statusOf(client, setVbucket(vb, engine::VBucketState::Replica)), kSuccess);
    EXPECT_EQ(vbucketState(client, vb), 2u);
    EXPECT_EQ(statusOf(client, setRequest(key, "w")), kNotMyVbucket);
    EXPECT_EQ(statusOf(client, request(Opcode::Get, key)), kNotMyVbucket);
    expectServed(client, "another-vbucket");
    // The 4-byte form (before Couchbase 6.5) sets it back.
    ASSERT_EQ(statusOf(client, setVbucket(vb, std::string("\0\0\0\x01", 4))), kSuccess);
    EXPECT_EQ(vbucketState(client, vb), 1u);
    const auto got = client.call(request(Opcode::Get, key));
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(got->status, kSuccess);
    EXPECT_EQ(got->value, "v");
    expectServed(client, key);
}

TEST_F(ServerSocketTest, MalformedVbucketCommandsGetInvalidArgumentsAndTheConnectionGoesOn) {
    start();
    Client client(port());
    for (const auto& bad : {
             setVbucket(0, std::string(2, '\x01')),                // extras neither 1 nor 4 bytes
             setVbucket(0, ""),                                    // no state
             setVbucket(0, std::string(1, '\0')),                  // no state 0
             setVbucket(0, std::string(1, '\x05')),                // nor 5
             setVbucket(0, std::string("\0\0\x01\x01", 4)),        // 257
             setVbucket(0, std::string("\0\0\0\x01", 4), "v"),     // the 4-byte form has no value
             setVbucket(kVBuckets, engine::VBucketState::Active),  // no such vBucket
             getVbucket(kVBuckets),
         }) {
        EXPECT_EQ(statusOf(client, bad), kInvalid)
            << protocol::opcodeName(static_cast<Opcode>(bad.opcode)) << " vb " << bad.vbucket
            << " extras " << bad.extras.size();
    }
    // A topology (the JSON value of the 1-byte form) is not taken.
    EXPECT_EQ(statusOf(client, setVbucket(0, std::string(1, '\x01'), R"({"topology":[["a"]]})")),
              kNotSupported);
    EXPECT_EQ(vbucketState(client, 0), 1u);
    expectServed(client, "after-bad-vbucket-commands");
}

// Setting a vBucket's state is the node manager's: with users, only
// @kvexec-node may; a client's credentials read it, never set it.
TEST_F(ServerSocketTest, SetVbucketNeedsTheNodesCredentials) {
    start({"--user", "alice", "--password", "secret", "--node-password", "node-secret"});
    Client client(port());
    ASSERT_EQ(
        client.call(request(Opcode::SaslAuth, "PLAIN", "", std::string("\0alice\0secret", 13)))
            ->status,
        kSuccess);
    EXPECT_EQ(statusOf(client, setVbucket(3, engine::VBucketState::Dead)),
              static_cast<std::uint16_t>(Status::NoAccess));
    EXPECT_EQ(vbucketState(client, 3), 1u);

    Client node(port());
    const std::string nodeLogin = std::string("\0@kvexec-node\0node-secret", 25);
    ASSERT_EQ(node.call(request(Opcode::SaslAuth, "PLAIN", "", nodeLogin))->status, kSuccess);
    EXPECT_EQ(statusOf(node, setVbucket(3, engine::VBucketState::Dead)), kSuccess);
    EXPECT_EQ(vbucketState(client, 3), 4u);
}

// A 24-byte response header with no body (what a consumer answers a noop
// with): magic 0x81, the opcode, status 0, the opaque echoed.
std::string emptyResponse(Opcode opcode, std::uint32_t opaque) {
    std::string bytes(24, '\0');
    bytes[0] = '\x81';
    bytes[1] = static_cast<char>(opcode);
    for (int i = 0; i < 4; ++i) {
        bytes[12 + i] = static_cast<char>(opaque >> (24 - 8 * i));
    }
    return bytes;
}

// A replication connection is quiet while nothing changes: the idle
// timeout drops a quiet client beside it, never the producer's connection.
TEST_F(ServerSocketTest, TheIdleTimeoutSparesAQuietProducerConnection) {
    start({"--idle-timeout", "1", "--user", "alice", "--password", "secret", "--node-password",
           "node-secret"});
    Client peer(port());
    const std::string nodeLogin = std::string("\0@kvexec-node\0node-secret", 25);
    ASSERT_EQ(peer.call(request(Opcode::SaslAuth, "PLAIN", "", nodeLogin))->status, kSuccess);
    ASSERT_EQ(peer.call(dcpOpen("replication:quiet"))->status, kSuccess);
    // A message after the open: each read must not bring the timeout back.
    ASSERT_EQ(peer.call(request(Opcode::DcpControl, "enable_noop", "", "false"))->status, kSuccess);
    Client quiet(port());
    EXPECT_TRUE(quiet.closedByServer()) << "the idle timeout did not fire";
    EXPECT_FALSE(peer.closedByServer(std::chrono::milliseconds(1500)));
    auto control = peer.call(request(Opcode::DcpControl, "enable_noop", "", "true"));
    ASSERT_TRUE(control.has_value()) << "the producer's connection was dropped";
    EXPECT_EQ(control->status, kSuccess);
}

// With noops enabled, a producer's connection gets DCP_NOOP every interval;
// one left unanswered for a whole interval closes the connection (a dead
// consumer holds no streams), and an answered one keeps it.
TEST_F(ServerSocketTest, AProducerClosesAConnectionThatLeavesItsNoopUnanswered) {
    start({"--user", "alice", "--password", "secret", "--node-password", "node-secret"});
    Client peer(port());
    const std::string nodeLogin = std::string("\0@kvexec-node\0node-secret", 25);
    ASSERT_EQ(peer.call(request(Opcode::SaslAuth, "PLAIN", "", nodeLogin))->status, kSuccess);
    ASSERT_EQ(peer.call(dcpOpen("replication:noop"))->status, kSuccess);
    ASSERT_EQ(peer.call(request(Opcode::DcpControl, "enable_noop", "", "true"))->status, kSuccess);
    ASSERT_EQ(peer.call(request(Opcode::DcpControl, "set_noop_interval", "", "1"))->status,
              kSuccess);
    ASSERT_EQ(peer.call(request(Opcode::DcpControl, "set_noop_interval", "", "0"))->status,
              kInvalid);
    auto noop = peer.readResponse();
    ASSERT_TRUE(noop.has_value());
    EXPECT_EQ(noop->magic, 0x80) << "a request from the producer";
    EXPECT_EQ(noop->opcode, static_cast<std::uint8_t>(Opcode::DcpNoop));
    ASSERT_TRUE(peer.send(emptyResponse(Opcode::DcpNoop, noop->opaque)));
    auto next = peer.readResponse();  // answered: the connection lives to send another
    ASSERT_TRUE(next.has_value());
    EXPECT_EQ(next->opcode, static_cast<std::uint8_t>(Opcode::DcpNoop));
    EXPECT_TRUE(peer.closedByServer(std::chrono::seconds(10)));
}

// The request with frame info 1 (PersistToMajority): its completion comes
// later, on a pool thread, once the flusher has persisted the write.
RawRequest durable(RawRequest r) {
    r.magic = 0x08;
    r.framing = protocol::durabilityFrame(protocol::DurabilityLevel::PersistToMajority);
    return r;
}

RawRequest withOpaque(RawRequest r, std::uint32_t opaque) {
    r.opaque = opaque;
    return r;
}

void expectResponse(Client& client, Opcode opcode, std::uint32_t opaque, std::uint16_t status,
                    const std::string& key = {}, const std::string& value = {}) {
    auto response = client.readResponse();
    ASSERT_TRUE(response.has_value()) << "opaque " << opaque;
    EXPECT_EQ(response->opcode, static_cast<std::uint8_t>(opcode)) << "opaque " << opaque;
    EXPECT_EQ(response->opaque, opaque);
    EXPECT_EQ(response->status, status) << "opaque " << opaque;
    EXPECT_EQ(response->key, key) << "opaque " << opaque;
    EXPECT_EQ(response->value, value) << "opaque " << opaque;
}

// Durable writes answer after the handler returned; their completion may
// read every field of the request (debug builds check, before it runs,
// that the request's bytes are still where its views point: under ASan,
// bytes drained while it was pending are a use-after-free). The first is
// alone in the input, the rest arrive behind it while it is pending, quiet
// and durable ones among them, and are answered in order.
TEST_F(ServerSocketTest, DurableWritesCompleteLaterWithRequestsPipelinedBehindThem) {
    start();
    Client client(port());
    const std::string extras(8, '\0');
    ASSERT_TRUE(client.send(
        withOpaque(durable(request(Opcode::Set, "durable-1", extras, "one")), 1).encode()));
    const std::string pipeline =
        withOpaque(request(Opcode::Get, "durable-1"), 2).encode() +
        withOpaque(durable(request(Opcode::SetQ, "durable-2", extras, "two")), 3).encode() +
        withOpaque(request(Opcode::GetK, "durable-2"), 4).encode() +
        withOpaque(durable(request(Opcode::Delete, "durable-1")), 5).encode() +
        withOpaque(request(Opcode::GetQ, "durable-1"), 6).encode() +
        withOpaque(request(Opcode::Noop), 7).encode();
    ASSERT_TRUE(client.send(pipeline));
    expectResponse(client, Opcode::Set, 1, kSuccess);
    expectResponse(client, Opcode::Get, 2, kSuccess, {}, "one");
    // 3, SETQ: quiet on success; 6, GETQ: quiet on a miss.
    expectResponse(client, Opcode::GetK, 4, kSuccess, "durable-2", "two");
    expectResponse(client, Opcode::Delete, 5, kSuccess);
    expectResponse(client, Opcode::Noop, 7, kSuccess);

    // Closed while its durable write is pending: the completion writes
    // nothing, and the server goes on (TearDown stops it gracefully).
    {
        Client leaving(port());
        ASSERT_TRUE(leaving.send(durable(request(Opcode::Set, "durable-3", extras, "3")).encode()));
    }
    expectServed(client, "after-close");
}

// "stats conns" is answered once every front end has described its
// connections: a text command whose completion runs after its handler
// returned, with commands pipelined behind it.
TEST_F(ServerSocketTest, StatsConnsCompletesLaterWithCommandsPipelinedBehindIt) {
    start({"--frontend-threads", "2"});
    Client client(port());
    ASSERT_TRUE(client.send("stats conns\r\n"));
    ASSERT_TRUE(client.send("set k 0 0 1\r\nx\r\nget k\r\n"));
    std::string line;
    do {
        line = client.readLine().value_or("");
    } while (line.rfind("STAT ", 0) == 0);
    EXPECT_EQ(line, "END\r\n");
    EXPECT_EQ(client.readLine().value_or(""), "STORED\r\n");
    EXPECT_EQ(client.readLine().value_or(""), "VALUE k 0 1\r\n");
    EXPECT_EQ(client.readLine().value_or(""), "x\r\n");
    EXPECT_EQ(client.readLine().value_or(""), "END\r\n");
}

TEST_F(ServerSocketTest, SigtermWithAClientMidRequestExitsZeroAndPersistsEveryWrite) {
    constexpr int kItems = 500;
    start();
    {
        Client writer(port());
        std::string pipeline;
        for (int i = 0; i < kItems; ++i) {
            pipeline +=
                setRequest("item-" + std::to_string(i), "value-" + std::to_string(i)).encode();
        }
        ASSERT_TRUE(writer.send(pipeline));
        for (int i = 0; i < kItems; ++i) {
            auto ack = writer.readResponse();
            ASSERT_TRUE(ack.has_value()) << i;
            ASSERT_EQ(ack->status, kSuccess) << i;
        }
    }
    // One client stopped half-way through a request, another with a
    // pipeline of writes in flight when SIGTERM comes.
    Client midRequest(port());
    ASSERT_TRUE(midRequest.send(setRequest("never", "complete").encode().substr(0, 30)));
    Client racing(port());
    std::string pipeline;
    for (int i = 0; i < kItems; ++i) {
        pipeline += setRequest("racing-" + std::to_string(i), "r").encode();
    }
    ASSERT_TRUE(racing.send(pipeline));
    EXPECT_EQ(server_->stop(SIGTERM), 0);
    EXPECT_TRUE(midRequest.closedByServer());
    int acknowledged = 0;  // responses come in request order
    while (auto ack = racing.readResponse()) {
        ASSERT_EQ(ack->status, kSuccess);
        ++acknowledged;
    }

    start();
    Client reader(port());
    for (int i = 0; i < kItems; ++i) {
        auto got = reader.call(request(Opcode::Get, "item-" + std::to_string(i)));
        ASSERT_TRUE(got.has_value()) << i;
        ASSERT_EQ(got->status, kSuccess) << i;
        EXPECT_EQ(got->value, "value-" + std::to_string(i));
    }
    for (int i = 0; i < acknowledged; ++i) {
        auto got = reader.call(request(Opcode::Get, "racing-" + std::to_string(i)));
        ASSERT_TRUE(got.has_value()) << i;
        EXPECT_EQ(got->status, kSuccess) << "acknowledged write racing-" << i << " was lost";
    }
    auto never = reader.call(request(Opcode::Get, "never"));
    ASSERT_TRUE(never.has_value());
    EXPECT_EQ(never->status, kNotFound);
}

// One HTTP/1.1 exchange over a raw socket: the status line and the body
// (by Content-Length); nullopt if the reply is cut or late.
struct HttpReply {
    std::string statusLine;
    std::string body;
};
std::optional<HttpReply> httpRequest(std::uint16_t port, const std::string& method,
                                     const std::string& path, const std::string& form = "") {
    Client client(port);
    std::string message = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    if (!form.empty()) {
        message += "Content-Type: application/x-www-form-urlencoded\r\n";
    }
    message += "Content-Length: " + std::to_string(form.size()) + "\r\n\r\n" + form;
    if (!client.send(message)) {
        return std::nullopt;
    }
    HttpReply reply;
    auto status = client.readLine();
    if (!status) {
        return std::nullopt;
    }
    reply.statusLine = *status;
    std::size_t length = 0;
    for (auto header = client.readLine(); header && *header != "\r\n"; header = client.readLine()) {
        if (header->rfind("Content-Length: ", 0) == 0) {
            length = std::stoul(header->substr(16));
        }
    }
    auto body = client.read(length);
    if (!body) {
        return std::nullopt;
    }
    reply.body = *body;
    return reply;
}

// The binary's wiring: --mgmt-port prints its line before the ready line,
// the cluster map points the SDKs at it, a change made there persists, and
// SIGTERM still stops the server with exit 0 (the TearDown).
TEST_F(ServerSocketTest, MgmtPortServesRestBesideKvAndStopsGracefully) {
    start({"--mgmt-port", "0"});
    const std::uint16_t mgmt = server_->mgmtPort();
    ASSERT_NE(mgmt, 0);
    const auto created =
        httpRequest(mgmt, "POST", "/pools/default/buckets/default/scopes", "name=inventory");
    ASSERT_TRUE(created.has_value());
    EXPECT_EQ(created->statusLine, "HTTP/1.1 200 OK\r\n");
    EXPECT_EQ(created->body, "{\"uid\":\"1\"}");

    Client kv(port());
    const auto map = kv.call(request(Opcode::GetClusterConfig));
    ASSERT_TRUE(map.has_value());
    ASSERT_EQ(map->status, kSuccess);
    EXPECT_NE(map->value.find("\"mgmt\":" + std::to_string(mgmt)), std::string::npos) << map->value;

    ASSERT_EQ(server_->stop(SIGTERM), 0);
    start({"--mgmt-port", "0"});
    const auto listed =
        httpRequest(server_->mgmtPort(), "GET", "/pools/default/buckets/default/scopes");
    ASSERT_TRUE(listed.has_value());
    EXPECT_NE(listed->body.find("\"name\":\"inventory\""), std::string::npos) << listed->body;
}

}  // namespace
}  // namespace kvexec::server::test
