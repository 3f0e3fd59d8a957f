// SASL: PLAIN and SCRAM-SHA1/256/512 as the server runs them, and the
// libcrypto helpers against the RFCs' published examples.
#include <gtest/gtest.h>

#include <map>

#include "protocol/auth/sasl_server.h"
#include "protocol/auth/scram_client.h"

namespace kvexec::protocol::auth {
namespace {

TEST(SaslCrypto, Rfc5802ScramSha1Example) {
    const std::string authMessage =
        "n=user,r=fyko+d2lbbFgONRv9qkxdawL,"
        "r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4096,"
        "c=biws,r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j";
    auto proof = scramProof(HashAlgorithm::Sha1, "pencil", *base64Decode("QSXCR+Q6sek8bf92"), 4096,
                            authMessage);
    EXPECT_EQ(proof.clientProof, "v0X8v3Bz2T0CJGbJQyF0X+HI4Ts=");
    EXPECT_EQ(proof.serverSignature, "rmF9pqV8S7suAoZWja4dJRkFsKQ=");
}

TEST(SaslCrypto, Rfc7677ScramSha256Example) {
    const std::string nonce = "rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0";
    const std::string authMessage = "n=user,r=rOprNGfwEbeRWgbNEkqO,r=" + nonce +
                                    ",s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096,c=biws,r=" + nonce;
    auto proof = scramProof(HashAlgorithm::Sha256, "pencil",
                            *base64Decode("W22ZaJ0SNY7soEsUEjb6gQ=="), 4096, authMessage);
    EXPECT_EQ(proof.clientProof, "dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=");
    EXPECT_EQ(proof.serverSignature, "6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=");
}

TEST(SaslCrypto, Base64RoundTripAndRejectsGarbage) {
    for (const std::string& s :
         {std::string(), std::string("a"), std::string("ab"), std::string("abc"),
          std::string("abcd"), std::string("\0\xff\x10", 3)}) {
        EXPECT_EQ(base64Decode(base64Encode(s)), s);
    }
    EXPECT_FALSE(base64Decode("abc"));
    EXPECT_FALSE(base64Decode("ab!d"));
    // Padding: at most two '=', only at the end (OpenSSL alone takes '='
    // as data, and "====" once made a negative length).
    EXPECT_EQ(base64Decode("aGk="), "hi");
    for (const char* bad : {"====", "A===", "AAAA====", "aG=k", "=aGk"}) {
        EXPECT_FALSE(base64Decode(bad)) << bad;
    }
}

class SaslSessionTest : public ::testing::Test {
  protected:
    SaslSessionTest() {
        // Few iterations: the test checks the exchange, not PBKDF2's cost.
        users_.add({"Administrator", "password", 64}, Role::Client);
        users_.add({"@node", "node-secret", 64}, Role::Node);
    }
    Users users_;
};

TEST_F(SaslSessionTest, PlainAcceptsTheRightPasswordOnly) {
    SaslSession session(users_);
    using namespace std::string_literals;
    EXPECT_EQ(session.start("PLAIN", "\0Administrator\0password"s).outcome, SaslOutcome::Success);
    EXPECT_EQ(session.start("PLAIN", "\0Administrator\0wrong"s).outcome, SaslOutcome::Failure);
    EXPECT_EQ(session.start("PLAIN", "\0someone\0password"s).outcome, SaslOutcome::Failure);
    EXPECT_EQ(session.start("PLAIN", "no-separators").outcome, SaslOutcome::Failure);
}

std::map<std::string, std::string> attributes(const std::string& message) {
    std::map<std::string, std::string> out;
    std::size_t start = 0;
    while (start < message.size()) {
        auto end = message.find(',', start);
        if (end == std::string::npos) {
            end = message.size();
        }
        out[message.substr(start, 1)] = message.substr(start + 2, end - start - 2);
        start = end + 1;
    }
    return out;
}

// Runs a full SCRAM exchange; returns the outcome of the final step.
SaslReply scramLogin(SaslSession& session, const std::string& mechanism, HashAlgorithm hash,
                     const std::string& password, bool tamperNonce = false) {
    const std::string clientFirstBare = "n=Administrator,r=clientnonce123";
    SaslReply first = session.start(mechanism, "n,," + clientFirstBare);
    if (first.outcome != SaslOutcome::Continue) {
        return first;
    }
    auto server = attributes(first.payload);
    EXPECT_EQ(server["r"].rfind("clientnonce123", 0), 0u);
    std::string nonce = server["r"] + (tamperNonce ? "x" : "");
    const std::string withoutProof = "c=biws,r=" + nonce;
    const std::string authMessage = clientFirstBare + "," + first.payload + "," + withoutProof;
    auto proof =
        scramProof(hash, password, *base64Decode(server["s"]), std::stoi(server["i"]), authMessage);
    SaslReply final = session.step(mechanism, withoutProof + ",p=" + proof.clientProof);
    if (final.outcome == SaslOutcome::Success) {
        EXPECT_EQ(final.payload, "v=" + proof.serverSignature);
    }
    return final;
}

TEST_F(SaslSessionTest, ScramSucceedsWithEveryHash) {
    const std::pair<std::string, HashAlgorithm> mechanisms[] = {
        {"SCRAM-SHA1", HashAlgorithm::Sha1},
        {"SCRAM-SHA256", HashAlgorithm::Sha256},
        {"SCRAM-SHA512", HashAlgorithm::Sha512},
    };
    for (const auto& [name, hash] : mechanisms) {
        SaslSession session(users_);
        EXPECT_EQ(scramLogin(session, name, hash, "password").outcome, SaslOutcome::Success)
            << name;
    }
}

TEST_F(SaslSessionTest, ScramRefusesAWrongPasswordOrNonce) {
    SaslSession a(users_);
    EXPECT_EQ(scramLogin(a, "SCRAM-SHA512", HashAlgorithm::Sha512, "wrong").outcome,
              SaslOutcome::Failure);
    SaslSession b(users_);
    EXPECT_EQ(scramLogin(b, "SCRAM-SHA256", HashAlgorithm::Sha256, "password", true).outcome,
              SaslOutcome::Failure);
}

TEST_F(SaslSessionTest, ScramRefusesUnknownUsersStepsWithoutStartAndChannelBinding) {
    SaslSession session(users_);
    EXPECT_EQ(session.start("SCRAM-SHA1", "n,,n=nobody,r=abc").outcome, SaslOutcome::Failure);
    EXPECT_EQ(session.step("SCRAM-SHA1", "c=biws,r=abc,p=AAAA").outcome, SaslOutcome::Failure);
    EXPECT_EQ(session.start("SCRAM-SHA1", "p=tls-unique,,n=Administrator,r=abc").outcome,
              SaslOutcome::Failure);
    EXPECT_EQ(session.start("CRAM-MD5", "x").outcome, SaslOutcome::Failure);
}

// The client the load tool logs in with: it completes the exchange with
// the server, checks the server's signature, and a wrong password fails.
TEST_F(SaslSessionTest, ScramClientLogsInAndVerifiesTheServer) {
    for (const auto& [mechanism, hash] : {std::pair{"SCRAM-SHA512", HashAlgorithm::Sha512},
                                          std::pair{"SCRAM-SHA1", HashAlgorithm::Sha1}}) {
        SaslSession session(users_);
        ScramClient client(hash, "Administrator", "password");
        SaslReply first = session.start(mechanism, client.clientFirst());
        ASSERT_EQ(first.outcome, SaslOutcome::Continue);
        std::string error;
        auto final = client.clientFinal(first.payload, error);
        ASSERT_TRUE(final) << error;
        SaslReply done = session.step(mechanism, *final);
        ASSERT_EQ(done.outcome, SaslOutcome::Success);
        EXPECT_TRUE(client.verifyServerFinal(done.payload));
        EXPECT_FALSE(client.verifyServerFinal("v=AAAA"));
    }
    SaslSession session(users_);
    ScramClient wrong(HashAlgorithm::Sha256, "Administrator", "wrong");
    SaslReply first = session.start("SCRAM-SHA256", wrong.clientFirst());
    std::string error;
    auto final = wrong.clientFinal(first.payload, error);
    ASSERT_TRUE(final);
    EXPECT_EQ(session.step("SCRAM-SHA256", *final).outcome, SaslOutcome::Failure);
}

// The role that comes back is the one of the user who logged in, whichever
// mechanism: a client's password never yields a node's role.
TEST_F(SaslSessionTest, EachUserLogsInWithItsOwnPasswordAndRole) {
    using namespace std::string_literals;
    SaslSession session(users_);
    const auto client = session.start("PLAIN", "\0Administrator\0password"s);
    ASSERT_EQ(client.outcome, SaslOutcome::Success);
    ASSERT_NE(client.user, nullptr);
    EXPECT_EQ(client.user->role, Role::Client);
    const auto node = session.start("PLAIN", "\0@node\0node-secret"s);
    ASSERT_EQ(node.outcome, SaslOutcome::Success);
    ASSERT_NE(node.user, nullptr);
    EXPECT_EQ(node.user->role, Role::Node);
    EXPECT_EQ(session.start("PLAIN", "\0@node\0password"s).outcome, SaslOutcome::Failure);

    ScramClient scram(HashAlgorithm::Sha256, "@node", "node-secret");
    const SaslReply first = session.start("SCRAM-SHA256", scram.clientFirst());
    ASSERT_EQ(first.outcome, SaslOutcome::Continue);
    std::string error;
    const auto final = scram.clientFinal(first.payload, error);
    ASSERT_TRUE(final) << error;
    const SaslReply done = session.step("SCRAM-SHA256", *final);
    ASSERT_EQ(done.outcome, SaslOutcome::Success);
    ASSERT_NE(done.user, nullptr);
    EXPECT_EQ(done.user->role, Role::Node);

    EXPECT_THROW(users_.add({"@node", "other", 64}, Role::Client), std::invalid_argument);
}

TEST(ScramClient, RefusesAChallengeThatDoesNotExtendItsNonce) {
    ScramClient client(HashAlgorithm::Sha256, "user", "pencil", "abc");
    std::string error;
    EXPECT_FALSE(client.clientFinal("r=xyz123,s=QSXCR+Q6sek8bf92,i=4096", error));
    EXPECT_FALSE(client.clientFinal("r=abc123,s=QSXCR+Q6sek8bf92", error));
    EXPECT_FALSE(client.clientFinal("r=abc123,s=QSXCR+Q6sek8bf92,i=zero", error));
    EXPECT_TRUE(client.clientFinal("r=abc123,s=QSXCR+Q6sek8bf92,i=16", error));
}

}  // namespace
}  // namespace kvexec::protocol::auth
