// etcd's JSON gateway format (cluster/etcd_codec.h), from replies as etcd
// 3.4.23 writes them, and the rule that anything malformed is an EtcdError.
#include <gtest/gtest.h>

#include <functional>

#include "cluster/etcd_codec.h"

namespace kvexec::cluster {
namespace {

namespace codec = etcd_codec;

TEST(EtcdCodecTest, PrefixEndIncrementsTheLastByteBelowFF) {
    EXPECT_EQ(codec::prefixEnd("abc"), "abd");
    EXPECT_EQ(codec::prefixEnd(std::string("a\xff", 2)), "b");
    EXPECT_EQ(codec::prefixEnd(std::string("\xff\xff", 2)), std::string(1, '\0'));
    EXPECT_EQ(codec::prefixEnd(""), std::string(1, '\0'));
}

TEST(EtcdCodecTest, RequestsCarryBase64KeysAndStringInt64s) {
    EXPECT_EQ(codec::rangeRequest("foo", "fop").dump(), R"({"key":"Zm9v","range_end":"Zm9w"})");
    EXPECT_EQ(codec::putRequest("foo", "bar", 0).dump(), R"({"key":"Zm9v","value":"YmFy"})");
    EXPECT_EQ(codec::putRequest("foo", "", 12).dump(), R"({"key":"Zm9v","lease":"12","value":""})");
    EXPECT_EQ(codec::leaseGrantRequest(5).dump(), R"({"TTL":"5"})");
    EXPECT_EQ(codec::watchCreateRequest("a", "b", 7).dump(),
              R"({"create_request":{"key":"YQ==","range_end":"Yg==","start_revision":"7"}})");
    const auto txn = codec::casPutRequest("k", "v", 0, 3);
    EXPECT_EQ(txn["compare"][0]["mod_revision"], "0");
    EXPECT_EQ(txn["success"][0]["request_put"]["lease"], "3");
    EXPECT_EQ(txn["failure"][0]["request_range"]["key"], "aw==");
    const auto fenced = codec::fencedPutRequest("k", "v", {{"a", 4}, {"k", 0}}, 0);
    ASSERT_EQ(fenced["compare"].size(), 2u);
    EXPECT_EQ(fenced["compare"][0]["key"], "YQ==");
    EXPECT_EQ(fenced["compare"][0]["mod_revision"], "4");
    EXPECT_EQ(fenced["compare"][1]["mod_revision"], "0");
    EXPECT_EQ(fenced["failure"][0]["request_range"]["key"], "aw==");
}

TEST(EtcdCodecTest, ReadsARangeReply) {
    const auto reply = codec::parseReply(
        R"({"header":{"cluster_id":"1","member_id":"2","revision":"5","raft_term":"2"},)"
        R"("kvs":[{"key":"Zm9v","create_revision":"2","mod_revision":"5","version":"2",)"
        R"("value":"YmFy","lease":"77"},{"key":"Zm9w","mod_revision":"3"}],"count":"2"})");
    const auto kvs = codec::readRange(reply);
    ASSERT_EQ(kvs.size(), 2u);
    EXPECT_EQ(kvs[0], (KeyValue{"foo", "bar", 2, 5, 77}));
    EXPECT_EQ(kvs[1], (KeyValue{"fop", "", 0, 3, 0}));  // defaults left out
    EXPECT_EQ(codec::readHeaderRevision(reply), 5);
}

TEST(EtcdCodecTest, ReadsTxnOutcomes) {
    const auto won = codec::readCasPut(codec::parseReply(
        R"({"header":{"revision":"9"},"succeeded":true,"responses":[{"response_put":{}}]})"));
    EXPECT_TRUE(won.succeeded);
    EXPECT_EQ(won.revision, 9);
    const auto lost = codec::readCasPut(codec::parseReply(
        R"({"header":{"revision":"9"},"responses":[{"response_range":{"header":{},)"
        R"("kvs":[{"key":"aw==","value":"dg==","mod_revision":"8"}],"count":"1"}}]})"));
    EXPECT_FALSE(lost.succeeded);
    ASSERT_TRUE(lost.current);
    EXPECT_EQ(lost.current->modRevision, 8);
    const auto absent = codec::readCasPut(codec::parseReply(
        R"({"header":{"revision":"9"},"responses":[{"response_range":{"header":{}}}]})"));
    EXPECT_FALSE(absent.current);
}

TEST(EtcdCodecTest, ReadsLeaseReplies) {
    EXPECT_EQ(codec::readLeaseGrant(codec::parseReply(R"({"ID":"2324035592293871624","TTL":"2"})")),
              2324035592293871624);
    EXPECT_EQ(codec::readKeepAlive(codec::parseReply(R"({"result":{"ID":"5","TTL":"4"}})")), 4);
    // An expired lease: etcd leaves TTL out.
    EXPECT_EQ(codec::readKeepAlive(codec::parseReply(R"({"result":{"ID":"5"}})")), 0);
    EXPECT_THROW(codec::readLeaseGrant(codec::parseReply(R"({"error":"too many"})")), EtcdError);
}

TEST(EtcdCodecTest, ReadsWatchMessages) {
    const auto created = codec::readWatchMessage(R"({"result":{"header":{},"created":true}})");
    EXPECT_TRUE(created.created);
    const auto events = codec::readWatchMessage(
        R"({"result":{"header":{"revision":"4"},"events":[{"kv":{"key":"YQ==","value":"MQ==",)"
        R"("mod_revision":"3"}},{"type":"DELETE","kv":{"key":"YQ==","mod_revision":"4"}}]}})");
    ASSERT_EQ(events.events.size(), 2u);
    EXPECT_EQ(events.events[0], (WatchEvent{WatchEvent::Type::Put, "a", "1", 3}));
    EXPECT_EQ(events.events[1], (WatchEvent{WatchEvent::Type::Delete, "a", "", 4}));
    const auto compacted = codec::readWatchMessage(
        R"({"result":{"header":{},"canceled":true,"compact_revision":"3"}})");
    EXPECT_TRUE(compacted.canceled);
    EXPECT_EQ(compacted.compactRevision, 3);
}

TEST(EtcdCodecTest, ErrorMessageIsEtcdsOwn) {
    EXPECT_EQ(codec::errorMessage(R"({"error":"etcdserver: requested lease not found",)"
                                  R"("message":"etcdserver: requested lease not found","code":5})"),
              "etcdserver: requested lease not found");
    EXPECT_EQ(codec::errorMessage("plain text"), "plain text");
}

using Reader = std::function<void(const std::string&)>;

const std::vector<std::pair<const char*, Reader>>& readers() {
    static const std::vector<std::pair<const char*, Reader>> all = {
        {"range", [](const std::string& t) { codec::readRange(codec::parseReply(t)); }},
        {"revision", [](const std::string& t) { codec::readHeaderRevision(codec::parseReply(t)); }},
        {"deleted", [](const std::string& t) { codec::readDeleted(codec::parseReply(t)); }},
        {"txn", [](const std::string& t) { codec::readCasPut(codec::parseReply(t)); }},
        {"grant", [](const std::string& t) { codec::readLeaseGrant(codec::parseReply(t)); }},
        {"keepalive", [](const std::string& t) { codec::readKeepAlive(codec::parseReply(t)); }},
        {"watch", [](const std::string& t) { codec::readWatchMessage(t); }},
    };
    return all;
}

// Each reader refuses what is wrong for it, with an EtcdError.
TEST(EtcdCodecTest, MalformedRepliesAreEtcdErrors) {
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"range", ""},
        {"range", "null"},
        {"range", "[1]"},
        {"range", "{\"kvs\":"},
        {"range", R"({"kvs":{}})"},
        {"range", R"({"kvs":[1]})"},
        {"range", R"({"kvs":[{"key":5}]})"},
        {"range", R"({"kvs":[{"key":"!!!"}]})"},
        {"range", R"({"kvs":[{"key":"YQ==","mod_revision":"x"}]})"},
        {"range", R"({"kvs":[{"key":"YQ==","mod_revision":"99999999999999999999"}]})"},
        {"range", R"({"kvs":[{"key":"YQ==","mod_revision":1.5}]})"},
        {"revision", R"({"header":[]})"},
        {"revision", R"({"header":{"revision":true}})"},
        {"deleted", R"({"deleted":"-"})"},
        {"txn", R"({"succeeded":"yes"})"},
        {"txn", R"({"responses":[]})"},
        {"txn", R"({"responses":[{"response_range":[]}]})"},
        {"grant", R"({"ID":"0"})"},
        {"grant", R"({"error":"etcdserver: too many leases"})"},
        {"keepalive", R"({"result":[]})"},
        {"keepalive", R"({"result":{"TTL":{}}})"},
        {"keepalive", R"({"error":{"message":"gone"}})"},
        {"watch", "{\"result\":"},
        {"watch", R"({"error":{"message":"gone"}})"},
        {"watch", R"({"result":{"events":[{"type":"TOUCH","kv":{}}]}})"},
        {"watch", R"({"result":{"events":[{"kv":[]}]}})"},
        {"watch", R"({"result":{"created":1}})"},
    };
    for (const auto& [name, text] : cases) {
        // Clang 14 cannot capture a structured binding: compare by hand.
        auto reader = readers().begin();
        while (reader != readers().end() && reader->first != name) {
            ++reader;
        }
        ASSERT_NE(reader, readers().end()) << name;
        EXPECT_THROW(reader->second(text), EtcdError) << name << ": " << text;
    }
}

// Whatever the server sends, no reader lets anything but an EtcdError out
// (nlohmann's type errors included).
TEST(EtcdCodecTest, NoReaderThrowsAnythingButEtcdError) {
    const std::vector<std::string> replies = {"",
                                              "null",
                                              "1",
                                              "\"s\"",
                                              "[]",
                                              "{}",
                                              R"({"kvs":null})",
                                              R"({"kvs":[null]})",
                                              R"({"kvs":[{"key":null,"value":[],"lease":{}}]})",
                                              R"({"header":"x"})",
                                              R"({"header":{"revision":-1}})",
                                              R"({"succeeded":null,"responses":null})",
                                              R"({"responses":[1]})",
                                              R"({"responses":[{"response_range":{"kvs":[1]}}]})",
                                              R"({"ID":[],"TTL":"x","error":5})",
                                              R"({"result":null})",
                                              R"({"error":null})",
                                              R"({"result":{"events":null}})",
                                              R"({"result":{"events":[null]}})",
                                              R"({"result":{"events":[{"type":5}]}})",
                                              R"({"result":{"compact_revision":"1e3"}})",
                                              R"({"result":{"cancel_reason":7}})",
                                              R"({"deleted":[]})"};
    for (const std::string& text : replies) {
        for (const auto& [name, reader] : readers()) {
            try {
                reader(text);
            } catch (const EtcdError&) {
                // refused: as it should be
            } catch (const std::exception& error) {
                ADD_FAILURE() << name << " on " << text << " threw " << error.what();
            }
        }
    }
}

}  // namespace
}  // namespace kvexec::cluster
