// lookup(): each spec reads the body's tree (parsed once, on first need),
// a stored xattr's tree (parsed once per key) or a virtual xattr.
#include <map>

#include "subdoc/binary_value.h"
#include "subdoc/executor.h"
#include "subdoc/json_text.h"
#include "subdoc/path.h"
#include "subdoc/tree_ops.h"
#include "subdoc/validate.h"
#include "subdoc/virtual_xattr.h"
#include "subdoc/xattr.h"

namespace kvexec::subdoc {

namespace {

// A parsed tree or the status that parsing gave.
struct Parsed {
    Status status = Status::Success;
    Json tree;
};

Parsed parseDocument(std::string_view text) {
    ParsedJson parsed = parseJson(text, kMaxDepth);
    if (parsed.error == JsonError::TooDeep) {
        return {Status::DocTooDeep, {}};
    }
    if (parsed.error != JsonError::None) {
        return {Status::DocNotJson, {}};
    }
    return {Status::Success, std::move(parsed.value)};
}

class LookupState {
  public:
    LookupState(const DocumentMeta& meta, const SplitValue& split) : meta_(meta), split_(split) {}

    SpecResult run(const Spec& spec) {
        SpecResult r;
        if (spec.opcode == Opcode::WholeGet) {
            r.value = std::string(split_.body);
            return r;
        }
        r.status = spec.isXattr() ? runXattr(spec, r.value) : runBody(spec, r.value);
        if (r.status != Status::Success) {
            r.value.clear();
        }
        return r;
    }

  private:
    Status runBody(const Spec& spec, std::string& value) {
        const ParsedPath path = parsePath(spec.path);
        if (path.status != Status::Success) {
            return path.status;
        }
        if (path.components.empty()) {
            return Status::PathInvalid;  // the whole body is a whole-document GET
        }
        if (meta_.deleted) {
            return Status::PathNotFound;  // a tombstone has no body
        }
        if (!body_) {
            body_ = parseDocument(split_.body);
        }
        if (body_->status != Status::Success) {
            return body_->status;
        }
        return lookupOp(body_->tree, spec.opcode, path.components, value);
    }

    Status runXattr(const Spec& spec, std::string& value) {
        const ParsedPath path = parseXattrPath(spec.path);
        if (path.status != Status::Success) {
            return path.status;
        }
        const std::string& key = path.components.front().key;
        const Parsed* tree = xattrTree(key);
        if (tree == nullptr) {
            return isVirtualXattr(key) ? Status::XattrUnknownVattr : Status::PathNotFound;
        }
        if (tree->status != Status::Success) {
            return tree->status;
        }
        const std::span<const PathComponent> rest(path.components.begin() + 1,
                                                  path.components.end());
        const Status status = lookupOp(tree->tree, spec.opcode, rest, value);
        if (status != Status::Success || (spec.flags & path_flag::BinaryValue) == 0) {
            return status;
        }
        auto bytes = decodeBinaryValue(value);
        if (!bytes) {
            return Status::FieldNotBinaryValue;
        }
        value = std::move(*bytes);
        return Status::Success;
    }

    // The parsed value of xattr `key` (virtual or stored); null if none.
    const Parsed* xattrTree(const std::string& key) {
        if (auto it = xattrs_.find(key); it != xattrs_.end()) {
            return &it->second;
        }
        if (isVirtualXattr(key)) {
            auto tree = virtualXattr(key, meta_, split_.body, split_.xattrs);
            if (!tree) {
                return nullptr;
            }
            return &(xattrs_[key] = Parsed{Status::Success, std::move(*tree)});
        }
        for (const auto& pair : split_.xattrs) {
            if (pair.key == key) {
                return &(xattrs_[key] = parseDocument(pair.value));
            }
        }
        return nullptr;
    }

    const DocumentMeta& meta_;
    const SplitValue& split_;
    std::optional<Parsed> body_;
    std::map<std::string, Parsed, std::less<>> xattrs_;
};

}  // namespace

LookupOutcome lookup(std::string_view stored, const DocumentMeta& meta, std::span<const Spec> specs,
                     std::uint8_t docFlags) {
    LookupOutcome outcome;
    outcome.status = validateRequest(specs, RequestKind::Lookup, docFlags);
    if (outcome.status != Status::Success) {
        return outcome;
    }
    auto split = splitValue(stored, meta.datatype);
    if (!split) {
        outcome.status = Status::Internal;
        return outcome;
    }
    if (meta.deleted) {
        split->body = {};
    }
    LookupState state(meta, *split);
    bool failed = false;
    for (const Spec& spec : specs) {
        outcome.results.push_back(state.run(spec));
        failed = failed || outcome.results.back().status != Status::Success;
    }
    if (meta.deleted) {
        outcome.status = failed ? Status::MultiPathFailureDeleted : Status::SuccessDeleted;
    } else {
        outcome.status = failed ? Status::MultiPathFailure : Status::Success;
    }
    return outcome;
}

}  // namespace kvexec::subdoc
