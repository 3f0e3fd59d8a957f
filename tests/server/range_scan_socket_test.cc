// Range scans over the binary protocol against the real kvexec-server
// (RANGE_SCAN_CREATE / CONTINUE / CANCEL, 0xda-0xdc): the records a
// continue's responses carry, the statuses that end them, and bad input.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "protocol/base64.h"
#include "protocol/binary_response.h"
#include "protocol/keys.h"
#include "server_process.h"
#include "server_process_test.h"

namespace kvexec::server::test {
namespace {

using protocol::Opcode;
using protocol::Status;

constexpr std::uint16_t kVBuckets = 16;  // ServerProcess's --vbuckets
constexpr auto kSuccess = static_cast<std::uint16_t>(Status::Success);
constexpr auto kMore = static_cast<std::uint16_t>(Status::RangeScanMore);
constexpr auto kComplete = static_cast<std::uint16_t>(Status::RangeScanComplete);

struct Record {
    std::string key;
    std::string value;
    std::uint64_t seqno = 0;
    std::uint64_t cas = 0;
    std::uint32_t flags = 0;
};

std::size_t readLeb128(const std::string& bytes, std::size_t& at) {
    std::size_t value = 0;
    for (int shift = 0;; shift += 7) {
        const auto byte = static_cast<std::uint8_t>(bytes.at(at++));
        value |= static_cast<std::size_t>(byte & 0x7f) << shift;
        if ((byte & 0x80) == 0) {
            return value;
        }
    }
}

std::string readSized(const std::string& bytes, std::size_t& at) {
    const auto size = readLeb128(bytes, at);
    auto out = bytes.substr(at, size);
    at += size;
    return out;
}

// A continue response's records, as kv_engine's docs/range_scans say.
std::vector<Record> recordsOf(const BinaryResponse& response) {
    const bool documents = protocol::readBe32(response.extras, 0) == 1;
    std::vector<Record> out;
    std::size_t at = 0;
    while (at < response.value.size()) {
        Record record;
        if (documents) {
            record.flags = protocol::readBe32(response.value, at);
            record.seqno = protocol::readBe64(response.value, at + 8);
            record.cas = protocol::readBe64(response.value, at + 16);
            at += 25;
        }
        record.key = readSized(response.value, at);
        if (documents) {
            record.value = readSized(response.value, at);
        }
        out.push_back(std::move(record));
    }
    return out;
}

// prefix + i (built so: GCC 12 warns falsely about "literal" + string).
std::string prefixed(std::string prefix, int i) {
    prefix += std::to_string(i);
    return prefix;
}

RawRequest create(std::uint16_t vbucket, const std::string& json) {
    auto r = request(Opcode::RangeScanCreate, {}, {}, json);
    r.vbucket = vbucket;
    return r;
}

RawRequest continueScan(std::uint16_t vbucket, const std::string& id, std::uint32_t items) {
    std::string extras = id;
    protocol::appendBe32(extras, items);
    protocol::appendBe32(extras, 0);
    protocol::appendBe32(extras, 0);
    auto r = request(Opcode::RangeScanContinue, {}, extras);
    r.vbucket = vbucket;
    return r;
}

class RangeScanSocketTest : public ServerProcessTest {
  protected:
    void SetUp() override { start(); }

    // Continues until RANGE_SCAN_COMPLETE; every response is checked.
    std::vector<Record> drain(Client& client, std::uint16_t vbucket, const std::string& id,
                              std::uint32_t items, int& continues) {
        std::vector<Record> out;
        for (continues = 1; continues < 100; ++continues) {
            EXPECT_TRUE(client.send(continueScan(vbucket, id, items).encode()));
            for (;;) {
                auto response = client.readResponse();
                if (!response.has_value()) {
                    ADD_FAILURE() << "no response";
                    return out;
                }
                EXPECT_EQ(response->extras.size(), 4u);
                auto records = recordsOf(*response);
                out.insert(out.end(), records.begin(), records.end());
                if (response->status == kComplete) {
                    return out;
                }
                if (response->status == kMore) {
                    break;
                }
                EXPECT_EQ(response->status, kSuccess);
            }
        }
        ADD_FAILURE() << "the scan never completed";
        return out;
    }
};

TEST_F(RangeScanSocketTest, ARangeComesBackInKeyOrderOverSeveralContinues) {
    Client client(server_->port());
    std::map<std::uint16_t, std::vector<std::string>> byVBucket;
    for (int i = 0; i < 60; ++i) {
        const std::string key = prefixed("user:", 1000 + i);
        auto stored = client.call(request(Opcode::Set, key, std::string(8, '\0'), "v" + key));
        ASSERT_EQ(stored->status, kSuccess);
        byVBucket[protocol::vbucketOfKey(key, kVBuckets)].push_back(key);
    }
    client.call(request(Opcode::Set, "other", std::string(8, '\0'), "x"));
    const auto& [vbucket, keys] = *std::max_element(
        byVBucket.begin(), byVBucket.end(),
        [](const auto& a, const auto& b) { return a.second.size() < b.second.size(); });
    ASSERT_GE(keys.size(), 3u);
    auto expected = keys;
    std::sort(expected.begin(), expected.end());

    const std::string json = R"({"range":{"start":")" + protocol::encodeBase64("user:") +
                             R"(","excl_end":")" + protocol::encodeBase64("user;") + R"("}})";
    auto created = client.call(create(vbucket, json));
    ASSERT_TRUE(created.has_value());
    ASSERT_EQ(created->status, kSuccess) << created->value;
    ASSERT_EQ(created->value.size(), 16u) << "the scan's id";
    int continues = 0;
    const auto records = drain(client, vbucket, created->value, 2, continues);
    std::vector<std::string> got;
    for (const auto& record : records) {
        got.push_back(record.key);
        EXPECT_EQ(record.value, "v" + record.key);
        EXPECT_NE(record.seqno, 0u);
        EXPECT_NE(record.cas, 0u);
    }
    EXPECT_EQ(got, expected);
    EXPECT_EQ(continues, static_cast<int>((expected.size() + 1) / 2))
        << "two documents per continue, the last one completes the scan";
    auto again = client.call(continueScan(vbucket, created->value, 0));
    EXPECT_EQ(again->status, static_cast<std::uint16_t>(Status::KeyNotFound))
        << "completed: closed";
}

TEST_F(RangeScanSocketTest, AKeyOnlySampleAndACancel) {
    Client client(server_->port());
    std::uint16_t vbucket = 0;
    int stored = 0;
    for (int i = 0; stored < 5; ++i) {
        const std::string key = prefixed("k", i);
        if (protocol::vbucketOfKey(key, kVBuckets) == 3) {
            client.call(request(Opcode::Set, key, std::string(8, '\0'), "value"));
            ++stored;
        }
        vbucket = 3;
    }
    auto created =
        client.call(create(vbucket, R"({"key_only":true,"sampling":{"samples":100,"seed":7}})"));
    ASSERT_EQ(created->status, kSuccess) << created->value;
    int continues = 0;
    const auto records = drain(client, vbucket, created->value, 0, continues);
    EXPECT_EQ(records.size(), 5u) << "more samples than keys: every key";
    EXPECT_EQ(continues, 1);
    for (const auto& record : records) {
        EXPECT_EQ(protocol::vbucketOfKey(record.key, kVBuckets), 3);
    }

    created = client.call(create(vbucket, R"({"range":{"start":"","end":"/w=="}})"));
    ASSERT_EQ(created->status, kSuccess) << created->value;
    auto cancel = request(Opcode::RangeScanCancel, {}, created->value);
    cancel.vbucket = vbucket;
    EXPECT_EQ(client.call(cancel)->status, kSuccess);
    EXPECT_EQ(client.call(cancel)->status, static_cast<std::uint16_t>(Status::KeyNotFound));
    EXPECT_EQ(client.call(continueScan(vbucket, created->value, 0))->status,
              static_cast<std::uint16_t>(Status::KeyNotFound));
}

TEST_F(RangeScanSocketTest, BadRequestsAreRefusedWithAReason) {
    Client client(server_->port());
    client.call(request(Opcode::Set, "a", std::string(8, '\0'), "x"));
    const auto vbucket = protocol::vbucketOfKey("a", kVBuckets);
    const auto invalid = static_cast<std::uint16_t>(Status::InvalidArguments);
    for (const char* json :
         {"not json", "[]", R"({"range":{"start":"YQ=="}})",
          R"({"range":{"start":"YQ==","excl_start":"YQ==","end":"YQ=="}})",
          R"({"sampling":{"samples":0}})",
          R"({"range":{"start":"YQ==","end":"YQ=="},"sampling":{"samples":1}})",
          R"({"key_only":true,"include_xattrs":true,"sampling":{"samples":1}})",
          R"({"collection":"zz","sampling":{"samples":1}})",
          R"({"collection":"100000000","sampling":{"samples":1}})",
          R"({"range":{"start":"YQ==","end":"YQ=="},)"
          R"("snapshot_requirements":{"vb_uuid":"-1","seqno":1}})",
          R"({"range":{"start":"YQ==","end":"YQ=="},)"
          R"("snapshot_requirements":{"vb_uuid":"99999999999999999999","seqno":1}})"}) {
        auto r = client.call(create(vbucket, json));
        ASSERT_TRUE(r.has_value());
        EXPECT_EQ(r->status, invalid) << json;
    }
    auto r = client.call(create(vbucket, R"({"range":{"start":"Yg==","end":"eg=="}})"));
    EXPECT_EQ(r->status, static_cast<std::uint16_t>(Status::KeyNotFound)) << "an empty range";
    r = client.call(create(vbucket, R"({"collection":"63","sampling":{"samples":1}})"));
    EXPECT_EQ(r->status, static_cast<std::uint16_t>(Status::UnknownCollection));
    r = client.call(continueScan(vbucket, std::string(16, 'x'), 0));
    EXPECT_EQ(r->status, static_cast<std::uint16_t>(Status::KeyNotFound)) << "no such scan";
    auto shortExtras = request(Opcode::RangeScanContinue, {}, std::string(16, 'x'));
    EXPECT_EQ(client.call(shortExtras)->status, invalid);
    r = client.call(create(vbucket, R"({"range":{"start":"YQ==","end":"YQ=="},)"
                                    R"("snapshot_requirements":{"vb_uuid":"1","seqno":1}})"));
    EXPECT_EQ(r->status, static_cast<std::uint16_t>(Status::VbUuidNotEqual));
    r = client.call(create(vbucket, R"({"include_xattrs":true,"sampling":{"samples":1}})"));
    EXPECT_EQ(r->status, static_cast<std::uint16_t>(Status::NotSupported))
        << "xattrs for a client that did not negotiate them";
}

TEST_F(RangeScanSocketTest, ABigContinueSpansSeveralResponses) {
    Client client(server_->port());
    constexpr std::uint16_t kVBucket = 5;
    const std::string value(2000, 'v');
    std::vector<std::string> keys;
    for (int i = 0; keys.size() < 40; ++i) {
        const std::string key = prefixed("big", i);
        if (protocol::vbucketOfKey(key, kVBuckets) == kVBucket) {
            ASSERT_EQ(client.call(request(Opcode::Set, key, std::string(8, '\0'), value))->status,
                      kSuccess);
            keys.push_back(key);
        }
    }
    auto created = client.call(create(kVBucket, R"({"range":{"start":"","end":"/w=="}})"));
    ASSERT_EQ(created->status, kSuccess) << created->value;
    ASSERT_TRUE(client.send(continueScan(kVBucket, created->value, 0).encode()));
    std::size_t records = 0, responses = 0;
    for (;;) {
        auto response = client.readResponse();
        ASSERT_TRUE(response.has_value());
        ++responses;
        for (const auto& record : recordsOf(*response)) {
            EXPECT_EQ(record.value, value);
            ++records;
        }
        if (response->status != kSuccess) {
            EXPECT_EQ(response->status, kComplete);
            break;
        }
    }
    EXPECT_EQ(records, keys.size());
    EXPECT_GE(responses, 4u) << "80 KB in responses of about 16 KiB";
}

}  // namespace
}  // namespace kvexec::server::test
