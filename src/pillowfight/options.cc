#include "pillowfight/options.h"

#include <charconv>
#include <stdexcept>

#include "kvexec/engine/collections.h"
#include "subdoc/spec.h"

namespace kvexec::pillowfight {
namespace {

using protocol::DurabilityLevel;

template <class T>
T number(const std::string& option, const std::string& text, T min, T max) {
    T value{};
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || value < min || value > max) {
        throw std::invalid_argument(option + ": '" + text + "' is not a number in [" +
                                    std::to_string(min) + ", " + std::to_string(max) + "]");
    }
    return value;
}

// couchbase://HOST[:PORT][/BUCKET][?...]; an IPv6 host is written [::1].
void parseSpec(const std::string& spec, Options& o) {
    std::string rest = spec;
    for (const char* scheme : {"couchbase://", "memcached://"}) {
        if (rest.rfind(scheme, 0) == 0) {
            rest.erase(0, std::string(scheme).size());
        }
    }
    if (rest.find("://") != std::string::npos) {
        throw std::invalid_argument("--spec: only couchbase:// is supported: " + spec);
    }
    rest = rest.substr(0, rest.find('?'));
    if (const auto slash = rest.find('/'); slash != std::string::npos) {
        if (slash + 1 < rest.size()) {
            o.bucket = rest.substr(slash + 1);
        }
        rest.erase(slash);
    }
    std::string host = rest;
    std::string port;
    if (!rest.empty() && rest[0] == '[') {
        const auto close = rest.find(']');
        if (close == std::string::npos) {
            throw std::invalid_argument("--spec: unclosed '[' in " + spec);
        }
        host = rest.substr(1, close - 1);
        if (close + 1 < rest.size() && rest[close + 1] == ':') {
            port = rest.substr(close + 2);
        }
    } else if (const auto colon = rest.find(':'); colon != std::string::npos) {
        host = rest.substr(0, colon);
        port = rest.substr(colon + 1);
    }
    if (host.empty()) {
        throw std::invalid_argument("--spec: no host in " + spec);
    }
    o.host = host;
    if (!port.empty()) {
        o.port = number<std::uint16_t>("--spec port", port, 1, 65535);
    }
}

void checkConsistency(const Options& o) {
    if (o.minSize > o.maxSize) {
        throw std::invalid_argument("--min-size is above --max-size");
    }
    if (o.batchSize == 0) {
        throw std::invalid_argument("--batch-size must be at least 1");
    }
    if (!o.collection.empty() && !engine::parseCollectionPath(o.collection)) {
        throw std::invalid_argument("--collection: '" + o.collection +
                                    "' is not scope.collection with valid names");
    }
    if (o.protocol == Protocol::Memcached && !o.collection.empty()) {
        throw std::invalid_argument("--collection needs --protocol couchbase");
    }
    if (o.protocol == Protocol::Memcached && o.durability) {
        throw std::invalid_argument("--durability needs --protocol couchbase");
    }
    if (o.protocol == Protocol::Memcached && !o.user.empty()) {
        throw std::invalid_argument("-u/-P need --protocol couchbase");
    }
    if (!o.user.empty() && o.saslMechanism != "PLAIN" && o.saslMechanism != "SCRAM-SHA1" &&
        o.saslMechanism != "SCRAM-SHA256" && o.saslMechanism != "SCRAM-SHA512") {
        throw std::invalid_argument("--sasl-mech: unknown mechanism " + o.saslMechanism);
    }
    if (o.numItems == 0) {
        throw std::invalid_argument("--num-items must be at least 1");
    }
}

}  // namespace

std::optional<DurabilityLevel> parseDurability(const std::string& name) {
    if (name == "none") {
        return std::nullopt;
    }
    if (name == "majority") {
        return DurabilityLevel::Majority;
    }
    if (name == "majority_and_persist_to_active" || name == "majority_and_persist_on_master") {
        return DurabilityLevel::MajorityAndPersistOnMaster;
    }
    if (name == "persist_to_majority") {
        return DurabilityLevel::PersistToMajority;
    }
    throw std::invalid_argument(
        "--durability: '" + name +
        "' is none of none|majority|majority_and_persist_to_active|persist_to_majority");
}

std::string durabilityName(std::optional<DurabilityLevel> level) {
    if (!level) {
        return "none";
    }
    switch (*level) {
        case DurabilityLevel::Majority:
            return "majority";
        case DurabilityLevel::MajorityAndPersistOnMaster:
            return "majority_and_persist_to_active";
        case DurabilityLevel::PersistToMajority:
            return "persist_to_majority";
    }
    return "none";
}

Options parseOptions(const std::vector<std::string>& args, bool& help) {
    Options o;
    help = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
        std::string name = args[i];
        std::optional<std::string> inlineValue;
        if (name.rfind("--", 0) == 0) {
            if (const auto eq = name.find('='); eq != std::string::npos) {
                inlineValue = name.substr(eq + 1);
                name.erase(eq);
            }
        } else if (name.size() > 2 && name[0] == '-') {  // -t4
            inlineValue = name.substr(2);
            name.erase(2);
        }
        const auto value = [&]() -> std::string {
            if (inlineValue) {
                return *inlineValue;
            }
            if (i + 1 >= args.size()) {
                throw std::invalid_argument(name + " needs a value");
            }
            return args[++i];
        };
        const auto flag = [&] {
            if (inlineValue) {
                throw std::invalid_argument(name + " takes no value");
            }
        };
        if (name == "-h" || name == "--help") {
            help = true;
        } else if (name == "-U" || name == "--spec") {
            parseSpec(value(), o);
        } else if (name == "-u" || name == "--username") {
            o.user = value();
        } else if (name == "-P" || name == "--password") {
            o.password = value();
        } else if (name == "--sasl-mech") {
            o.saslMechanism = value();
        } else if (name == "-t" || name == "--num-threads") {
            o.threads = number<unsigned>(name, value(), 1, 256);
        } else if (name == "--connections") {
            o.connections = number<std::size_t>(name, value(), 1, 100'000);
        } else if (name == "-B" || name == "--batch-size") {
            o.batchSize = number<std::size_t>(name, value(), 1, 65'536);
        } else if (name == "-I" || name == "--num-items") {
            o.numItems = number<std::uint64_t>(name, value(), 1, 1'000'000'000'000);
        } else if (name == "-m" || name == "--min-size") {
            o.minSize = number<std::size_t>(name, value(), 0, 20 * 1024 * 1024);
        } else if (name == "-M" || name == "--max-size") {
            o.maxSize = number<std::size_t>(name, value(), 0, 20 * 1024 * 1024);
        } else if (name == "-R" || name == "--random-body") {
            flag();
            o.randomBody = true;
        } else if (name == "-J" || name == "--json-values") {
            flag();
            o.jsonValues = true;
        } else if (name == "--collection") {
            o.collection = value();
        } else if (name == "--subdoc") {
            flag();
            o.subdoc = true;
        } else if (name == "--pathcount") {
            // As in cbc-pillowfight, asking for paths asks for --subdoc.
            o.subdocPaths = number<std::size_t>(name, value(), 1, subdoc::kMaxSpecs);
            o.subdoc = true;
        } else if (name == "-r" || name == "--set-pct") {
            o.setPercent = number<unsigned>(name, value(), 0, 100);
        } else if (name == "-c" || name == "--num-cycles") {
            o.numCycles = number<std::int64_t>(name, value(), -1, INT64_MAX);
        } else if (name == "--sequential") {
            flag();
            o.sequential = true;
        } else if (name == "-n" || name == "--no-population") {
            flag();
            o.noPopulation = true;
        } else if (name == "-p" || name == "--key-prefix") {
            o.keyPrefix = value();
        } else if (name == "-d" || name == "--durability") {
            o.durability = parseDurability(value());
        } else if (name == "--durability-timeout-ms") {
            o.durabilityTimeoutMs = number<std::uint16_t>(name, value(), 1, 65535);
        } else if (name == "--duration") {
            o.duration = std::chrono::milliseconds(
                static_cast<std::int64_t>(1000 * number<double>(name, value(), 0.001, 1e7)));
        } else if (name == "--timeout") {
            o.timeout = std::chrono::milliseconds(
                static_cast<std::int64_t>(1000 * number<double>(name, value(), 0.001, 1e6)));
        } else if (name == "--protocol") {
            const std::string p = value();
            if (p == "couchbase") {
                o.protocol = Protocol::Couchbase;
            } else if (p == "memcached") {
                o.protocol = Protocol::Memcached;
            } else {
                throw std::invalid_argument("--protocol: '" + p +
                                            "' is neither couchbase nor "
                                            "memcached");
            }
        } else if (name == "--json") {
            o.jsonPath = value();
        } else if (name == "-q" || name == "--quiet") {
            flag();
            o.quiet = true;
        } else {
            throw std::invalid_argument("unknown option " + args[i]);
        }
    }
    // Sub-document specs need JSON documents to act on (cbc-pillowfight
    // refuses --subdoc without --json; here it implies it).
    o.jsonValues = o.jsonValues || o.subdoc;
    checkConsistency(o);
    return o;
}

std::string usage() {
    return R"(usage: kvexec-pillowfight [options]
  -U, --spec couchbase://HOST[:PORT][/BUCKET]   server (default 127.0.0.1:11210/default)
  -u, --username NAME  -P, --password PW      SASL login (none when -u is absent)
      --sasl-mech SCRAM-SHA512|SCRAM-SHA256|SCRAM-SHA1|PLAIN   (default SCRAM-SHA512)
      --protocol couchbase|memcached           memcached: plain binary, no handshake
      --collection S.C    the load goes to collection C of scope S (default: _default)
  -t, --num-threads N     event-loop threads (default 1)
      --connections N     clients in flight, spread over the threads (default: one per thread)
  -B, --batch-size N      ops a client schedules before waiting for all of them (default 100)
  -I, --num-items N       keys in the working set (default 1000)
  -p, --key-prefix S      prefix of every key
  -m, --min-size N  -M, --max-size N   value sizes in bytes (default 50..5120)
  -R, --random-body       random bytes in values (default: a fixed pattern)
  -J, --json-values       values are JSON objects of 16-byte fields padded to the size
                          (cbc-pillowfight's -J/--json)
      --subdoc            gets are SUBDOC_MULTI_LOOKUPs and sets SUBDOC_MULTI_MUTATIONs
                          (dict upsert) of fields of the JSON values; implies -J
      --pathcount N       paths per sub-document command, 1..16 (default 1); implies --subdoc
  -r, --set-pct N         percentage of sets, the rest are gets (default 33)
  -c, --num-cycles N      batches per client; -1: until --duration or SIGINT (default -1)
      --sequential        each client walks its own slice of the keys in order
  -n, --no-population     skip storing every key once before the load
  -d, --durability none|majority|majority_and_persist_to_active|persist_to_majority
      --durability-timeout-ms N   sent with each durable write (default: the server's)
      --duration SECONDS  stop the load after this long
      --timeout SECONDS   a batch unanswered for this long counts as timed out (default 60)
      --json PATH         also write the results (counts, histograms) as JSON
  -q, --quiet             no progress or OPS/SEC lines
)";
}

}  // namespace kvexec::pillowfight
