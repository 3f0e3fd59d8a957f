#include "etcd_fixture.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include "cluster/etcd_client.h"
#include "test_certificate.h"

extern char** environ;

namespace kvexec::cluster::test {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kStartAttempts = 3;
// Between two reads of a starting etcd: short against its ~1 s start.
constexpr std::chrono::milliseconds kProbeInterval{20};

// Two free loopback ports, both held while choosing so they differ.
std::pair<std::uint16_t, std::uint16_t> freePorts() {
    std::uint16_t ports[2] = {0, 0};
    int fds[2] = {-1, -1};
    for (int i = 0; i < 2; ++i) {
        fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t length = sizeof address;
        if (fds[i] < 0 || bind(fds[i], reinterpret_cast<sockaddr*>(&address), length) != 0 ||
            getsockname(fds[i], reinterpret_cast<sockaddr*>(&address), &length) != 0) {
            throw std::runtime_error("etcd fixture: cannot find a free port");
        }
        ports[i] = ntohs(address.sin_port);
    }
    close(fds[0]);
    close(fds[1]);
    return {ports[0], ports[1]};
}

std::string flag(std::string_view name, std::string_view value) {
    std::string text = "--";
    text += name;
    text += '=';
    text += value;
    return text;
}

std::string loopbackUrl(std::uint16_t port, bool tls = false) {
    std::string url = tls ? "https://127.0.0.1:" : "http://127.0.0.1:";
    url += std::to_string(port);
    return url;
}

// Waits for `pid` to exit until `until`; true (and reaped) if it did. A
// pidfd makes this a poll, not a loop of sleeps.
bool waitExit(pid_t pid, Clock::time_point until) {
    const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
    if (pidfd >= 0) {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
        pollfd p{pidfd, POLLIN, 0};
        poll(&p, 1, static_cast<int>(std::max<std::int64_t>(left.count(), 0)));
        close(pidfd);
    }
    return waitpid(pid, nullptr, WNOHANG) == pid;
}

}  // namespace

std::string EtcdProcess::defaultBinary() {
    return KVEXEC_ETCD_BINARY;
}

EtcdProcess::EtcdProcess(const std::string& binary, EtcdScheme scheme) : scheme_(scheme) {
    if (access(binary.c_str(), X_OK) != 0) {
        std::string message = "etcd is not installed (no ";
        message += binary;
        message += "): run tools/install-deps (Debian package etcd-server)";
        throw std::runtime_error(message);
    }
    std::string pattern = (std::filesystem::temp_directory_path() / "kvexec-etcd-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
        throw std::runtime_error("etcd fixture: mkdtemp failed");
    }
    dir_ = pattern;
    if (scheme_ == EtcdScheme::Https &&
        !kvexec::test::makeCertificate(dir_, "etcd", "IP:127.0.0.1")) {
        std::filesystem::remove_all(dir_);
        throw std::runtime_error("etcd fixture: openssl could not make a certificate");
    }
    for (int attempt = 0; attempt < kStartAttempts; ++attempt) {
        if (tryStart(binary)) {
            return;
        }
    }
    std::string message = "etcd did not answer in time or kept exiting; its log ends:\n";
    message += logTail();
    stop();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
    throw std::runtime_error(message);
}

EtcdProcess::~EtcdProcess() {
    stop();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
}

bool EtcdProcess::tryStart(const std::string& binary) {
    stop();
    const auto [clientPort, peerPort] = freePorts();
    return launch(binary, clientPort, peerPort);
}

void EtcdProcess::restart() {
    stop();
    if (!launch(binary_, endpoint_.port, peerPort_)) {
        throw std::runtime_error("etcd did not answer again after a restart; its log ends:\n" +
                                 logTail());
    }
}

bool EtcdProcess::launch(const std::string& binary, std::uint16_t clientPort,
                         std::uint16_t peerPort) {
    binary_ = binary;
    peerPort_ = peerPort;
    const bool tls = scheme_ == EtcdScheme::Https;
    endpoint_ = EtcdEndpoint{"127.0.0.1", clientPort, tls, tls ? dir_ + "/etcd.pem" : ""};
    const std::string client = loopbackUrl(clientPort, tls);
    const std::string peer = loopbackUrl(peerPort);
    std::string dataDir = dir_;
    dataDir += "/data-";
    dataDir += std::to_string(peerPort);
    std::string cluster = "kvexec-test=";
    cluster += peer;
    // Short raft timings: a one-member cluster elects itself sooner, and
    // the minimum lease TTL (1.5 election timeouts) drops to 1 s.
    std::vector<std::string> argv = {binary,
                                     flag("name", "kvexec-test"),
                                     flag("data-dir", dataDir),
                                     flag("listen-client-urls", client),
                                     flag("advertise-client-urls", client),
                                     flag("listen-peer-urls", peer),
                                     flag("initial-advertise-peer-urls", peer),
                                     flag("initial-cluster", cluster),
                                     flag("heartbeat-interval", "50"),
                                     flag("election-timeout", "500"),
                                     flag("logger", "zap"),
                                     flag("log-outputs", "stderr")};
    if (tls) {
        argv.push_back(flag("cert-file", endpoint_.caFile));
        argv.push_back(flag("key-file", dir_ + "/etcd.key"));
    }
    std::vector<char*> cargv;
    for (auto& arg : argv) {
        cargv.push_back(arg.data());
    }
    cargv.push_back(nullptr);
    const std::string log = logPath();
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                     O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
    const int rc = posix_spawn(&pid_, binary.c_str(), &actions, nullptr, cargv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) {
        pid_ = -1;
        throw std::runtime_error("etcd fixture: posix_spawn failed");
    }
    const auto until = Clock::now() + kEtcdDeadline;
    while (Clock::now() < until) {
        if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
            pid_ = -1;
            return false;  // exited: try other ports
        }
        if (answers()) {
            return true;
        }
        std::this_thread::sleep_for(kProbeInterval);
    }
    stop();
    return false;
}

std::string EtcdProcess::logPath() const {
    std::string path = dir_;
    path += "/etcd.log";
    return path;
}

bool EtcdProcess::answers() const {
    try {
        EtcdClient probe(endpoint_, std::chrono::milliseconds(1'000));
        probe.get("kvexec-fixture-probe");
        return true;
    } catch (const EtcdError&) {
        return false;
    }
}

void EtcdProcess::stop() {
    if (pid_ <= 0) {
        return;
    }
    kill(pid_, SIGTERM);
    if (!waitExit(pid_, Clock::now() + kEtcdDeadline)) {
        kill(pid_, SIGKILL);
        waitpid(pid_, nullptr, 0);
    }
    pid_ = -1;
}

std::string EtcdProcess::logTail(std::size_t bytes) const {
    std::ifstream in(logPath());
    std::stringstream all;
    all << in.rdbuf();
    const std::string text = all.str();
    return text.size() > bytes ? text.substr(text.size() - bytes) : text;
}

void EtcdTest::SetUp() {
    try {
        etcd_ = std::make_unique<EtcdProcess>();
    } catch (const std::exception& error) {
        FAIL() << error.what();
    }
}

}  // namespace kvexec::cluster::test
