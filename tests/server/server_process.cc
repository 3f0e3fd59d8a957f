#include "server_process.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include "protocol/binary_response.h"

extern char** environ;

namespace kvexec::server::test {
namespace {

using Clock = std::chrono::steady_clock;

int remainingMs(Clock::time_point until) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
    return static_cast<int>(std::max<std::int64_t>(left.count(), 0));
}

}  // namespace

TempDir::TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "kvexec-socket-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
        throw std::runtime_error("mkdtemp failed");
    }
    path_ = pattern;
}

TempDir::~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
}

ServerProcess::ServerProcess(const std::string& dataDir, const std::vector<std::string>& args) {
    std::vector<std::string> argv = {KVEXEC_SERVER_BINARY, "--host", "127.0.0.1",  "--port", "0",
                                     "--data-dir",         dataDir,  "--vbuckets", "16"};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> cargv;
    for (auto& a : argv) {
        cargv.push_back(a.data());
    }
    cargv.push_back(nullptr);

    int pipeFds[2];
    if (pipe2(pipeFds, O_CLOEXEC) != 0) {
        throw std::runtime_error("pipe failed");
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, pipeFds[1], STDOUT_FILENO);
    const int rc = posix_spawn(&pid_, cargv[0], &actions, nullptr, cargv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    close(pipeFds[1]);
    stdout_ = pipeFds[0];
    if (rc != 0) {
        throw std::runtime_error("cannot start " + argv[0]);
    }

    // The ready line, read byte by byte so nothing after it is consumed;
    // the TLS port's and the management endpoint's lines come first.
    const std::string prefix = "kvexec-server: ready on ";
    const std::string mgmtPrefix = "kvexec-server: mgmt on ";
    const std::string tlsPrefix = "kvexec-server: tls on ";
    const std::string mgmtTlsPrefix = "kvexec-server: mgmt tls on ";
    const auto portIn = [](const std::string& text) {
        return static_cast<std::uint16_t>(std::stoi(text.substr(text.rfind(':') + 1)));
    };
    const auto until = Clock::now() + kSocketDeadline;
    std::string line;
    for (;;) {
        line.clear();
        while (line.empty() || line.back() != '\n') {
            pollfd p{stdout_, POLLIN, 0};
            char c = 0;
            if (poll(&p, 1, remainingMs(until)) <= 0 || ::read(stdout_, &c, 1) != 1) {
                break;
            }
            line.push_back(c);
        }
        if (line.empty() || line.back() != '\n') {
            break;
        }
        if (line.rfind(mgmtPrefix, 0) == 0) {
            mgmtPort_ = portIn(line);
        } else if (line.rfind(tlsPrefix, 0) == 0) {
            tlsPort_ = portIn(line);
        } else if (line.rfind(mgmtTlsPrefix, 0) != 0) {
            break;
        }
    }
    if (line.empty() || line.rfind(prefix, 0) != 0 || line.back() != '\n') {
        kill(pid_, SIGKILL);  // the destructor does not run for a throwing constructor
        waitpid(pid_, nullptr, 0);
        close(stdout_);
        throw std::runtime_error("kvexec-server printed no ready line; got '" + line + "'");
    }
    port_ = portIn(line);
}

ServerProcess::~ServerProcess() {
    if (pid_ > 0) {
        kill(pid_, SIGKILL);
        waitpid(pid_, nullptr, 0);
    }
    if (stdout_ >= 0) {
        close(stdout_);
    }
}

std::optional<int> ServerProcess::stop(int signal) {
    if (pid_ <= 0) {
        return std::nullopt;
    }
    kill(pid_, signal);
    const auto until = Clock::now() + kSocketDeadline;
    int status = 0;
    while (waitpid(pid_, &status, WNOHANG) != pid_) {
        if (Clock::now() > until) {
            return std::nullopt;  // the destructor kills it
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    pid_ = -1;
    if (!WIFEXITED(status)) {
        return std::nullopt;
    }
    return WEXITSTATUS(status);
}

Client::Client(std::uint16_t port) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd_ < 0 || connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
        throw std::runtime_error("connect failed");
    }
    int one = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

Client::~Client() {
    close(fd_);
}

bool Client::send(std::string_view bytes) {
    while (!bytes.empty()) {
        const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return false;
        }
        bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

bool Client::waitReadable(Clock::time_point until) {
    pollfd p{fd_, POLLIN, 0};
    return poll(&p, 1, remainingMs(until)) > 0;
}

bool Client::receiveUntil(const std::function<bool()>& enough) {
    const auto until = Clock::now() + kSocketDeadline;
    char chunk[65536];
    while (!enough()) {
        if (!waitReadable(until)) {
            return false;
        }
        const ssize_t got = recv(fd_, chunk, sizeof chunk, 0);
        if (got <= 0) {
            return false;
        }
        buffered_.append(chunk, static_cast<std::size_t>(got));
    }
    return true;
}

std::string Client::take(std::size_t n) {
    std::string out = buffered_.substr(0, n);
    buffered_.erase(0, n);
    return out;
}

std::optional<std::string> Client::read(std::size_t n) {
    if (!receiveUntil([&] { return buffered_.size() >= n; })) {
        return std::nullopt;
    }
    return take(n);
}

std::optional<std::string> Client::readLine() {
    if (!receiveUntil([&] { return buffered_.find("\r\n") != std::string::npos; })) {
        return std::nullopt;
    }
    return take(buffered_.find("\r\n") + 2);
}

std::optional<BinaryResponse> Client::readResponse() {
    auto header = read(protocol::kHeaderSize);
    if (!header) {
        return std::nullopt;
    }
    BinaryResponse r;
    r.magic = static_cast<std::uint8_t>((*header)[0]);
    r.opcode = static_cast<std::uint8_t>((*header)[1]);
    r.datatype = static_cast<std::uint8_t>((*header)[5]);
    const std::size_t keyLength = protocol::readBe16(*header, 2);
    const std::size_t extrasLength = static_cast<std::uint8_t>((*header)[4]);
    r.status = protocol::readBe16(*header, 6);
    const std::size_t bodyLength = protocol::readBe32(*header, 8);
    r.opaque = protocol::readBe32(*header, 12);
    r.cas = protocol::readBe64(*header, 16);
    auto body = read(bodyLength);
    if (!body || extrasLength + keyLength > bodyLength) {
        return std::nullopt;
    }
    r.extras = body->substr(0, extrasLength);
    r.key = body->substr(extrasLength, keyLength);
    r.value = body->substr(extrasLength + keyLength);
    return r;
}

std::optional<BinaryResponse> Client::call(const RawRequest& request) {
    if (!send(request.encode())) {
        return std::nullopt;
    }
    return readResponse();
}

std::optional<std::string> Client::ask(std::string_view line) {
    if (!send(std::string(line) + "\r\n")) {
        return std::nullopt;
    }
    return readLine();
}

bool Client::closedByServer(std::chrono::milliseconds deadline) {
    const auto until = Clock::now() + deadline;
    char chunk[65536];
    for (;;) {
        if (!waitReadable(until)) {
            return false;
        }
        const ssize_t got = recv(fd_, chunk, sizeof chunk, 0);
        if (got <= 0) {
            return got == 0 || errno == ECONNRESET;
        }
    }
}

std::uint16_t statusOf(const std::optional<BinaryResponse>& response) {
    return response ? response->status : 0xffff;
}

std::map<std::string, std::string> binaryStats(Client& client, const std::string& group) {
    std::map<std::string, std::string> stats;
    if (!client.send(request(protocol::Opcode::Stat, group).encode())) {
        return stats;
    }
    while (const auto response = client.readResponse()) {
        if (response->status != static_cast<std::uint16_t>(protocol::Status::Success) ||
            response->key.empty()) {
            break;
        }
        stats[response->key] = response->value;
    }
    return stats;
}

}  // namespace kvexec::server::test
