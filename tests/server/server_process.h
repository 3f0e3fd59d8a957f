// server_process.h: runs the real kvexec-server binary for socket tests:
// starts it on a free loopback port, waits (with a deadline) for its ready
// line, and stops it by its PID. Also a blocking loopback client whose
// every read has a deadline.
//
// Thread safety: one test thread uses each object.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/request_builder.h"

namespace kvexec::server::test {

using protocol::test::RawRequest;
using protocol::test::request;

// Generous: sanitizer builds on a loaded 2-core machine are slow; a pass
// is fast anyway.
inline constexpr std::chrono::milliseconds kSocketDeadline{20'000};

// A fresh directory, removed with its contents at destruction.
class TempDir {
  public:
    TempDir();
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::string& path() const { return path_; }

  private:
    std::string path_;
};

class ServerProcess {
  public:
    // Starts `binary --host 127.0.0.1 --port 0 --data-dir DIR args...` and
    // waits for "kvexec-server: ready on HOST:PORT" (after the lines of the
    // TLS port and the management endpoint when args ask for them);
    // throws if it does not come before the deadline.
    ServerProcess(const std::string& dataDir, const std::vector<std::string>& args);
    // SIGKILLs the process if it still runs.
    ~ServerProcess();
    ServerProcess(const ServerProcess&) = delete;
    ServerProcess& operator=(const ServerProcess&) = delete;

    std::uint16_t port() const { return port_; }
    std::uint16_t mgmtPort() const { return mgmtPort_; }  // 0: no --mgmt-port
    std::uint16_t tlsPort() const { return tlsPort_; }    // 0: no --tls-port
    pid_t pid() const { return pid_; }
    // Sends `signal`; waits for the exit. Returns the exit code, or nullopt
    // if the process did not exit normally before the deadline.
    std::optional<int> stop(int signal);

  private:
    pid_t pid_ = -1;
    int stdout_ = -1;
    std::uint16_t port_ = 0;
    std::uint16_t mgmtPort_ = 0;
    std::uint16_t tlsPort_ = 0;
};

struct BinaryResponse {
    std::uint8_t magic = 0;
    std::uint8_t opcode = 0;
    std::uint8_t datatype = 0;
    std::uint16_t status = 0;
    std::uint32_t opaque = 0;
    std::uint64_t cas = 0;
    std::string extras;
    std::string key;
    std::string value;
};

class Client {
  public:
    explicit Client(std::uint16_t port);
    ~Client();
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;

    // Writes everything (blocking); false if the server closed on us.
    bool send(std::string_view bytes);
    // Reads exactly `n` bytes; nullopt on EOF, error or deadline.
    std::optional<std::string> read(std::size_t n);
    // Reads up to and including "\r\n"; nullopt on EOF, error or deadline.
    std::optional<std::string> readLine();
    std::optional<BinaryResponse> readResponse();
    // Sends `request` and reads one response.
    std::optional<BinaryResponse> call(const RawRequest& request);
    // Sends a text line ("\r\n" added) and reads one reply line.
    std::optional<std::string> ask(std::string_view line);
    // True if the server closes the connection (EOF or reset) before the
    // deadline; any bytes still arriving are discarded.
    bool closedByServer(std::chrono::milliseconds deadline = kSocketDeadline);

  private:
    // Waits for the socket to be readable; false at the deadline.
    bool waitReadable(std::chrono::steady_clock::time_point until);
    // Receives until `enough` holds (false: deadline or the server closed).
    bool receiveUntil(const std::function<bool()>& enough);
    std::string take(std::size_t n);  // the first n buffered bytes

    int fd_ = -1;
    std::string buffered_;
};

// The status of `response`; 0xffff when none came.
std::uint16_t statusOf(const std::optional<BinaryResponse>& response);

// The binary STAT group `group` ("": the default) of the connection's
// bucket, by name; what came before a failure or the deadline.
std::map<std::string, std::string> binaryStats(Client& client, const std::string& group = "");

}  // namespace kvexec::server::test
