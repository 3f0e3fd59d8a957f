// The etcd client over TLS (https:// with a CA file) against a real etcd
// serving its clients over TLS (the fixture's EtcdScheme::Https): keys,
// leases and watches work as over http; a certificate that the CA did not
// sign, or that names another host, is refused with the reason; a plain
// client gets no answer from it.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "cluster/etcd_client.h"
#include "etcd_fixture.h"
#include "test_certificate.h"
#include "watch_recorder.h"

namespace kvexec::cluster::test {
namespace {

using Type = WatchEvent::Type;

// What `attempt` throws as EtcdError; "" if it does not throw.
template <class Attempt>
std::string etcdError(Attempt attempt) {
    try {
        attempt();
    } catch (const EtcdError& error) {
        return error.what();
    }
    return "";
}

class EtcdTlsTest : public ::testing::Test {
  protected:
    EtcdProcess etcd_{EtcdScheme::Https};
};

TEST_F(EtcdTlsTest, KeysLeasesAndWatchesWorkOverTls) {
    ASSERT_EQ(etcd_.url().rfind("https://", 0), 0u) << etcd_.url();
    EtcdClient client(etcd_.endpoint());
    WatchRecorder recorder;
    const auto watch = client.watchPrefix("/t/", 0, recorder.onEvent(), recorder.onEnd());
    const std::int64_t revision = client.put("/t/a", "1");
    ASSERT_TRUE(client.get("/t/a"));
    EXPECT_EQ(client.get("/t/a")->value, "1");
    const std::int64_t lease = client.grantLease(std::chrono::seconds(5));
    EXPECT_GT(client.keepAlive(lease), 0);
    EXPECT_TRUE(client.revoke(lease));
    // Many requests over the one kept connection.
    for (int i = 0; i < 50; ++i) {
        client.put("/t/n", std::to_string(i));
    }
    EXPECT_EQ(client.get("/t/n")->value, "49");
    ASSERT_TRUE(recorder.waitForEvents(51, kEtcdDeadline));
    EXPECT_EQ(recorder.events()[0], (WatchEvent{Type::Put, "/t/a", "1", revision}));
}

// After etcd restarts, the client reconnects with a new TLS handshake: at
// most one request fails, saying why.
TEST_F(EtcdTlsTest, TheClientGoesOnAfterEtcdRestarts) {
    EtcdClient client(etcd_.endpoint(), std::chrono::milliseconds(2000));
    client.put("/t/before", "1");
    etcd_.stop();
    EXPECT_NE(etcdError([&] { client.get("/t/before"); }), "");
    etcd_.restart();
    ASSERT_TRUE(client.get("/t/before"));
    EXPECT_EQ(client.get("/t/before")->value, "1");
    client.put("/t/after", "2");
    EXPECT_EQ(client.get("/t/after")->value, "2");

    // Restarted between two requests: the client's loop runs only inside
    // a request, so the idle connection ended unseen and the first request
    // may find it closed; the next goes over a new one.
    etcd_.restart();
    int failed = 0;
    for (int request = 0; request < 3; ++request) {
        try {
            client.put("/t/again", std::to_string(request));
        } catch (const EtcdError&) {
            ++failed;
        }
    }
    EXPECT_LE(failed, 1);
    EXPECT_EQ(client.get("/t/again")->value, "2");
}

TEST_F(EtcdTlsTest, ACertificateTheCaDidNotSignIsRefused) {
    const std::string dir = std::filesystem::path(etcd_.caFile()).parent_path().string();
    ASSERT_TRUE(kvexec::test::makeCertificate(dir, "stranger", "IP:127.0.0.1"));
    EtcdEndpoint wrongCa = etcd_.endpoint();
    wrongCa.caFile = dir + "/stranger.pem";
    const std::string refused = etcdError([&] { EtcdClient(wrongCa).get("k"); });
    EXPECT_NE(refused.find("certificate refused"), std::string::npos) << refused;
    EXPECT_NE(refused.find(etcd_.url()), std::string::npos) << refused;

    // The system's CAs do not know this self-signed one either.
    EtcdEndpoint systemCas = etcd_.endpoint();
    systemCas.caFile.clear();
    EXPECT_NE(etcdError([&] { EtcdClient(systemCas).get("k"); }).find("certificate refused"),
              std::string::npos);

    // A watch says the same when it cannot open.
    const std::string watchRefused = etcdError([&] {
        WatchRecorder recorder;
        EtcdClient(wrongCa).watchPrefix("/t/", 0, recorder.onEvent(), recorder.onEnd());
    });
    EXPECT_NE(watchRefused.find("certificate refused"), std::string::npos) << watchRefused;
}

TEST_F(EtcdTlsTest, ACertificateForAnotherHostIsRefused) {
    EtcdEndpoint byName = etcd_.endpoint();
    // "127.1" is 127.0.0.1 to the resolver but a host name to the
    // certificate check, and the certificate names IP:127.0.0.1 only.
    byName.host = "127.1";
    const std::string refused = etcdError([&] { EtcdClient(byName).get("k"); });
    EXPECT_NE(refused.find("certificate refused"), std::string::npos) << refused;
}

TEST_F(EtcdTlsTest, APlainClientGetsNoAnswerAndAMissingCaFileIsSaid) {
    EtcdEndpoint plain = etcd_.endpoint();
    plain.tls = false;
    plain.caFile.clear();
    EXPECT_NE(etcdError([&] { EtcdClient(plain, std::chrono::milliseconds(2000)).get("k"); }), "");

    EtcdEndpoint missing = etcd_.endpoint();
    missing.caFile = "/nonexistent/ca.pem";
    const std::string unread = etcdError([&] { EtcdClient client(missing); });
    EXPECT_NE(unread.find("/nonexistent/ca.pem"), std::string::npos) << unread;
}

TEST(EtcdUrlTest, HttpsTakesACaFileAndHttpDoesNot) {
    const EtcdEndpoint endpoint = parseEtcdUrl("https://127.0.0.1:2379", "/etc/ca.pem");
    EXPECT_TRUE(endpoint.tls);
    EXPECT_EQ(endpoint.caFile, "/etc/ca.pem");
    EXPECT_EQ(endpoint.url(), "https://127.0.0.1:2379");
    EXPECT_TRUE(parseEtcdUrl("https://h:1").tls);
    EXPECT_THROW(parseEtcdUrl("http://h:1", "/etc/ca.pem"), std::invalid_argument);
}

}  // namespace
}  // namespace kvexec::cluster::test
