// etcd_fixture.h: a private etcd for tests (Debian's etcd-server 3.4,
// /usr/bin/etcd): started on free loopback ports with a temporary data
// directory, ready once it answers a read (polled against a deadline), and
// stopped by its PID: SIGTERM, then SIGKILL if it has not exited by the
// deadline. Link kvexec_etcd_fixture to use it from any test folder. With
// EtcdScheme::Https it serves its clients over TLS, with a self-signed
// certificate issued to 127.0.0.1 (caFile()).
//
// A missing etcd is a failure, never a skip: the message says to run
// tools/install-deps.
//
// Thread safety: one test thread owns each object.
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>

#include "cluster/etcd_types.h"

namespace kvexec::cluster::test {

// Generous: sanitizer builds on a loaded 2-core machine are slow, and a
// pass is quick anyway.
inline constexpr std::chrono::milliseconds kEtcdDeadline{30'000};

enum class EtcdScheme { Http, Https };

class EtcdProcess {
  public:
    // The binary the build found (KVEXEC_ETCD_BINARY, /usr/bin/etcd).
    static std::string defaultBinary();

    // Starts `binary` and waits until it answers. Throws std::runtime_error
    // if the binary is missing (saying to run tools/install-deps), or etcd
    // does not answer before kEtcdDeadline (with the end of its log).
    explicit EtcdProcess(const std::string& binary = defaultBinary(),
                         EtcdScheme scheme = EtcdScheme::Http);
    explicit EtcdProcess(EtcdScheme scheme) : EtcdProcess(defaultBinary(), scheme) {}
    // stop(), then removes the data directory.
    ~EtcdProcess();
    EtcdProcess(const EtcdProcess&) = delete;
    EtcdProcess& operator=(const EtcdProcess&) = delete;

    // With Https, the endpoint carries caFile().
    const EtcdEndpoint& endpoint() const { return endpoint_; }
    std::string url() const { return endpoint_.url(); }
    // With Https: the certificate etcd serves, which is its own CA.
    std::string caFile() const { return endpoint_.caFile; }
    pid_t pid() const { return pid_; }
    // SIGTERM, SIGKILL after kEtcdDeadline, and reaps it; idempotent.
    void stop();
    // Stops etcd and starts it again on the same ports and data, as a
    // restart looks to its clients. Throws std::runtime_error if it does
    // not answer again before kEtcdDeadline.
    void restart();
    // The last `bytes` of etcd's log (its stdout and stderr).
    std::string logTail(std::size_t bytes = 4000) const;

  private:
    // One try on fresh ports; false if etcd exited (a port was taken
    // between our probe and its bind), true once it answers.
    bool tryStart(const std::string& binary);
    // Starts etcd on these ports (its data under dir_, by peer port).
    bool launch(const std::string& binary, std::uint16_t clientPort, std::uint16_t peerPort);
    bool answers() const;
    std::string logPath() const;

    std::string dir_;
    std::string binary_;
    std::uint16_t peerPort_ = 0;
    EtcdScheme scheme_;
    EtcdEndpoint endpoint_;
    pid_t pid_ = -1;
};

// A gtest fixture with one etcd per test (ctest runs each test in its own
// process anyway); SetUp fails the test if etcd cannot be started.
class EtcdTest : public ::testing::Test {
  protected:
    void SetUp() override;
    EtcdProcess& etcd() { return *etcd_; }

    std::unique_ptr<EtcdProcess> etcd_;
};

}  // namespace kvexec::cluster::test
