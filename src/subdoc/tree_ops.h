// subdoc/tree_ops.h: the sub-document operations on a parsed JSON tree
// (docs/SubDocument.md, "Command Listings"). The executor runs them on the
// body's tree and on a one-key object holding the xattr a spec names.
//
// Functions on caller-owned trees; no shared state. Safe from any thread
// for distinct trees.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "subdoc/json_text.h"
#include "subdoc/path.h"
#include "subdoc/spec.h"
#include "subdoc/status.h"

namespace kvexec::subdoc {

// The node at `path` under `root`: PathNotFound, PathMismatch (a key into
// a non-object, an index into a non-array) or Success with `out` set.
Status findNode(const Json& root, std::span<const PathComponent> path, const Json*& out);

// A lookup opcode (Get, Exists, GetCount) on `root`; `result` gets the
// value text (Get), nothing (Exists) or the element count (GetCount).
Status lookupOp(const Json& root, Opcode opcode, std::span<const PathComponent> path,
                std::string& result);

struct MutationArgs {
    Opcode opcode = Opcode::DictUpsert;
    std::span<const PathComponent> path;
    std::string_view value;  // JSON text (a comma-separated list for array pushes/insert)
    bool mkdirP = false;
    // Levels above `root` that count towards the depth limit: 0 for a body,
    // and for an xattr's one-key wrapper object -1 (the wrapper is not a level).
    int depthBias = 0;
};

// A mutation opcode on `root`. On failure `root` may hold a partial
// change; the executor discards the whole tree then. `result` gets the
// new number for Counter.
Status mutateOp(Json& root, const MutationArgs& args, std::string& result);

}  // namespace kvexec::subdoc
