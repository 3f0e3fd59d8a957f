// libFuzzer target for everything kvexec-server parses from the network:
// the binary request parser (framing extras included) and its shape rules,
// the text command parser, collection key prefixes, and the SASL server's
// handling of client messages. Any crash, sanitizer report or hang is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "server/auth/sasl_server.h"
#include "server/protocol/binary_request.h"
#include "server/protocol/keys.h"
#include "server/protocol/text_request.h"

using namespace kvexec::server;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view input(reinterpret_cast<const char*>(data), size);

    // Every request of a pipelined binary stream.
    protocol::RequestLimits limits{1 << 16};
    std::string_view rest = input;
    while (!rest.empty()) {
        auto r = protocol::parseRequest(rest, limits);
        if (r.outcome != protocol::ParseOutcome::Ok) {
            break;
        }
        std::string reason;
        (void)protocol::validateShape(r.request, reason);
        (void)protocol::splitCollectionKey(r.request.key);
        (void)protocol::vbucketOfKey(r.request.key, 1024);
        rest.remove_prefix(r.consumed);
    }

    // Every command of a pipelined text stream.
    protocol::TextLimits textLimits;
    textLimits.maxValueLength = 1 << 16;
    rest = input;
    while (!rest.empty()) {
        auto r = protocol::parseTextCommand(rest, textLimits);
        if (r.outcome == protocol::TextOutcome::Incomplete ||
            r.outcome == protocol::TextOutcome::Fatal || r.consumed == 0) {
            break;
        }
        rest.remove_prefix(r.consumed);
    }

    // SASL: the input as a SCRAM client-first, then as its client-final.
    static const auth::Credentials credentials("user", "pencil", 16);
    auth::SaslSession session(credentials);
    const std::size_t half = size / 2;
    (void)session.start("SCRAM-SHA256", input.substr(0, half));
    (void)session.step("SCRAM-SHA256", input.substr(half));
    (void)session.start("PLAIN", input);
    return 0;
}
