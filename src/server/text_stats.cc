// The text protocol's stats groups that are not a STAT list read from the
// shared context (stats.h): "stats conns", which asks every front end about
// the connections its loop thread owns, and "stats cachedump", which lists
// keys (memcdump's way to list a memcached's keys).
#include <algorithm>
#include <limits>

#include "server/connection.h"
#include "server/front_end.h"
#include "server/stats.h"

namespace kvexec::server {
namespace {

// memcached fills one 2 MB buffer per cachedump and drops what does not fit.
constexpr std::size_t kCachedumpBytes = 2 * 1024 * 1024;

// kvexec has no slab allocator: every document is reported in class 1, the
// one class a memcached holding only small items uses, so that tools that
// walk classes 0..63 (memcdump) list each key once.
constexpr std::uint32_t kOnlyClass = 1;

std::string renderConnections(ConnectionList all) {
    std::sort(all.begin(), all.end(),
              [](const ConnectionInfo& a, const ConnectionInfo& b) { return a.fd < b.fd; });
    std::string out;
    for (const auto& c : all) {
        const std::string prefix = "STAT " + std::to_string(c.fd) + ":";
        out += prefix + "addr " + c.peer + "\r\n";
        out += prefix + "listen_addr " + c.local + "\r\n";
        out += prefix + "state " + c.state + "\r\n";
        out += prefix + "secs_since_last_cmd " + std::to_string(c.secondsSinceLastCommand) + "\r\n";
    }
    return out + "END\r\n";
}

}  // namespace

// Each front end describes its own connections on its own loop thread (no
// lock, nothing shared); the parts come back to this connection's loop by
// post(), and the reply goes out once all are in. Reading stops meanwhile,
// as for any pending operation. memcached also lists its listening
// sockets; kvexec lists connections only.
void Connection::textStatsConns() {
    struct Gather {
        std::size_t remaining = 0;
        ConnectionList all;
        std::function<void(const ConnectionList&)> done;
    };
    auto gather = std::make_shared<Gather>();
    gather->remaining = context_.frontEnds.size();
    gather->done = completion<ConnectionList>(
        [this](const ConnectionList& all) { out_ += renderConnections(all); });
    FrontEnd* home = &frontEnd_;
    callEngine([&] {
        if (gather->remaining == 0) {
            gather->done({});
            return;
        }
        for (FrontEnd* frontEnd : context_.frontEnds) {
            frontEnd->describeConnections([gather, home](ConnectionList part) {
                home->post([gather, part = std::move(part)] {
                    gather->all.insert(gather->all.end(), part.begin(), part.end());
                    if (--gather->remaining == 0) {
                        gather->done(gather->all);
                    }
                });
            });
        }
    });
}

// ITEM <key> [<value bytes> b; <absolute expiry, 0: none> s], as memcached.
void Connection::textStatsCachedump(const protocol::TextCommand& command) {
    if (command.dumpClass == kOnlyClass) {
        const std::size_t limit =
            command.dumpLimit == 0 ? std::numeric_limits<std::size_t>::max() : command.dumpLimit;
        const std::size_t start = out_.size();
        std::size_t listed = 0;
        for (std::size_t vb = 0; vb < context_.config.vbuckets && listed < limit; ++vb) {
            const auto vbid = static_cast<engine::Vbid>(vb);
            for (const auto& item : bucket().listKeys(vbid, limit - listed)) {
                if (item.collection != engine::kDefaultCollection) {
                    continue;  // a text client reaches the default collection only
                }
                std::string line = "ITEM " + item.key + " [" + std::to_string(item.valueSize) +
                                   " b; " + std::to_string(item.meta.expiry) + " s]\r\n";
                if (out_.size() - start + line.size() > kCachedumpBytes) {
                    listed = limit;  // full: stop, as memcached does
                    break;
                }
                out_ += line;
                ++listed;
            }
        }
    }
    out_ += "END\r\n";
}

}  // namespace kvexec::server
