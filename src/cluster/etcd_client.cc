#include "cluster/etcd_client.h"

#include "cluster/etcd_codec.h"
#include "cluster/etcd_http.h"

namespace kvexec::cluster {
namespace {

namespace codec = etcd_codec;

constexpr int kHttpOk = 200;
constexpr int kHttpNotFound = 404;  // gRPC NotFound, e.g. no such lease

[[noreturn]] void rethrowFor(const EtcdEndpoint& endpoint, std::string_view path,
                             std::string_view why) {
    std::string message = "etcd ";
    message += endpoint.url();
    message += path;
    message += ": ";
    message += why;
    throw EtcdError(message);
}

std::string statusText(const HttpReply& reply) {
    std::string text = "HTTP ";
    text += std::to_string(reply.status);
    text += ": ";
    text += codec::errorMessage(reply.body);
    return text;
}

}  // namespace

EtcdClient::EtcdClient(EtcdEndpoint endpoint, std::chrono::milliseconds timeout)
    : endpoint_(std::move(endpoint)),
      timeout_(timeout),
      http_(std::make_unique<EtcdHttp>(endpoint_, timeout)) {}

EtcdClient::~EtcdClient() = default;

// POSTs, checks the status, and reads the reply with `read`; every failure
// becomes an EtcdError naming the URL.
template <typename Read>
auto EtcdClient::call(std::string_view path, const std::string& body, Read read) {
    HttpReply reply;
    {
        detail::MutexLock lock(mutex_);
        reply = http_->post(path, body);
    }
    if (reply.status != kHttpOk) {
        rethrowFor(endpoint_, path, statusText(reply));
    }
    try {
        return read(codec::parseReply(reply.body));
    } catch (const EtcdError& error) {
        rethrowFor(endpoint_, path, error.what());
    }
}

std::optional<KeyValue> EtcdClient::get(std::string_view key) {
    auto kvs = call("/v3/kv/range", codec::rangeRequest(key).dump(), codec::readRange);
    if (kvs.empty()) {
        return std::nullopt;
    }
    return std::move(kvs.front());
}

std::vector<KeyValue> EtcdClient::getPrefix(std::string_view prefix) {
    const auto request = codec::rangeRequest(prefix, codec::prefixEnd(prefix));
    return call("/v3/kv/range", request.dump(), codec::readRange);
}

std::int64_t EtcdClient::put(std::string_view key, std::string_view value, std::int64_t leaseId) {
    return call("/v3/kv/put", codec::putRequest(key, value, leaseId).dump(),
                codec::readHeaderRevision);
}

bool EtcdClient::del(std::string_view key) {
    return call("/v3/kv/deleterange", codec::deleteRequest(key).dump(), codec::readDeleted) > 0;
}

CasResult EtcdClient::putIf(std::string_view key, std::string_view value,
                            std::int64_t expectedModRevision, std::int64_t leaseId) {
    const auto request = codec::casPutRequest(key, value, expectedModRevision, leaseId);
    return call("/v3/kv/txn", request.dump(), codec::readCasPut);
}

CasResult EtcdClient::putIfUnchanged(std::string_view key, std::string_view value,
                                     const std::vector<ModRevisionCompare>& compares,
                                     std::int64_t leaseId) {
    const auto request = codec::fencedPutRequest(key, value, compares, leaseId);
    return call("/v3/kv/txn", request.dump(), codec::readCasPut);
}

std::int64_t EtcdClient::grantLease(std::chrono::seconds ttl) {
    return call("/v3/lease/grant", codec::leaseGrantRequest(ttl.count()).dump(),
                codec::readLeaseGrant);
}

std::int64_t EtcdClient::keepAlive(std::int64_t leaseId) {
    return call("/v3/lease/keepalive", codec::leaseRequest(leaseId).dump(), codec::readKeepAlive);
}

bool EtcdClient::revoke(std::int64_t leaseId) {
    constexpr std::string_view kPath = "/v3/lease/revoke";
    HttpReply reply;
    {
        detail::MutexLock lock(mutex_);
        reply = http_->post(kPath, codec::leaseRequest(leaseId).dump());
    }
    if (reply.status == kHttpNotFound) {
        return false;
    }
    if (reply.status != kHttpOk) {
        rethrowFor(endpoint_, kPath, statusText(reply));
    }
    return true;
}

std::unique_ptr<EtcdWatch> EtcdClient::watchPrefix(std::string_view prefix,
                                                   std::int64_t startRevision,
                                                   EtcdWatch::OnEvent onEvent,
                                                   EtcdWatch::OnEnd onEnd) {
    return std::make_unique<EtcdWatch>(endpoint_, std::string(prefix), codec::prefixEnd(prefix),
                                       startRevision, std::move(onEvent), std::move(onEnd),
                                       timeout_);
}

}  // namespace kvexec::cluster
