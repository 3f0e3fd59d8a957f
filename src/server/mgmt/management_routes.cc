#include "server/mgmt/management_routes.h"

#include <sys/queue.h>  // TAILQ_INIT, for libevent's evkeyvalq

#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include <cctype>
#include <charconv>
#include <cstdlib>
#include <functional>
#include <future>
#include <initializer_list>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <utility>
#include <variant>

#include "protocol/auth/crypto.h"
#include "protocol/cluster_map.h"
#include "server/cluster_admin.h"

namespace kvexec::server::mgmt {
namespace {

using nlohmann::json;
using Segments = std::span<const std::string>;
using Form = std::map<std::string, std::string>;

constexpr std::string_view kJson = "application/json";
constexpr std::string_view kText = "text/plain; charset=utf-8";
// What the bucket object says this node runs: Couchbase's version format,
// so that code comparing versions finds a 7.6 node (collections, no magma).
constexpr std::string_view kNodeVersion = "7.6.0-kvexec";

HttpResponse text(int status, std::string body) {
    return {status, std::string(kText), std::move(body)};
}

HttpResponse jsonReply(int status, const json& body) {
    return {status, std::string(kJson), body.dump()};
}

// Couchbase's texts for an unknown path and an unknown bucket.
HttpResponse notFound() {
    return text(404, "Not found.");
}

HttpResponse bucketNotFound() {
    return text(404, "Requested resource not found.");
}

std::string inQuotes(std::string_view name) {
    std::string out(1, '"');
    out.append(name).push_back('"');
    return out;
}

struct FreeDeleter {
    void operator()(char* p) const { std::free(p); }
};
using CString = std::unique_ptr<char, FreeDeleter>;

std::string percentEncoded(const std::string& segment) {
    CString encoded(evhttp_uriencode(segment.c_str(), static_cast<ev_ssize_t>(segment.size()), 0));
    return encoded ? std::string(encoded.get()) : segment;
}

// application/x-www-form-urlencoded, decoded by libevent ('+' is a space);
// the first of repeated keys wins. nullopt if it does not parse.
std::optional<Form> parseForm(const std::string& body) {
    evkeyvalq fields;
    TAILQ_INIT(&fields);
    if (evhttp_parse_query_str(body.c_str(), &fields) != 0) {
        evhttp_clear_headers(&fields);
        return std::nullopt;
    }
    Form form;
    for (const evkeyval* field = fields.tqh_first; field != nullptr; field = field->next.tqe_next) {
        form.emplace(field->key, field->value);
    }
    evhttp_clear_headers(&fields);
    return form;
}

const std::string* field(const Form& form, const std::string& key) {
    const auto it = form.find(key);
    return it == form.end() ? nullptr : &it->second;
}

// A 405 unless one of `handlers` takes `method`.
HttpResponse byMethod(
    Method method,
    std::initializer_list<std::pair<Method, std::function<HttpResponse()>>> handlers) {
    for (const auto& [accepted, handler] : handlers) {
        if (accepted == method) {
            return handler();
        }
    }
    return text(405, "Method Not Allowed");
}

// ---- The bucket ---------------------------------------------------------

// The fields the SDKs read from a bucket (they read every one of these
// without a check: none may be missing or of another JSON type).
// A node of the bucket as Couchbase's REST API lists it.
json nodeJson(const std::string& host, std::uint16_t mgmtPort, std::uint16_t kvPort,
              bool thisNode) {
    return {
        {"status", "healthy"},           {"hostname", protocol::hostPort(host, mgmtPort)},
        {"version", kNodeVersion},       {"services", json::array({"kv"})},
        {"ports", {{"direct", kvPort}}}, {"thisNode", thisNode},
    };
}

// On a cluster, the nodes and replicas of the map this node serves.
json bucketJson(const ServerContext& context, const ServedBucket& served) {
    const auto& config = served.bucket->config();
    const std::string& name = served.name;
    const std::string uri = "/pools/default/buckets/" + percentEncoded(name);
    json nodes = json::array();
    std::uint32_t replicas = 0;
    if (const auto topology = served.cluster->config.get()) {
        replicas = topology->numReplicas;
        for (const auto& node : topology->nodes) {
            nodes.push_back(nodeJson(node.host, node.mgmtPort, node.kvPort, node.thisNode));
        }
    } else {
        nodes.push_back(nodeJson(context.config.host, context.boundMgmtPort.load(),
                                 context.boundPort.load(), true));
    }
    return {
        {"name", name},
        {"uuid", "kvexec-" + name},  // as the cluster map's
        {"uri", uri},
        {"bucketType", "membase"},
        {"quota", {{"ram", config.memoryQuota}, {"rawRAM", config.memoryQuota}}},
        {"replicaNumber", replicas},
        {"maxTTL", 0},
        {"numVBuckets", config.numVBuckets},
        {"evictionPolicy", "valueOnly"},
        {"conflictResolutionType", "seqno"},
        {"compressionMode", "off"},
        {"storageBackend", "couchstore"},
        {"durabilityMinLevel", "none"},
        {"controllers", {{"flush", uri + "/controller/doFlush"}}},
        {"bucketCapabilities", protocol::bucketCapabilities()},
        {"nodes", std::move(nodes)},
    };
}

// Whether `user` (null when the server asks for no authentication) may
// see and change `served`.
bool mayAccess(const protocol::auth::Users::User* user, const ServedBucket& served) {
    return user == nullptr || user->mayAccess(served.name);
}

// The buckets `user` may use, as Couchbase lists them.
json bucketList(const ServerContext& context, const protocol::auth::Users::User* user) {
    json list = json::array();
    for (const auto& served : context.buckets) {
        if (mayAccess(user, served)) {
            list.push_back(bucketJson(context, served));
        }
    }
    return list;
}

HttpResponse forbidden(const ServedBucket& served) {
    return jsonReply(403, {{"message", "Forbidden. User needs the following permissions"},
                           {"permissions", {"cluster.bucket[" + served.name + "]"}}});
}

HttpResponse createBucket(const HttpRequest& request, const ServerContext& context) {
    const auto form = parseForm(request.body);
    const std::string* name = form ? field(*form, "name") : nullptr;
    if (name != nullptr && context.findBucket(*name) != nullptr) {
        return jsonReply(400, {{"errors", {{"name", "Bucket with given name already exists"}}}});
    }
    return jsonReply(
        400, {{"errors", {{"_", "kvexec-server serves the buckets chosen at start (--bucket)"}}}});
}

HttpResponse dropBucket() {
    return text(400,
                "kvexec-server cannot drop a bucket it serves: stop the server, and start it "
                "without that --bucket");
}

// On a cluster, every node flushes (cluster_admin.h).
HttpResponse flushBucket(const ServedBucket& served) {
    if (served.cluster->admin != nullptr) {
        const auto flushed = served.cluster->admin->flush();
        if (flushed.status == engine::Status::Success) {
            return text(200, "");
        }
        return text(503, "flush failed: " + flushed.message);
    }
    // flush() completes inline (bucket.h); the future only makes the wait
    // explicit should that ever change.
    auto done = std::make_shared<std::promise<engine::Status>>();
    auto outcome = done->get_future();
    served.bucket->flush([done](engine::Status status) { done->set_value(status); });
    const engine::Status status = outcome.get();
    if (status == engine::Status::Success) {
        return text(200, "");
    }
    const int code = status == engine::Status::TempFail ? 503 : 500;
    return text(code, "flush failed: " + std::string(engine::to_string(status)));
}

// ---- Scopes and collections -----------------------------------------------

// A change goes to the cluster's manifest on a cluster's node
// (cluster_admin.h), else to the bucket's.
engine::ManifestChange changeManifest(const ServedBucket& served,
                                      const engine::ManifestEdit& edit) {
    if (served.cluster->admin != nullptr) {
        return served.cluster->admin->change(edit);
    }
    return served.bucket->changeManifest(edit);
}

// The reply to a manifest change, in Couchbase's words where the SDKs
// search for them.
HttpResponse manifestReply(const engine::ManifestChange& change, std::string_view scope,
                           std::string_view collection = {}) {
    using engine::ManifestOutcome;
    switch (change.outcome) {
        case ManifestOutcome::Success:
            return jsonReply(200, {{"uid", engine::hexId(change.uid)}});
        case ManifestOutcome::ScopeExists:
            return text(400, "Scope with name " + inQuotes(scope) + " already exists");
        case ManifestOutcome::CollectionExists:
            return text(400, "Collection with name " + inQuotes(collection) + " in scope " +
                                 inQuotes(scope) + " already exists");
        case ManifestOutcome::UnknownScope:
            return text(404, "Scope with name " + inQuotes(scope) + " is not found");
        case ManifestOutcome::UnknownCollection:
            return text(404, "Collection with name " + inQuotes(collection) + " in scope " +
                                 inQuotes(scope) + " is not found");
        case ManifestOutcome::LimitReached:
            return text(429, "Maximum number of collections has been reached for scope " +
                                 inQuotes(scope) + ": " + change.message);
        case ManifestOutcome::NotReady:
            return text(503, change.message);
        case ManifestOutcome::StorageFailure:
            return text(500, change.message);
        case ManifestOutcome::InvalidName:
        case ManifestOutcome::NotAllowed:
            break;
    }
    return text(400, change.message);
}

// The form's `name`, or the 400 to answer.
std::variant<std::string, HttpResponse> formName(const HttpRequest& request, Form& form) {
    auto parsed = parseForm(request.body);
    if (!parsed) {
        return text(400, "the body is not application/x-www-form-urlencoded");
    }
    form = std::move(*parsed);
    const std::string* name = field(form, "name");
    if (name == nullptr) {
        return text(400, "name: the value must be supplied");
    }
    return *name;
}

HttpResponse createScope(const HttpRequest& request, const ServedBucket& served) {
    Form form;
    auto name = formName(request, form);
    if (auto* refusal = std::get_if<HttpResponse>(&name)) {
        return *refusal;
    }
    const auto& scope = std::get<std::string>(name);
    return manifestReply(changeManifest(served, engine::ManifestEdit::createScope(scope)), scope);
}

// maxTTL as the SDKs send it: seconds, -1 or 0 for none.
std::optional<std::uint32_t> parseMaxTtl(const std::string& text) {
    std::int64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || value < -1 ||
        value > 2147483647) {
        return std::nullopt;
    }
    return value < 0 ? 0 : static_cast<std::uint32_t>(value);
}

HttpResponse createCollection(const HttpRequest& request, const ServedBucket& served,
                              const std::string& scope) {
    Form form;
    auto name = formName(request, form);
    if (auto* refusal = std::get_if<HttpResponse>(&name)) {
        return *refusal;
    }
    std::uint32_t maxTtl = 0;
    if (const std::string* given = field(form, "maxTTL")) {
        const auto parsed = parseMaxTtl(*given);
        if (!parsed) {
            return text(
                400, "maxTTL: expected an integer from -1 to 2147483647, got " + inQuotes(*given));
        }
        maxTtl = *parsed;
    }
    if (const std::string* history = field(form, "history")) {
        if (*history == "true") {
            // As Couchbase on a bucket without magma storage.
            return text(400, "history is not supported: kvexec-server keeps no history of changes");
        }
        if (*history != "false") {
            return text(400, "history: expected true or false, got " + inQuotes(*history));
        }
    }
    const auto& collection = std::get<std::string>(name);
    return manifestReply(
        changeManifest(served, engine::ManifestEdit::createCollection(scope, collection, maxTtl)),
        scope, collection);
}

HttpResponse updateCollection(const ServedBucket& served, const std::string& scope,
                              const std::string& collection) {
    const auto manifest = served.bucket->manifest();
    if (manifest.findScope(scope) == nullptr) {
        return manifestReply({engine::ManifestOutcome::UnknownScope, manifest.uid, {}}, scope);
    }
    if (manifest.findCollection(scope, collection) == nullptr) {
        return manifestReply({engine::ManifestOutcome::UnknownCollection, manifest.uid, {}}, scope,
                             collection);
    }
    return text(400,
                "kvexec-server cannot change the maxTTL or history of an existing collection: "
                "drop it and create it again");
}

// ---- Routing ----------------------------------------------------------------

// .../buckets/{b}/scopes[/...]; `rest` follows "scopes".
HttpResponse routeScopes(const HttpRequest& request, const ServedBucket& served, Segments rest) {
    auto& bucket = *served.bucket;
    const Method method = request.method;
    if (rest.empty()) {
        return byMethod(
            method, {{Method::Get,
                      [&] {
                          return HttpResponse{200, std::string(kJson), bucket.manifest().toJson()};
                      }},
                     {Method::Post, [&] { return createScope(request, served); }}});
    }
    const std::string& scope = rest[0];
    if (rest.size() == 1) {
        return byMethod(method,
                        {{Method::Delete, [&] {
                              return manifestReply(
                                  changeManifest(served, engine::ManifestEdit::dropScope(scope)),
                                  scope);
                          }}});
    }
    if (rest[1] != "collections" || rest.size() > 3) {
        return notFound();
    }
    if (rest.size() == 2) {
        return byMethod(method,
                        {{Method::Post, [&] { return createCollection(request, served, scope); }}});
    }
    const std::string& collection = rest[2];
    return byMethod(
        method,
        {{Method::Delete,
          [&] {
              return manifestReply(
                  changeManifest(served, engine::ManifestEdit::dropCollection(scope, collection)),
                  scope, collection);
          }},
         {Method::Patch, [&] { return updateCollection(served, scope, collection); }}});
}

// .../buckets/{b}[/...]; `rest` starts with {b}.
HttpResponse routeBucket(const HttpRequest& request, ServerContext& context,
                         const protocol::auth::Users::User* user, Segments rest) {
    const ServedBucket* served = context.findBucket(rest[0]);
    if (served != nullptr && !mayAccess(user, *served)) {
        return forbidden(*served);
    }
    const Segments below = rest.subspan(1);
    if (below.empty()) {
        return byMethod(
            request.method,
            {{Method::Get,
              [&] {
                  return served ? jsonReply(200, bucketJson(context, *served)) : bucketNotFound();
              }},
             {Method::Delete, [&] { return served ? dropBucket() : bucketNotFound(); }}});
    }
    if (below[0] == "scopes") {
        if (!served) {
            return bucketNotFound();
        }
        return routeScopes(request, *served, below.subspan(1));
    }
    if (below.size() == 2 && below[0] == "controller" && below[1] == "doFlush") {
        return byMethod(
            request.method,
            {{Method::Post, [&] { return served ? flushBucket(*served) : bucketNotFound(); }}});
    }
    return notFound();
}

}  // namespace

std::optional<std::vector<std::string>> splitPath(const std::string& path) {
    std::vector<std::string> segments;
    std::size_t start = path.starts_with('/') ? 1 : 0;
    while (start < path.size()) {
        std::size_t end = path.find('/', start);
        if (end == std::string::npos) {
            end = path.size();
        }
        const std::string raw = path.substr(start, end - start);
        std::size_t length = 0;
        CString decoded(evhttp_uridecode(raw.c_str(), 0, &length));
        if (!decoded) {
            return std::nullopt;
        }
        segments.emplace_back(decoded.get(), length);
        start = end + 1;
    }
    return segments;
}

const protocol::auth::Users::User* authorizedUser(const std::optional<std::string>& authorization,
                                                  const protocol::auth::Users& users) {
    constexpr std::string_view kScheme = "basic ";
    if (!authorization || authorization->size() < kScheme.size()) {
        return nullptr;
    }
    for (std::size_t i = 0; i < kScheme.size(); ++i) {
        if (std::tolower(static_cast<unsigned char>((*authorization)[i])) != kScheme[i]) {
            return nullptr;
        }
    }
    const auto decoded =
        protocol::auth::base64Decode(std::string_view(*authorization).substr(kScheme.size()));
    const std::size_t colon = decoded ? decoded->find(':') : std::string::npos;
    if (colon == std::string::npos) {
        return nullptr;
    }
    const std::string_view pair(*decoded);
    const protocol::auth::Users::User* user = users.find(pair.substr(0, colon));
    return user && user->credentials.checkPassword(pair.substr(colon + 1)) ? user : nullptr;
}

HttpResponse handle(const HttpRequest& request, ServerContext& context) {
    const protocol::auth::Users::User* user = nullptr;  // none: no authentication asked
    if (!context.users.empty()) {
        user = authorizedUser(request.authorization, context.users);
        if (user == nullptr) {
            return text(401, "Unauthorized");
        }
    }
    const auto& path = request.path;
    if (path.size() < 3 || path[0] != "pools" || path[1] != "default" || path[2] != "buckets") {
        return notFound();
    }
    const Segments rest = Segments(path).subspan(3);
    if (rest.empty()) {
        return byMethod(request.method,
                        {{Method::Get, [&] { return jsonReply(200, bucketList(context, user)); }},
                         {Method::Post, [&] { return createBucket(request, context); }}});
    }
    return routeBucket(request, context, user, rest);
}

}  // namespace kvexec::server::mgmt
