// mgmt/management_routes.h: what the management (REST) endpoint answers:
// the part of Couchbase's cluster manager API (port 8091) that the
// Couchbase SDKs' collection and bucket managers call, served for the
// buckets of kvexec-server.
//
// Routes (paths under /pools/default/buckets; {b} a served bucket):
//   GET    /pools/default/buckets                      [bucket...]
//   POST   /pools/default/buckets                      400 (buckets fixed at start)
//   GET    .../{b}                                     bucket
//   DELETE .../{b}                                     400 (not supported)
//   POST   .../{b}/controller/doFlush                  flush
//   GET    .../{b}/scopes                              the manifest
//   POST   .../{b}/scopes                name=S        create scope
//   DELETE .../{b}/scopes/{s}                          drop scope
//   POST   .../{b}/scopes/{s}/collections name=C[&maxTTL=N][&history=false]
//   DELETE .../{b}/scopes/{s}/collections/{c}
//   PATCH  .../{b}/scopes/{s}/collections/{c}          400 (no update of a collection)
// An unknown bucket is 404, an unknown path 404, a known path with another
// method 405. Replies and error texts follow Couchbase's, since the SDKs
// pick their error codes by status and by searching the text (e.g.
// `Scope with name "s" is not found`), and crash on a JSON reply that
// lacks a field they read.
//
// Thread safety: handle() may be called from any thread; it reads the
// context (read-only while serving) and calls the bucket (safe from any
// thread). A manifest change blocks on the bucket's fsync, and on a
// cluster on the other nodes: call it from a management worker
// (management_server.h), never from an event loop.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "server/server_context.h"

namespace kvexec::server::mgmt {

enum class Method { Get, Post, Put, Delete, Patch, Other };

struct HttpRequest {
    Method method = Method::Get;
    std::vector<std::string> path;  // segments, percent-decoded
    std::string body;               // application/x-www-form-urlencoded
    std::optional<std::string> authorization;
};

struct HttpResponse {
    int status = 200;
    std::string contentType;  // "application/json" or "text/plain"
    std::string body;
};

// Answers one request (authentication included: HTTP Basic against
// context.users, when there are any).
HttpResponse handle(const HttpRequest& request, ServerContext& context);

// Splits a request path ("/a/b%2Fc/") into percent-decoded segments
// ({"a", "b/c"}); a trailing slash adds no segment. nullopt if a segment
// does not decode.
std::optional<std::vector<std::string>> splitPath(const std::string& path);

// The one of `users` whose HTTP Basic credentials `authorization` (an
// Authorization header, or none) carries; nullptr if none does (the
// password compared in constant time; whether a user name exists is no
// secret, as with SCRAM).
const protocol::auth::Users::User* authorizedUser(const std::optional<std::string>& authorization,
                                                  const protocol::auth::Users& users);

}  // namespace kvexec::server::mgmt
