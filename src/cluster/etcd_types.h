// cluster/etcd_types.h: the values the etcd adapter (etcd_client.h,
// etcd_watch.h) takes and returns, and its one error type.
//
// Plain values; safe to copy between threads.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace kvexec::cluster {

// Where etcd's client URL is: "http://HOST:PORT" or "https://HOST:PORT"
// (parseEtcdUrl). Over https, etcd's certificate must be issued to HOST and
// signed by a CA in `caFile` (PEM; empty: one the system trusts).
struct EtcdEndpoint {
    std::string host;
    std::uint16_t port = 0;
    bool tls = false;
    std::string caFile;

    std::string url() const;  // "http[s]://HOST:PORT"
};

// Reads "http://HOST:PORT" or "https://HOST:PORT" (IPv6 hosts in
// brackets), with `caFile` for https (it must be empty for http); throws
// std::invalid_argument for anything else.
EtcdEndpoint parseEtcdUrl(const std::string& url, const std::string& caFile = "");

// Any failure to get an answer from etcd, or an answer that says no:
// the message names the URL asked and what went wrong (etcd's own message
// when it sent one).
class EtcdError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// One key as etcd holds it. Revisions are etcd's store revisions (> 0 for
// a key that exists); lease 0 means none.
struct KeyValue {
    std::string key;
    std::string value;
    std::int64_t createRevision = 0;
    std::int64_t modRevision = 0;
    std::int64_t lease = 0;

    bool operator==(const KeyValue&) const = default;
};

// The answer to a compare-and-swap put (EtcdClient::putIf).
struct CasResult {
    bool succeeded = false;
    // The store's revision after the transaction: on success, the put's
    // mod revision.
    std::int64_t revision = 0;
    // On failure, the key as it is now (nullopt: absent); on success unset.
    std::optional<KeyValue> current;
};

// One condition of a fenced write (EtcdClient::putIfUnchanged): `key`'s
// mod revision is `modRevision` (0: the key is absent).
struct ModRevisionCompare {
    std::string key;
    std::int64_t modRevision = 0;
};

struct WatchEvent {
    enum class Type { Put, Delete };
    Type type = Type::Put;
    std::string key;
    std::string value;  // empty for a delete
    std::int64_t modRevision = 0;

    bool operator==(const WatchEvent&) const = default;
};

}  // namespace kvexec::cluster
