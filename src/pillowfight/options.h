// pillowfight/options.h: kvexec-pillowfight's command line, named and meant
// as cbc-pillowfight's (libcouchbase), plus --connections, --duration,
// --protocol and --json. cbc-pillowfight's --json (JSON values) is
// -J/--json-values here, since --json PATH writes the results.
//
// Plain values, parsed once in main() and read-only afterwards.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/binary_types.h"

namespace kvexec::pillowfight {

enum class Protocol {
    Couchbase,  // HELLO, SASL, SELECT_BUCKET, cluster map, durability
    Memcached,  // plain binary protocol: no handshake, vBucket 0
};

struct Options {
    std::string host = "127.0.0.1";
    std::uint16_t port = 11210;
    std::string bucket = "default";
    // cbc-pillowfight's --collection: "scope.collection" (HELLO
    // Collections, its id from GET_COLLECTION_ID in front of every key);
    // empty: the default collection, no collection ids on the wire.
    std::string collection;
    std::string user;  // empty: no SASL
    std::string password;
    std::string saslMechanism = "SCRAM-SHA512";  // or PLAIN, SCRAM-SHA256, SCRAM-SHA1
    Protocol protocol = Protocol::Couchbase;

    unsigned threads = 1;         // event loops (OS threads)
    std::size_t connections = 0;  // clients in flight; 0: one per thread
    std::size_t batchSize = 100;  // ops a client schedules before waiting for all
    std::uint64_t numItems = 1000;
    std::size_t minSize = 50;
    std::size_t maxSize = 5120;
    bool randomBody = false;
    bool jsonValues = false;  // values are JSON documents (json_document.h)
    // Sub-document load: gets are lookups and sets upserts of subdocPaths
    // fields of the JSON documents (implies jsonValues; population still
    // stores whole documents).
    bool subdoc = false;
    std::size_t subdocPaths = 1;
    unsigned setPercent = 33;
    std::int64_t numCycles = -1;  // per client; -1: until --duration or SIGINT
    bool sequential = false;
    bool noPopulation = false;
    std::string keyPrefix;
    // nullopt: plain writes; else the level of frame info 1.
    std::optional<protocol::DurabilityLevel> durability;
    std::optional<std::uint16_t> durabilityTimeoutMs;  // absent: the server's default
    std::optional<std::chrono::milliseconds> duration;
    std::chrono::milliseconds timeout{60'000};  // no answer to a batch for this long: a timeout
    std::string jsonPath;                       // also write the results as JSON here
    bool quiet = false;                         // no progress lines

    std::size_t clientCount() const { return connections == 0 ? threads : connections; }
};

// Parses argv (without the program name). Throws std::invalid_argument
// with a message naming the option on a bad value, an unknown option or a
// contradiction (e.g. durability with --protocol memcached). `--help` sets
// `help` and returns the defaults.
Options parseOptions(const std::vector<std::string>& args, bool& help);
std::string usage();

// The level named as cbc-pillowfight names it ("none" gives nullopt).
std::optional<protocol::DurabilityLevel> parseDurability(const std::string& name);
std::string durabilityName(std::optional<protocol::DurabilityLevel> level);

}  // namespace kvexec::pillowfight
