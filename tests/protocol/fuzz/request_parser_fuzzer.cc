// libFuzzer target for everything kvexec-server parses from the network:
// the connection's framing (which protocol, how many bytes a request
// needs) over input arriving in arbitrary chunks, the binary request
// parser (framing extras included) and its shape rules, the DCP message
// decoders (requests, and the responses a consumer reads), the text command
// parser (meta commands included), base64 keys, collection key prefixes,
// and the SASL server's handling of
// client messages. Any crash, sanitizer report, hang or broken framing
// invariant is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/auth/sasl_server.h"
#include "protocol/base64.h"
#include "protocol/binary_request.h"
#include "protocol/client_codec.h"
#include "protocol/dcp.h"
#include "protocol/framing.h"
#include "protocol/keys.h"
#include "protocol/text_request.h"

using namespace kvexec;

namespace {

void check(bool invariant, const char* what) {
    if (!invariant) {
        std::fprintf(stderr, "framing invariant broken: %s\n", what);
        std::abort();
    }
}

// Small limits, so that the fuzzer reaches them.
protocol::FramingLimits fuzzLimits() {
    protocol::FramingLimits limits;
    limits.binary.maxBodyLength = 1 << 12;
    limits.text.maxLineLength = 64;
    limits.text.maxGetLineLength = 512;
    limits.text.maxValueLength = 1 << 12;
    return limits;
}

// What the connection did with one request taken off its buffer.
struct Taken {
    protocol::Wire wire;
    int outcome;
    std::size_t consumed;
    std::uint16_t status;
    std::string errorLine;
    bool operator==(const Taken&) const = default;
};

// Takes requests off the front of `buffer` as Connection::processNext does;
// returns false once the connection would close.
bool takeRequests(std::string& buffer, const protocol::FramingLimits& limits,
                  std::vector<Taken>& taken) {
    while (!buffer.empty()) {
        const protocol::Wire wire = protocol::wireOf(buffer[0]);
        const std::size_t probe = std::min(buffer.size(), protocol::probeLength(wire, limits));
        std::size_t cut = probe;
        if (wire == protocol::Wire::Text) {
            const std::size_t eol = buffer.find('\n');
            if (eol != std::string::npos) {
                cut = std::min(probe, eol + 1);
            }
        }
        const std::string_view all(buffer);
        const std::size_t need = protocol::requestExtent(wire, all.substr(0, cut), limits);
        check(need > 0, "a request needs at least one byte");
        if (need > buffer.size()) {
            return true;  // wait for more input
        }
        // The line end only saves work: the whole probe gives the same extent.
        check(protocol::requestExtent(wire, all.substr(0, probe), limits) == need,
              "extent depends on how far the framer looked");
        const std::string_view bytes = all.substr(0, need);
        Taken t{wire, 0, 0, 0, {}};
        bool goesOn = true;
        if (wire == protocol::Wire::Binary) {
            auto r = protocol::parseRequest(bytes, limits.binary);
            t.outcome = static_cast<int>(r.outcome);
            t.consumed = r.consumed;
            t.status = static_cast<std::uint16_t>(r.status);
            check(r.outcome != protocol::ParseOutcome::Incomplete, "binary: Incomplete at extent");
            if (r.outcome == protocol::ParseOutcome::Ok) {
                check(r.consumed == need, "binary: consumed differs from the extent");
                std::string reason;
                (void)protocol::validateShape(r.request, reason);
                (void)protocol::vbucketOfKey(r.request.key, 1024);
                (void)protocol::dcp::checkRequest(r.request);
            } else {
                goesOn = false;
            }
        } else {
            auto r = protocol::parseTextCommand(bytes, limits.text);
            t.outcome = static_cast<int>(r.outcome);
            t.consumed = r.consumed;
            t.errorLine = r.errorLine;
            check(r.outcome != protocol::TextOutcome::Incomplete, "text: Incomplete at extent");
            if (r.outcome == protocol::TextOutcome::Fatal) {
                goesOn = false;
            } else {
                check(r.consumed == need, "text: consumed differs from the extent");
            }
        }
        taken.push_back(std::move(t));
        if (!goesOn) {
            return false;
        }
        buffer.erase(0, need);
    }
    return true;
}

// Feeds `input` in chunks whose sizes come from `seed`, taking requests
// after each chunk as the connection does after each read.
std::vector<Taken> frameInChunks(std::string_view input, std::uint32_t seed,
                                 const protocol::FramingLimits& limits) {
    std::vector<Taken> taken;
    std::string buffer;
    while (!input.empty()) {
        seed = seed * 1664525u + 1013904223u;
        const std::size_t chunk = std::min<std::size_t>(input.size(), 1 + (seed >> 24) % 97);
        buffer.append(input.substr(0, chunk));
        input.remove_prefix(chunk);
        if (!takeRequests(buffer, limits, taken)) {
            break;
        }
    }
    return taken;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    const auto limits = fuzzLimits();

    // Framing: the same requests whether the input arrives at once or in
    // pieces (a slow client is not another client).
    std::vector<Taken> whole;
    std::string buffer(input);
    (void)takeRequests(buffer, limits, whole);
    const std::uint32_t seed = size > 0 ? data[size - 1] : 0;
    check(frameInChunks(input, seed, limits) == whole, "chunked input framed differently");

    // The parsers on raw input too (not only at framed boundaries).
    auto binary = protocol::parseRequest(input, limits.binary);
    if (binary.outcome == protocol::ParseOutcome::Ok) {
        check(binary.consumed <= size, "binary: consumed past the input");
    }
    auto text = protocol::parseTextCommand(input, limits.text);
    check(text.consumed <= size, "text: consumed past the input");

    // What a DCP consumer reads back: the producer's answers.
    auto response = protocol::parseResponse(input, limits.binary.maxBodyLength);
    if (response.outcome == protocol::ResponseOutcome::Ok) {
        (void)protocol::dcp::decodeStreamRequestResponse(response.response);
        (void)protocol::dcp::decodeFailoverLogResponse(response.response);
        (void)protocol::dcp::decodeAddStreamResponse(response.response);
    }

    // base64 (meta commands' b flag): anything encoded decodes back.
    (void)protocol::decodeBase64(input);
    if (size != 0) {
        check(protocol::decodeBase64(protocol::encodeBase64(input)) == std::string(input),
              "base64 round trip");
    }

    // SASL: the input as a SCRAM client-first, then as its client-final.
    static const protocol::auth::Users users = [] {
        protocol::auth::Users u;
        u.add({"user", "pencil", 16}, protocol::auth::Role::Client);
        return u;
    }();
    protocol::auth::SaslSession session(users);
    const std::size_t half = size / 2;
    (void)session.start("SCRAM-SHA256", input.substr(0, half));
    (void)session.step("SCRAM-SHA256", input.substr(half));
    (void)session.start("PLAIN", input);
    return 0;
}
