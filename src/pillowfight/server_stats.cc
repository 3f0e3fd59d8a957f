#include "pillowfight/server_stats.h"

#include <netdb.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "pillowfight/handshake.h"
#include "protocol/binary_response.h"
#include "protocol/client_codec.h"

namespace kvexec::pillowfight {
namespace {

using protocol::Opcode;
using protocol::Response;
using protocol::Status;

// A blocking socket with a receive deadline; closes on destruction.
class BlockingSocket {
  public:
    BlockingSocket(const std::string& host, std::uint16_t port,
                   std::chrono::milliseconds deadline) {
        addrinfo hints{};
        hints.ai_socktype = SOCK_STREAM;
        addrinfo* found = nullptr;
        if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0 ||
            found == nullptr) {
            throw std::runtime_error("STAT: cannot resolve " + host);
        }
        fd_ = socket(found->ai_family, SOCK_STREAM, 0);
        const bool connected = fd_ >= 0 && connect(fd_, found->ai_addr, found->ai_addrlen) == 0;
        freeaddrinfo(found);
        if (!connected) {
            throw std::runtime_error("STAT: cannot connect to " + host + ":" +
                                     std::to_string(port));
        }
        const timeval receive{static_cast<time_t>(deadline.count() / 1000),
                              static_cast<suseconds_t>(deadline.count() % 1000 * 1000)};
        setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &receive, sizeof receive);
    }
    ~BlockingSocket() {
        if (fd_ >= 0) {
            close(fd_);
        }
    }
    BlockingSocket(const BlockingSocket&) = delete;
    BlockingSocket& operator=(const BlockingSocket&) = delete;

    void send(const std::string& bytes) {
        std::size_t done = 0;
        while (done < bytes.size()) {
            const ssize_t n = ::send(fd_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
            if (n <= 0) {
                throw std::runtime_error("STAT: send failed");
            }
            done += static_cast<std::size_t>(n);
        }
    }

    // The next response; its views stay valid until the next call.
    Response receive() {
        buffer_.erase(0, consumed_);
        for (;;) {
            const auto parsed = protocol::parseResponse(buffer_);
            if (parsed.outcome == protocol::ResponseOutcome::Ok) {
                consumed_ = parsed.consumed;
                return parsed.response;
            }
            if (parsed.outcome == protocol::ResponseOutcome::Invalid) {
                throw std::runtime_error("STAT: not a binary response");
            }
            char chunk[16384];
            const ssize_t n = recv(fd_, chunk, sizeof chunk, 0);
            if (n <= 0) {
                throw std::runtime_error("STAT: no answer (closed or timed out)");
            }
            buffer_.append(chunk, static_cast<std::size_t>(n));
        }
    }

  private:
    int fd_ = -1;
    std::string buffer_;
    std::size_t consumed_ = 0;
};

}  // namespace

StatList fetchStats(const Options& options, const std::vector<std::string>& groups) {
    BlockingSocket socket(options.host, options.port, options.timeout);
    if (options.protocol == Protocol::Couchbase) {
        Handshake handshake(options);
        socket.send(handshake.start());
        while (handshake.state() != Handshake::State::Done) {
            const auto step = handshake.onResponse(socket.receive());
            if (step.state == Handshake::State::Failed) {
                throw std::runtime_error("STAT: " + step.error);
            }
            socket.send(step.send);
        }
    }
    StatList out;
    std::uint32_t opaque = 1000;
    for (const auto& group : groups) {
        std::string request;
        protocol::appendRequest(request, {Opcode::Stat, 0, ++opaque, 0, 0}, {}, {}, group);
        socket.send(request);
        for (;;) {
            const Response r = socket.receive();
            if (r.status != Status::Success) {
                throw std::runtime_error("STAT " + group + ": " +
                                         std::string(protocol::statusText(r.status)));
            }
            if (r.key.empty()) {
                break;
            }
            out.emplace_back(std::string(r.key), std::string(r.value));
        }
    }
    return out;
}

std::vector<engine::HistogramSnapshot> histogramsFromTimings(const StatList& stats,
                                                             const std::string& prefix) {
    constexpr std::string_view kSuffix = "_histogram";
    std::vector<engine::HistogramSnapshot> out;
    for (const auto& [name, value] : stats) {
        if (name.rfind(prefix, 0) != 0 || name.size() <= kSuffix.size() ||
            name.compare(name.size() - kSuffix.size(), kSuffix.size(), kSuffix) != 0) {
            continue;
        }
        const auto json = nlohmann::json::parse(value, nullptr, false);
        if (json.is_discarded() || !json.is_object()) {
            continue;
        }
        engine::HistogramSnapshot h;
        h.name = name.substr(0, name.size() - kSuffix.size());
        const auto ns = [&](const char* key) {
            return std::chrono::nanoseconds(json.value(key, std::int64_t{0}));
        };
        h.summary.count = json.value("count", std::uint64_t{0});
        h.summary.mean = ns("mean");
        h.summary.p50 = ns("p50");
        h.summary.p90 = ns("p90");
        h.summary.p99 = ns("p99");
        h.summary.p999 = ns("p999");
        h.summary.max = ns("max");
        for (const auto& bucket : json.value("buckets", nlohmann::json::array())) {
            h.buckets.emplace_back(bucket.at(0).get<std::uint64_t>(),
                                   bucket.at(1).get<std::uint64_t>());
        }
        out.push_back(std::move(h));
    }
    return out;
}

}  // namespace kvexec::pillowfight
