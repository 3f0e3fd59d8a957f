// Replication over DCP bytes: node "a" (active) runs a DcpProducer, node
// "b" (replica) a DcpConsumer, and the test carries the bytes between them
// as a socket would. Deterministic on one Manual pool.
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <functional>

#include "dcp/consumer.h"
#include "dcp/producer.h"
#include "engine/manual_bucket_fixture.h"
#include "engine/xattr_blob.h"
#include "executor/test_support.h"
#include "kvexec/engine/xattrs.h"
#include "protocol/binary_response.h"
#include "protocol/client_codec.h"
#include "protocol/dcp.h"

namespace kvexec::dcp {
namespace {

using engine::DurabilityLevel;
using engine::Status;
using engine::test::pending;
using engine::test::setRequest;

namespace wire = protocol::dcp;
using protocol::Opcode;

const std::string kActive{"a"};
const std::string kReplica{"b"};
constexpr engine::Vbid kVb = 1;

// Hands each request in `bytes` (a producer's output: its stream
// messages) to `fn`; responses are skipped.
void forEachRequest(std::string_view bytes,
                    const std::function<void(const protocol::Request&)>& fn) {
    while (!bytes.empty()) {
        if (static_cast<std::uint8_t>(bytes.front()) == 0x81) {
            const auto answer = protocol::parseResponse(bytes);
            EXPECT_EQ(answer.outcome, protocol::ResponseOutcome::Ok);
            if (answer.outcome != protocol::ResponseOutcome::Ok) {
                break;
            }
            bytes.remove_prefix(answer.consumed);
            continue;
        }
        const auto parsed = protocol::parseRequest(bytes, {});
        EXPECT_EQ(parsed.outcome, protocol::ParseOutcome::Ok);
        if (parsed.outcome != protocol::ParseOutcome::Ok) {
            break;
        }
        fn(parsed.request);
        bytes.remove_prefix(parsed.consumed);
    }
}

std::vector<Opcode> messagesIn(std::string_view bytes) {
    std::vector<Opcode> opcodes;
    forEachRequest(bytes, [&](const protocol::Request& r) { opcodes.push_back(r.opcode); });
    return opcodes;
}

std::ptrdiff_t countOf(const std::vector<Opcode>& opcodes, Opcode opcode) {
    return std::count(opcodes.begin(), opcodes.end(), opcode);
}

class DcpReplicationTest : public engine::ManualBucketTest {
  protected:
    void SetUp() override {
        config.nodeName = kActive;
        config.fileOps = activeFiles;
        ManualBucketTest::SetUp();
        replicaConfig = engine::test::testConfig(replicaDir);
        replicaConfig.nodeName = kReplica;
        replicaConfig.unixTime = [this] { return now.load(); };  // the active's clock
        replicaConfig.onReplicaPrepared = [this](engine::Vbid vb, engine::Seqno seqno) {
            if (consumer) {
                consumer->prepared(vb, seqno);
            }
        };
        replica = engine::Bucket::open(pool, replicaConfig);
        pool.runReady(TaskType::Reader);
        ASSERT_EQ(replica->setVBucketState(kVb, engine::VBucketState::Replica), Status::Success);
        ASSERT_EQ(bucket->setVBucketState(kVb, engine::VBucketState::Active, {{kActive, kReplica}}),
                  Status::Success);
    }
    void TearDown() override {
        disconnect();
        replica.reset();
        ManualBucketTest::TearDown();
    }
    void connect(std::size_t bufferSize = std::size_t{1} << 20) {
        producer = std::make_shared<DcpProducer>(*bucket, ProducerOptions{"repl:b", kReplica, true},
                                                 [] {});
        consumer = std::make_shared<DcpConsumer>(
            *replica, ConsumerOptions{"repl:b", kReplica, bufferSize, true}, [] {});
        consumer->open();
        consumer->requestStream(kVb);
        pump();
    }
    void disconnect() {
        consumer.reset();
        if (producer) {
            producer->close();
            producer.reset();
        }
        toConsumer.clear();
        toProducer.clear();
    }
    // The producer's end of the socket: DCP_OPEN is the server's to answer.
    bool producerReceives() {
        std::size_t at = 0;
        while (at < toProducer.size()) {
            if (static_cast<std::uint8_t>(toProducer[at]) == 0x81) {  // a response: to a noop
                const auto answer =
                    protocol::parseResponse(std::string_view(toProducer).substr(at));
                if (answer.outcome == protocol::ResponseOutcome::Incomplete) {
                    break;
                }
                if (answer.outcome != protocol::ResponseOutcome::Ok ||
                    !producer->handleResponse(answer.response.opcode, answer.response.opaque)) {
                    return false;
                }
                at += answer.consumed;
                continue;
            }
            const auto parsed = protocol::parseRequest(std::string_view(toProducer).substr(at), {});
            if (parsed.outcome == protocol::ParseOutcome::Incomplete) {
                break;
            }
            if (parsed.outcome != protocol::ParseOutcome::Ok) {
                return false;
            }
            if (parsed.request.opcode == protocol::Opcode::DcpOpen) {
                std::string answer;
                protocol::appendResponse(answer,
                                         {protocol::Opcode::DcpOpen, protocol::Status::Success,
                                          parsed.request.opaque, 0, 0});
                toConsumer += answer;
            } else if (refuseMarkerVersion && isMarkerVersionControl(parsed.request)) {
                std::string answer;  // as a producer from before v2.2 markers
                protocol::appendResponse(
                    answer, {protocol::Opcode::DcpControl, protocol::Status::InvalidArguments,
                             parsed.request.opaque, 0, 0});
                toConsumer += answer;
            } else if (!producer->handle(parsed.request)) {
                return false;
            }
            at += parsed.consumed;
        }
        toProducer.erase(0, at);
        return true;
    }
    // Runs both nodes' tasks and carries bytes until nothing moves.
    void pump() {
        for (int round = 0; round < 10'000; ++round) {
            settle();
            const std::string sent = producer->takeOutput();
            bytesToConsumer += sent.size();
            toConsumer += sent;
            std::size_t consumed = 0;
            ASSERT_TRUE(consumer->receive(toConsumer, consumed)) << "the consumer closed";
            maxUnacked = std::max(maxUnacked, producer->unacknowledgedBytes());
            toConsumer.erase(0, consumed);
            toProducer += consumer->takeOutput();
            const bool moved = consumed != 0 || !toProducer.empty();
            ASSERT_TRUE(producerReceives()) << "the producer closed";
            if (!moved && toConsumer.empty() && pool.runReady(TaskType::NonIO) == 0) {
                return;
            }
        }
        FAIL() << "replication did not settle";
    }
    // Deletes "deleted" (seqno 1), stores "kept" (3) and compacts: the
    // tombstone (2) is purged and the purge seqno is 3.
    void purgeTheDeletionOfDeleted() {
        bucket->remove(engine::RemoveRequest{kVb, "deleted", 0, {}},
                       [](const engine::MutationResult&) {});
        engine::test::storeNow(*bucket, setRequest(kVb, "kept", "v"));
        settle();
        std::optional<Status> compacted;
        bucket->compact(kVb, [&](Status s) { compacted = s; });
        pool.runReady(TaskType::AuxIO);
        ASSERT_EQ(compacted, Status::Success);
        ASSERT_EQ(bucket->observeSeqno(kVb).purgeSeqno, 3u);
    }
    // A document of the active that expires in 10 s.
    void storeExpiring(const std::string& key) {
        auto set = setRequest(kVb, key, "v");
        set.expiry = now + 10;
        ASSERT_EQ(engine::test::storeNow(*bucket, set)->status, Status::Success);
    }
    // A producer of the active's, as a consumer other than ours would
    // open it: with `controls` sent before its stream request (from 0).
    std::shared_ptr<DcpProducer> producerWith(
        const std::vector<std::pair<std::string_view, std::string_view>>& controls) {
        auto other =
            std::make_shared<DcpProducer>(*bucket, ProducerOptions{"observer", {}, true}, [] {});
        std::string requests;
        for (const auto& [key, value] : controls) {
            wire::encodeControl(requests, {2, key, value});
        }
        wire::StreamRequest stream;
        stream.vbucket = kVb;
        stream.opaque = 7;
        stream.end = ~std::uint64_t{0};
        wire::encodeStreamRequest(requests, stream);
        for (std::string_view rest = requests; !rest.empty();) {
            const auto parsed = protocol::parseRequest(rest, {});
            EXPECT_EQ(parsed.outcome, protocol::ParseOutcome::Ok);
            EXPECT_TRUE(other->handle(parsed.request));
            rest.remove_prefix(parsed.consumed);
        }
        return other;
    }
    engine::GetResult replicaRead(const std::string& key) {
        engine::GetResult out;
        replica->getReplica(kVb, engine::DocKey{key}, [&](const engine::GetResult& r) { out = r; });
        return out;
    }

    static bool isMarkerVersionControl(const protocol::Request& request) {
        if (request.opcode != protocol::Opcode::DcpControl) {
            return false;
        }
        const auto control = wire::decodeControl(request);
        return control && control->key == "max_marker_version";
    }

    bool refuseMarkerVersion = false;
    std::shared_ptr<storage::test::FaultyFileOps> activeFiles =
        std::make_shared<storage::test::FaultyFileOps>();
    engine::test::TempDir replicaDir;
    engine::BucketConfig replicaConfig;
    std::unique_ptr<engine::Bucket> replica;
    std::shared_ptr<DcpProducer> producer;
    std::shared_ptr<DcpConsumer> consumer;
    std::string toConsumer, toProducer;
    std::size_t maxUnacked = 0;
    std::size_t bytesToConsumer = 0;
};

TEST_F(DcpReplicationTest, DocumentsReplicateWithTheActivesSeqnosAndCas) {
    connect();
    ASSERT_TRUE(consumer->established());
    ASSERT_EQ(consumer->streamState(kVb), DcpConsumer::StreamState::Open);
    const auto set = engine::test::storeNow(*bucket, setRequest(kVb, "k", "v"));
    engine::test::storeNow(*bucket, setRequest(kVb, "gone", "v"));
    bucket->remove(engine::RemoveRequest{kVb, "gone", 0, {}}, [](const engine::MutationResult&) {});
    pump();
    const auto copy = replicaRead("k");
    ASSERT_EQ(copy.status, Status::Success);
    EXPECT_EQ(copy.item.value, "v");
    EXPECT_EQ(copy.item.meta.cas, set->cas);
    EXPECT_EQ(copy.item.meta.seqno, set->token.seqno);
    EXPECT_EQ(replicaRead("gone").status, Status::KeyNotFound);
    EXPECT_EQ(replica->observeSeqno(kVb).currentSeqno, bucket->observeSeqno(kVb).currentSeqno);
    EXPECT_EQ(*replica->failoverLog(kVb), *bucket->failoverLog(kVb)) << "the active's history";
}

// A tombstone's xattrs cross the wire with its deletion (transactions
// stage inserts in them): promoted, the replica holds what the active held.
TEST_F(DcpReplicationTest, ATombstonesXattrsReachTheReplica) {
    connect();
    const std::string blob = engine::test::xattrBlobOf({{"txn", "{}"}});
    auto staged = setRequest(kVb, "staged", blob);
    staged.operation = engine::StoreOperation::Add;
    staged.datatype = engine::kDatatypeXattr;
    staged.accessDeleted = true;
    staged.storeDeleted = true;
    ASSERT_EQ(engine::test::storeNow(*bucket, staged)->status, Status::Success);
    pump();
    EXPECT_EQ(replicaRead("staged").status, Status::KeyNotFound);
    const auto expectTombstone = [&](const engine::GetResult& copy) {
        ASSERT_EQ(copy.status, Status::Success);
        EXPECT_TRUE(copy.item.meta.deleted);
        EXPECT_EQ(copy.item.value, blob);
        EXPECT_EQ(copy.item.meta.datatype, engine::kDatatypeXattr);
    };
    engine::GetResult copy;
    const auto keep = [&](const engine::GetResult& r) { copy = r; };
    replica->getReplicaIncludingDeleted(kVb, engine::DocKey{"staged"}, keep);
    expectTombstone(copy);
    ASSERT_EQ(replica->setVBucketState(kVb, engine::VBucketState::Active), Status::Success);
    replica->getIncludingDeleted(kVb, engine::DocKey{"staged"}, keep);
    expectTombstone(copy);
}

// Our consumer enables expirations (enable_expiry_opcode): an expiry
// crosses the wire as DCP_EXPIRATION, and the replica applies it as the
// deletion it is, at the active's seqno, kept as an expiry's: promoted, it
// streams it on as one.
TEST_F(DcpReplicationTest, AnExpiryReachesTheReplicaAsAnExpirationAndDeletesItsCopy) {
    connect();
    storeExpiring("k");
    pump();
    ASSERT_EQ(replicaRead("k").status, Status::Success);
    now += 11;
    ASSERT_EQ(engine::test::getNow(*bucket, kVb, "k").status, Status::KeyNotFound);
    settle();
    const std::string sent = producer->takeOutput();
    EXPECT_EQ(countOf(messagesIn(sent), Opcode::DcpExpiration), 1);
    toConsumer += sent;
    pump();
    EXPECT_EQ(replicaRead("k").status, Status::KeyNotFound);
    EXPECT_EQ(replica->observeSeqno(kVb).currentSeqno, bucket->observeSeqno(kVb).currentSeqno);

    disconnect();
    ASSERT_EQ(replica->setVBucketState(kVb, engine::VBucketState::Active), Status::Success);
    std::vector<engine::StreamEventKind> kinds;
    auto stream = replica->openReplicationStream(
        {kVb, 1}, [&](const engine::StreamEvent& e) { kinds.push_back(e.kind); });
    ASSERT_NE(stream, nullptr);
    settle();
    EXPECT_EQ(kinds, (std::vector<engine::StreamEventKind>{engine::StreamEventKind::Snapshot,
                                                           engine::StreamEventKind::Expiration}));
}

// An expiry's tombstone keeps the document's system xattrs; its
// DCP_EXPIRATION carries them, and the replica's tombstone holds them.
TEST_F(DcpReplicationTest, AnExpirysSystemXattrsReachTheReplica) {
    connect();
    auto set =
        setRequest(kVb, "k", engine::test::xattrBlobOf({{"_sys", "1"}, {"user", "2"}}) + "v");
    set.datatype = engine::kDatatypeXattr;
    set.expiry = now + 10;
    ASSERT_EQ(engine::test::storeNow(*bucket, set)->status, Status::Success);
    pump();
    now += 11;
    ASSERT_EQ(engine::test::getNow(*bucket, kVb, "k").status, Status::KeyNotFound);
    settle();
    const std::string sent = producer->takeOutput();
    ASSERT_EQ(countOf(messagesIn(sent), Opcode::DcpExpiration), 1);
    toConsumer += sent;
    pump();
    engine::GetResult copy;
    replica->getReplicaIncludingDeleted(kVb, engine::DocKey{"k"},
                                        [&](const engine::GetResult& r) { copy = r; });
    ASSERT_EQ(copy.status, Status::Success);
    EXPECT_TRUE(copy.item.meta.deleted);
    EXPECT_EQ(copy.item.value, engine::test::xattrBlobOf({{"_sys", "1"}}));
    EXPECT_EQ(copy.item.meta.datatype, engine::kDatatypeXattr);
}

// DCP_EXPIRATION goes only to a consumer that asked for it (DCP_CONTROL
// enable_expiry_opcode true, as kv_engine's consumers send); any other
// gets the deletion it is.
TEST_F(DcpReplicationTest, AProducerSendsExpirationsOnlyToAConsumerThatEnabledThem) {
    storeExpiring("k");
    now += 11;
    ASSERT_EQ(engine::test::getNow(*bucket, kVb, "k").status, Status::KeyNotFound);
    for (const std::string_view enabled : {"", "false", "true"}) {
        auto other =
            enabled.empty() ? producerWith({}) : producerWith({{"enable_expiry_opcode", enabled}});
        settle();
        const auto sent = messagesIn(other->takeOutput());
        const bool expiration = enabled == "true";
        EXPECT_EQ(countOf(sent, Opcode::DcpExpiration), expiration ? 1 : 0) << enabled;
        EXPECT_EQ(countOf(sent, Opcode::DcpDeletion), expiration ? 0 : 1) << enabled;
        other->close();
    }
}

// A stream whose backfill cannot read the disk cannot go on from memory
// (it would skip seqnos): it ends with STREAM_END, reason BackfillFailed
// (kv_engine's), and the producer forgets it.
TEST_F(DcpReplicationTest, AStreamWhoseBackfillFailsEndsWithStreamEndBackfillFailed) {
    engine::test::storeNow(*bucket, setRequest(kVb, "k", "v"));
    settle();
    activeFiles->failNext(storage::test::FaultyFileOps::Op::Pread, EIO);
    auto other = producerWith({});
    settle();
    std::vector<wire::StreamEnd> ends;
    forEachRequest(other->takeOutput(), [&](const protocol::Request& r) {
        if (r.opcode == Opcode::DcpStreamEnd) {
            const auto end = wire::decodeStreamEnd(r);
            ASSERT_TRUE(end);
            ends.push_back(*end);
        }
    });
    EXPECT_EQ(ends,
              (std::vector<wire::StreamEnd>{{kVb, 7, wire::StreamEndReason::BackfillFailed}}));
    EXPECT_EQ(other->openStreams(), 0u);
    EXPECT_EQ(bucket->stats().streamsOpen, 0u);
}

// Told that its stream ended, the consumer marks it Ended (its node's
// replication client asks again for those); asked again once the disk
// reads, the stream catches the replica up.
TEST_F(DcpReplicationTest, AfterAFailedBackfillTheConsumerIsToldAndAskingAgainCatchesUp) {
    for (int i = 0; i < 3; ++i) {
        engine::test::storeNow(*bucket, setRequest(kVb, storage::test::keyOf(i, "k"), "v"));
    }
    settle();
    activeFiles->failNext(storage::test::FaultyFileOps::Op::Pread, EIO);
    connect();
    EXPECT_EQ(consumer->streamState(kVb), DcpConsumer::StreamState::Ended);
    EXPECT_EQ(producer->openStreams(), 0u);
    consumer->requestStream(kVb);
    pump();
    EXPECT_EQ(consumer->streamState(kVb), DcpConsumer::StreamState::Open);
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(replicaRead(storage::test::keyOf(i, "k")).item.value, "v") << i;
    }
    EXPECT_EQ(replica->observeSeqno(kVb).currentSeqno, 3u);
}

// Demoted, the active sends what it had queued, then STREAM_END
// StateChanged: never the aborts it then makes of its SyncWrites.
TEST_F(DcpReplicationTest, ADemotedActiveEndsItsStreamsWithStateChangedBeforeItsAborts) {
    ASSERT_EQ(
        bucket->setVBucketState(kVb, engine::VBucketState::Active, {{kActive, kReplica, "c"}}),
        Status::Success);
    auto other = producerWith({{"enable_sync_writes", "true"}});
    settle();
    auto write = pending<engine::MutationResult>();
    bucket->store(setRequest(kVb, "k", "v", DurabilityLevel::Majority), write->callback());
    ASSERT_EQ(bucket->setVBucketState(kVb, engine::VBucketState::Replica), Status::Success);
    EXPECT_EQ(write->result().status, Status::SyncWriteAmbiguous);
    settle();
    std::vector<Opcode> sent;
    std::vector<wire::StreamEnd> ends;
    forEachRequest(other->takeOutput(), [&](const protocol::Request& r) {
        sent.push_back(r.opcode);
        if (r.opcode == Opcode::DcpStreamEnd) {
            const auto end = wire::decodeStreamEnd(r);
            ASSERT_TRUE(end);
            ends.push_back(*end);
        }
    });
    EXPECT_EQ(sent, (std::vector<Opcode>{Opcode::DcpSnapshotMarker, Opcode::DcpPrepare,
                                         Opcode::DcpStreamEnd}));
    EXPECT_EQ(ends, (std::vector<wire::StreamEnd>{{kVb, 7, wire::StreamEndReason::StateChanged}}));
    EXPECT_EQ(other->openStreams(), 0u);
    EXPECT_EQ(bucket->stats().streamsOpen, 0u);
}

TEST_F(DcpReplicationTest, MajorityAndPersistToMajorityCommitOnTheReplicasAcknowledgement) {
    connect();
    for (const auto level : {DurabilityLevel::Majority, DurabilityLevel::MajorityAndPersistToActive,
                             DurabilityLevel::PersistToMajority}) {
        auto write = pending<engine::MutationResult>();
        bucket->store(setRequest(kVb, "k", std::string(engine::to_string(level)), level),
                      write->callback());
        pump();
        ASSERT_EQ(write->calls(), 1) << engine::to_string(level);
        EXPECT_EQ(write->result().status, Status::Success) << engine::to_string(level);
        const auto copy = replicaRead("k");
        EXPECT_EQ(copy.item.value, engine::to_string(level));
        EXPECT_EQ(copy.item.meta.cas, write->result().cas);
    }
}

// A durable delete's prepare is a deleted document at a level: it must
// reach the replica as a prepare (not as an abort), which acknowledges it.
TEST_F(DcpReplicationTest, ADurableRemoveCommitsOnTheReplicasAcknowledgement) {
    connect();
    engine::test::storeNow(*bucket, setRequest(kVb, "k", "v"));
    engine::RemoveRequest remove{kVb, "k", 0, {}};
    remove.durability.level = DurabilityLevel::Majority;
    auto removed = pending<engine::MutationResult>();
    bucket->remove(remove, removed->callback());
    pump();
    ASSERT_EQ(removed->calls(), 1);
    EXPECT_EQ(removed->result().status, Status::Success);
    EXPECT_EQ(replicaRead("k").status, Status::KeyNotFound);
    EXPECT_EQ(replica->observeSeqno(kVb).currentSeqno, bucket->observeSeqno(kVb).currentSeqno);
}

TEST_F(DcpReplicationTest, WithoutTheReplicaAMajorityWriteWaitsForItsDeadline) {
    auto req = setRequest(kVb, "k", "v", DurabilityLevel::Majority);
    req.durability.timeout = std::chrono::milliseconds(1);
    auto write = pending<engine::MutationResult>();
    bucket->store(req, write->callback());
    ASSERT_TRUE(kvexec::test::waitFor([&] {
        pool.runNext(TaskType::NonIO);
        return write->done();
    }));
    EXPECT_EQ(write->result().status, Status::SyncWriteAmbiguous);
    // Connected later, the replica gets the abort, and agrees.
    connect();
    EXPECT_EQ(replicaRead("k").status, Status::KeyNotFound);
    EXPECT_EQ(replica->observeSeqno(kVb).currentSeqno, bucket->observeSeqno(kVb).currentSeqno);
}

TEST_F(DcpReplicationTest, ASlowConsumerBoundsWhatTheProducerHasInFlight) {
    constexpr std::size_t kWindow = 8 * 1024;
    for (int i = 0; i < 200; ++i) {
        engine::test::storeNow(
            *bucket, setRequest(kVb, storage::test::keyOf(i, "k"), std::string(1000, 'x')));
    }
    settle();
    for (int i = 200; i < 300; ++i) {  // some from disk, some from memory
        engine::test::storeNow(
            *bucket, setRequest(kVb, storage::test::keyOf(i, "k"), std::string(1000, 'x')));
    }
    connect(kWindow);
    EXPECT_LE(maxUnacked, kWindow + 2 * 1100) << "more than a window in flight";
    EXPECT_GT(maxUnacked, kWindow / 2) << "the window was never used";
    for (int i = 0; i < 300; ++i) {
        ASSERT_EQ(replicaRead(storage::test::keyOf(i, "k")).status, Status::Success) << i;
    }
    EXPECT_EQ(replica->observeSeqno(kVb).currentSeqno, 300u);
}

// A stream paused by a full window resumes only where its vBucket is still
// active: demoted meanwhile, it ends with STREAM_END and the consumer knows
// (it asks again, and is refused until the vBucket is active there again).
TEST_F(DcpReplicationTest, AStreamThatCannotResumeEndsAndTheConsumerIsTold) {
    connect(8 * 1024);
    for (int i = 0; i < 50; ++i) {
        engine::test::storeNow(
            *bucket, setRequest(kVb, storage::test::keyOf(i, "k"), std::string(1000, 'x')));
    }
    settle();  // the window fills: the stream pauses
    ASSERT_EQ(producer->openStreams(), 1u);
    ASSERT_EQ(bucket->setVBucketState(kVb, engine::VBucketState::Replica), Status::Success);
    pump();  // the consumer's credit comes back; the stream cannot resume
    EXPECT_EQ(consumer->streamState(kVb), DcpConsumer::StreamState::Ended);
    EXPECT_EQ(producer->openStreams(), 0u);
}

TEST_F(DcpReplicationTest, AReconnectedReplicaResumesWhereItStood) {
    connect();
    for (int i = 0; i < 10; ++i) {
        engine::test::storeNow(*bucket, setRequest(kVb, storage::test::keyOf(i, "k"), "v"));
    }
    pump();
    disconnect();
    engine::test::storeNow(*bucket, setRequest(kVb, "later", "v"));
    connect();
    // One new document: the stream started at the replica's seqno 10.
    EXPECT_EQ(replicaRead("later").item.value, "v");
    EXPECT_EQ(replica->observeSeqno(kVb).currentSeqno, 11u);
}

// The replica holds changes its active never had (on the same history): the
// producer answers ROLLBACK to the active's seqno, the replica goes back to
// its commit there, on disk and in memory, and resumes from it: nothing it
// shares with the active is sent again.
TEST_F(DcpReplicationTest, ADivergedReplicaRollsBackToTheSharedSeqnoAndResumesFromThere) {
    const std::string big(2000, 'v');
    connect();
    for (int i = 0; i < 5; ++i) {
        engine::test::storeNow(*bucket, setRequest(kVb, storage::test::keyOf(i, "k"), big));
    }
    pump();
    engine::test::storeNow(*bucket, setRequest(kVb, storage::test::keyOf(0, "k"), "second"));
    pump();
    disconnect();
    // Changes only the replica has (seqnos 7 and 8), persisted.
    for (const auto& [key, seqno] : {std::pair{std::string("only-on-replica"), 7},
                                     std::pair{storage::test::keyOf(0, "k"), 8}}) {
        engine::StreamEvent event;
        event.kind = engine::StreamEventKind::Mutation;
        event.item = engine::Item{
            kVb, key, "diverged",
            engine::ItemMeta{1000u + seqno, static_cast<engine::Seqno>(seqno), 0, 0, 0, false}};
        ASSERT_EQ(replica->applyReplicated(kVb, event), Status::Success);
    }
    pool.runReady(TaskType::Writer);
    ASSERT_EQ(replica->observeSeqno(kVb).persistedSeqno, 8u);

    bytesToConsumer = 0;
    connect();
    EXPECT_EQ(consumer->streamState(kVb), DcpConsumer::StreamState::Open);
    EXPECT_LT(bytesToConsumer, big.size()) << "the shared history was sent again";
    EXPECT_EQ(replica->observeSeqno(kVb).currentSeqno, 6u);
    EXPECT_EQ(replica->observeSeqno(kVb).persistedSeqno, 6u);
    EXPECT_EQ(replicaRead("only-on-replica").status, Status::KeyNotFound);
    EXPECT_EQ(replicaRead(storage::test::keyOf(0, "k")).item.value, "second");
    EXPECT_EQ(replicaRead(storage::test::keyOf(4, "k")).item.value, big);
    // And it streams on from there.
    engine::test::storeNow(*bucket, setRequest(kVb, "later", "v"));
    pump();
    EXPECT_EQ(replicaRead("later").item.value, "v");
    EXPECT_EQ(replica->observeSeqno(kVb).currentSeqno, 7u);
}

// Compaction purged a tombstone the replica never saw: resuming from below
// the purge seqno would miss the deletion, so the replica starts over.
TEST_F(DcpReplicationTest, AReplicaBehindThePurgeSeqnoStartsOver) {
    connect();
    engine::test::storeNow(*bucket, setRequest(kVb, "deleted", "v"));
    pump();
    disconnect();
    ASSERT_NO_FATAL_FAILURE(purgeTheDeletionOfDeleted());
    connect();
    EXPECT_EQ(consumer->streamState(kVb), DcpConsumer::StreamState::Open);
    EXPECT_EQ(replicaRead("deleted").status, Status::KeyNotFound);
    EXPECT_EQ(replicaRead("kept").item.value, "v");
    EXPECT_EQ(replica->observeSeqno(kVb).currentSeqno, 3u);
}

// The replica got part of a disk snapshot from its old active, which left
// out k's first version ("old", seqno 1) since it had k's second (3). The
// old active is gone; its successor ("a", promoted with seqnos 1-2 only)
// has k = "old". The replica asks with the snapshot it is inside: the new
// history left it there, so it starts over and gets k. (Asked from seqno 2
// as if that were whole, it would be sent nothing and miss k for good.)
TEST_F(DcpReplicationTest, AReplicaInsideADiskSnapshotOfALostHistoryStartsOverAndMissesNothing) {
    engine::test::TempDir oldDir;
    auto oldConfig = engine::test::testConfig(oldDir);
    oldConfig.nodeName = "old";
    auto old = engine::Bucket::open(pool, oldConfig);
    pool.runReady(TaskType::Reader);
    ASSERT_EQ(old->setVBucketState(kVb, engine::VBucketState::Active, {{"old"}}), Status::Success);
    for (const auto& [key, value] : {std::pair{"k", "old"}, {"x", "v"}, {"k", "new"}}) {
        engine::test::storeNow(*old, setRequest(kVb, key, value));
    }
    settle();
    const auto oldLog = *old->failoverLog(kVb);
    std::vector<engine::StreamEvent> backfill;
    auto stream = old->openReplicationStream(
        {kVb, 0}, [&](const engine::StreamEvent& e) { backfill.push_back(e); });
    settle();
    stream->close();
    ASSERT_EQ(backfill.size(), 3u);  // the disk snapshot [1, 3]: x (2) and k (3)
    ASSERT_EQ(replica->adoptFailoverLog(kVb, oldLog), Status::Success);
    for (std::size_t i = 0; i < 2; ++i) {  // its marker and x
        ASSERT_EQ(replica->applyReplicated(kVb, backfill[i]), Status::Success);
    }
    pool.runReady(TaskType::Writer);

    // "a" held seqnos 1-2 of the old history as a replica, then was promoted.
    ASSERT_EQ(bucket->setVBucketState(kVb, engine::VBucketState::Replica), Status::Success);
    ASSERT_EQ(bucket->adoptFailoverLog(kVb, oldLog), Status::Success);
    engine::StreamEvent marker;
    marker.kind = engine::StreamEventKind::Snapshot;
    marker.snapStart = 1;
    marker.snapEnd = 2;
    ASSERT_EQ(bucket->applyReplicated(kVb, marker), Status::Success);
    for (const auto& [key, seqno] : {std::pair{"k", 1}, {"x", 2}}) {
        engine::StreamEvent change;
        change.item = engine::Item{
            kVb, key, key == std::string("k") ? "old" : "v",
            engine::ItemMeta{100u + seqno, static_cast<engine::Seqno>(seqno), 0, 0, 0, false}};
        ASSERT_EQ(bucket->applyReplicated(kVb, change), Status::Success);
    }
    ASSERT_EQ(bucket->setVBucketState(kVb, engine::VBucketState::Active, {{kActive, kReplica}}),
              Status::Success);
    settle();

    connect();
    EXPECT_EQ(consumer->streamState(kVb), DcpConsumer::StreamState::Open);
    EXPECT_EQ(replicaRead("k").item.value, "old");
    EXPECT_EQ(replicaRead("x").item.value, "v");
    EXPECT_EQ(replica->observeSeqno(kVb).currentSeqno, 2u);
}

// A replica built from its active's disk never saw the tombstones the
// active purged. The disk snapshot's marker (v2.2, which our consumer asks
// for with DCP_CONTROL max_marker_version, as kv_engine's does) carries the
// purge seqno; the replica takes it and writes it before the snapshot's
// items, so that promoted, it rolls back a consumer that would miss the
// deletions.
TEST_F(DcpReplicationTest, AReplicaBuiltFromDiskTakesItsActivesPurgeSeqnoBeforeItsItems) {
    engine::test::storeNow(*bucket, setRequest(kVb, "deleted", "v"));
    ASSERT_NO_FATAL_FAILURE(purgeTheDeletionOfDeleted());

    // The marker's form follows the control.
    for (const std::string_view version : {"", "2.2"}) {
        auto other =
            version.empty() ? producerWith({}) : producerWith({{"max_marker_version", version}});
        settle();
        std::vector<wire::SnapshotMarker> markers;
        forEachRequest(other->takeOutput(), [&](const protocol::Request& r) {
            if (r.opcode == Opcode::DcpSnapshotMarker) {
                const auto marker = wire::decodeSnapshotMarker(r);
                ASSERT_TRUE(marker);
                markers.push_back(*marker);
            }
        });
        ASSERT_EQ(markers.size(), 1u) << version;
        EXPECT_EQ(markers[0].format, version.empty() ? wire::SnapshotMarkerFormat::V1
                                                     : wire::SnapshotMarkerFormat::V2_2);
        EXPECT_EQ(markers[0].purgeSeqno, version.empty() ? 0u : 3u);
        EXPECT_EQ(markers[0].maxVisibleSeqno, version.empty() ? 0u : 3u);
        other->close();
    }

    connect();
    EXPECT_EQ(replicaRead("kept").item.value, "v");
    EXPECT_EQ(replica->observeSeqno(kVb).purgeSeqno, 3u);
    engine::test::TempDir copy;  // a crash once the items are on disk
    const auto crashed = openCrashCopy(copy, replicaConfig);
    ASSERT_EQ(crashed->observeSeqno(kVb).persistedSeqno, 3u);
    EXPECT_EQ(crashed->observeSeqno(kVb).purgeSeqno, 3u) << "the items without the purge seqno";
    // Promoted, it sends a consumer from below the purge seqno back to 0.
    ASSERT_EQ(replica->setVBucketState(kVb, engine::VBucketState::Active, {{kReplica}}),
              Status::Success);
    const auto promoted = replica->observeSeqno(kVb);
    EXPECT_EQ(
        engine::decideRollback(*replica->failoverLog(kVb), promoted.currentSeqno,
                               promoted.purgeSeqno, {bucket->failoverLog(kVb)->uuid(), 1, 1, 1}),
        (engine::RollbackDecision{true, 0}));
}

// A producer from before v2.2 markers refuses max_marker_version: the
// connection goes on with v1 markers (and no purge seqnos).
TEST_F(DcpReplicationTest, AProducerThatRefusesV2_2MarkersStillReplicates) {
    engine::test::storeNow(*bucket, setRequest(kVb, "k", "v"));
    settle();  // from disk
    refuseMarkerVersion = true;
    connect();
    engine::test::storeNow(*bucket, setRequest(kVb, "later", "v"));
    pump();
    EXPECT_EQ(consumer->streamState(kVb), DcpConsumer::StreamState::Open);
    EXPECT_EQ(replicaRead("k").item.value, "v");
    EXPECT_EQ(replicaRead("later").item.value, "v");
}

// The consumer enables noops at its interval (5 s); the producer sends one
// per interval and gives up on a consumer that leaves one unanswered for a
// whole interval; the consumer gives up on a producer silent for two.
TEST_F(DcpReplicationTest, NoopsTellEachSideTheOtherIsGone) {
    using std::chrono::seconds;
    connect();
    const auto t0 = std::chrono::steady_clock::now();
    ASSERT_TRUE(producer->tick(t0));               // sends the first noop
    pump();                                        // which the consumer answers
    ASSERT_TRUE(producer->tick(t0 + seconds(5)));  // the next one
    EXPECT_TRUE(producer->tick(t0 + seconds(9)));  // unanswered, within its interval
    EXPECT_FALSE(producer->tick(t0 + seconds(10))) << "a whole interval unanswered";

    EXPECT_TRUE(consumer->tick(t0));
    EXPECT_TRUE(consumer->tick(t0 + seconds(9)));
    EXPECT_FALSE(consumer->tick(t0 + seconds(10))) << "silent for two intervals";
    std::size_t consumed = 0;
    const std::string noop = producer->takeOutput();
    ASSERT_FALSE(noop.empty());
    ASSERT_TRUE(consumer->receive(noop, consumed));
    EXPECT_TRUE(consumer->tick(t0 + seconds(11))) << "heard again";
}

TEST_F(DcpReplicationTest, MalformedBytesCloseTheConnectionNotTheNode) {
    connect();
    std::size_t consumed = 0;
    const std::string garbage(24, '\x80');  // a request header with absurd lengths
    EXPECT_FALSE(consumer->receive(garbage, consumed));
    protocol::Request notForAProducer;
    notForAProducer.opcode = protocol::Opcode::DcpMutation;
    EXPECT_FALSE(producer->handle(notForAProducer));
    // The node goes on: another connection replicates.
    disconnect();
    engine::test::storeNow(*bucket, setRequest(kVb, "k", "v"));
    connect();
    EXPECT_EQ(replicaRead("k").item.value, "v");
}

TEST_F(DcpReplicationTest, AStreamOfAVBucketThatIsNotActiveIsRefused) {
    ASSERT_EQ(bucket->setVBucketState(kVb, engine::VBucketState::Replica), Status::Success);
    connect();
    EXPECT_EQ(consumer->streamState(kVb), DcpConsumer::StreamState::Failed);
}

// The map takes a vBucket from this replica (it reaches the bucket before
// the connection hears) while its active keeps writing: the refused
// message ends that stream alone (closed on the producer), and the
// connection and its other streams go on.
TEST_F(DcpReplicationTest, AMessageForAVBucketNoLongerAReplicaEndsOnlyItsStream) {
    constexpr engine::Vbid kOther = 2;
    ASSERT_EQ(replica->setVBucketState(kOther, engine::VBucketState::Replica), Status::Success);
    ASSERT_EQ(bucket->setVBucketState(kOther, engine::VBucketState::Active, {{kActive, kReplica}}),
              Status::Success);
    connect();
    consumer->requestStream(kOther);
    pump();
    ASSERT_EQ(producer->openStreams(), 2u);
    ASSERT_EQ(replica->setVBucketState(kOther, engine::VBucketState::Dead), Status::Success);
    engine::test::storeNow(*bucket, setRequest(kOther, "moved", "v"));
    engine::test::storeNow(*bucket, setRequest(kVb, "k", "v"));
    pump();  // fails if the consumer closes the connection
    EXPECT_EQ(consumer->streamState(kOther), DcpConsumer::StreamState::Failed);
    EXPECT_EQ(producer->openStreams(), 1u) << "the dropped vBucket's stream was not closed";
    EXPECT_EQ(consumer->streamState(kVb), DcpConsumer::StreamState::Open);
    EXPECT_EQ(replicaRead("k").item.value, "v");
    // The vBucket's later changes are no longer sent.
    const auto before = bytesToConsumer;
    engine::test::storeNow(*bucket, setRequest(kOther, "later", "v"));
    pump();
    EXPECT_EQ(bytesToConsumer, before);
}

// A closed stream's messages already on the wire are dropped, and the
// producer ends the stream; asked for again, it resumes from where the
// replica stands.
TEST_F(DcpReplicationTest, AClosedStreamsMessagesInFlightAreDroppedAndTheProducerEndsIt) {
    connect();
    engine::test::storeNow(*bucket, setRequest(kVb, "k", "v"));
    settle();  // the mutation is in the producer's output, not yet sent
    consumer->closeStream(kVb);
    pump();
    EXPECT_EQ(consumer->streamState(kVb), std::nullopt);
    EXPECT_EQ(producer->openStreams(), 0u);
    EXPECT_EQ(replicaRead("k").status, Status::KeyNotFound) << "applied after its stream closed";
    consumer->requestStream(kVb);
    pump();
    EXPECT_EQ(consumer->streamState(kVb), DcpConsumer::StreamState::Open);
    EXPECT_EQ(replicaRead("k").item.value, "v");
}

// Closed and asked for again at once, a vBucket gets a new stream whose
// messages are told from the old one's still in flight (each request has
// its own opaque): the replica applies each change once, in order.
TEST_F(DcpReplicationTest, AStreamAskedForAgainIgnoresTheOneBeforeIt) {
    connect();
    for (int i = 0; i < 3; ++i) {
        engine::test::storeNow(*bucket, setRequest(kVb, storage::test::keyOf(i, "k"), "v"));
    }
    settle();
    consumer->closeStream(kVb);
    consumer->requestStream(kVb);
    pump();  // fails if a change arrives twice (out of order: the connection closes)
    EXPECT_EQ(consumer->streamState(kVb), DcpConsumer::StreamState::Open);
    EXPECT_EQ(producer->openStreams(), 1u);
    engine::test::storeNow(*bucket, setRequest(kVb, "later", "v"));
    pump();
    EXPECT_EQ(replicaRead("later").item.value, "v");
    EXPECT_EQ(replica->observeSeqno(kVb).currentSeqno, 4u);
}

}  // namespace
}  // namespace kvexec::dcp
