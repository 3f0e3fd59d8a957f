// pillowfight/subdoc_request.h: --subdoc's requests, as cbc-pillowfight
// sends them through libcouchbase: a get becomes a SUBDOC_MULTI_LOOKUP of
// SUBDOC_GET specs and a set a SUBDOC_MULTI_MUTATION of SUBDOC_DICT_UPSERT
// specs, with no doc flags (the document must exist: population stores it)
// and no expiry; and the name of what failed, for the error counts.
//
// Pure functions. Safe from any thread.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "protocol/client_codec.h"
#include "subdoc/spec.h"

namespace kvexec::pillowfight {

// A lookup spec (SUBDOC_GET of `path`) and a mutation spec
// (SUBDOC_DICT_UPSERT of `jsonValue`, JSON text, at `path`).
subdoc::Spec lookupSpec(std::string path);
subdoc::Spec upsertSpec(std::string path, std::string jsonValue);

// Appends the request; `header.opcode` is set here.
void appendLookupIn(std::string& out, protocol::RequestHeader header, std::string_view key,
                    std::span<const subdoc::Spec> specs);
void appendMutateIn(std::string& out, protocol::RequestHeader header,
                    std::string_view framingExtras, std::string_view key,
                    std::span<const subdoc::Spec> specs);

// A status by name: the sub-document ones (0xc0 and up) as src/subdoc
// names them ("PathNotFound"), the others as the server's statusText.
std::string statusName(protocol::Status status);

// For a multi-path failure (SUBDOC_MULTI_PATH_FAILURE), which spec failed
// and why, from the response body ("spec 0: PathNotFound (0xc0)"); empty
// when the body says nothing (another status, or a truncated body).
std::string failedSpec(const protocol::Response& response);

}  // namespace kvexec::pillowfight
