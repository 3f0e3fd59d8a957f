// mutate(): the specs run in order on one working copy (the body's tree,
// parsed on first need, and the xattrs, each parsed on first need); the
// new value is serialised only when every spec succeeded, so a failing
// spec leaves nothing to store. Untouched parts keep their stored bytes.
#include <algorithm>

#include "storage/crc32c.h"
#include "subdoc/binary_value.h"
#include "subdoc/executor.h"
#include "subdoc/json_text.h"
#include "subdoc/macros.h"
#include "subdoc/path.h"
#include "subdoc/tree_ops.h"
#include "subdoc/validate.h"
#include "subdoc/virtual_xattr.h"
#include "subdoc/xattr.h"

namespace kvexec::subdoc {

namespace {

struct XattrEntry {
    std::string key;
    std::string raw;           // the stored text, while `tree` is empty
    std::optional<Json> tree;  // parsed (and maybe changed)
    bool macros = false;       // a macro spec wrote into it
};

enum class Body { Absent, Raw, Tree };

// The document-level facts mutate() settles before running any spec.
struct Plan {
    bool creating = false;      // no (usable) document: start from nothing
    bool tombstone = false;     // operating on a deleted document's xattrs
    bool staysDeleted = false;  // the result is a tombstone
    bool mkdirP = false;        // Mkdoc and Add imply MkdirP on every path
};

bool isArrayOp(Opcode op) {
    return op == Opcode::ArrayPushFirst || op == Opcode::ArrayPushLast ||
           op == Opcode::ArrayAddUnique;
}

Status parseStored(std::string_view text, Json& out) {
    ParsedJson parsed = parseJson(text, kMaxDepth);
    if (parsed.error == JsonError::TooDeep) {
        return Status::DocTooDeep;
    }
    if (parsed.error != JsonError::None) {
        return Status::DocNotJson;
    }
    out = std::move(parsed.value);
    return Status::Success;
}

class MutationState {
  public:
    MutationState(const DocumentMeta& meta, const Plan& plan, SplitValue split)
        : meta_(meta), plan_(plan), originalBody_(split.body) {
        for (auto& pair : split.xattrs) {
            xattrs_.push_back({std::move(pair.key), std::move(pair.value), std::nullopt, false});
        }
        if (!plan.creating && !plan.tombstone) {
            body_ = Body::Raw;
            rawBody_ = std::string(split.body);
            bodyJson_ = (meta.datatype & kDatatypeJson) != 0;
        }
    }

    Status run(const Spec& spec, std::string& result) {
        if (spec.isXattr()) {
            return spec.opcode == Opcode::ReplaceBodyWithXattr ? replaceBodyWithXattr(spec)
                                                               : runXattr(spec, result);
        }
        switch (spec.opcode) {
            case Opcode::WholeSet:
                return wholeSet(spec.value);
            case Opcode::WholeDelete:
                return wholeDelete();
            default:
                return runBody(spec, result);
        }
    }

    void finish(MutationOutcome& out) {
        std::string body = bodyText();
        out.newDatatype = bodyJson_ && !body.empty() ? kDatatypeJson : 0;
        // The body's checksum, for ${Mutation.value_crc32c}: only a request
        // with macros pays for it.
        const bool anyMacros = std::any_of(xattrs_.begin(), xattrs_.end(),
                                           [](const XattrEntry& e) { return e.macros; });
        const std::string crcHex =
            anyMacros ? hex32(storage::crc32c(body.data(), body.size())) : std::string();
        std::vector<XattrPair> pairs;
        std::vector<std::vector<MacroSlot>> slots(xattrs_.size());
        for (std::size_t i = 0; i < xattrs_.size(); ++i) {
            XattrEntry& e = xattrs_[i];
            std::string text = !e.tree    ? std::move(e.raw)
                               : e.macros ? dumpWithMacros(*e.tree, crcHex, slots[i])
                                          : dumpJson(*e.tree);
            pairs.push_back({std::move(e.key), std::move(text)});
        }
        const auto offsets = valueOffsets(pairs);
        for (std::size_t i = 0; i < slots.size(); ++i) {
            for (MacroSlot s : slots[i]) {
                out.macros.push_back({offsets[i] + s.offset, s.kind});
            }
        }
        out.newValue = encodeXattrs(pairs);
        if (!pairs.empty()) {
            out.newDatatype |= kDatatypeXattr;
        }
        out.newValue += body;
        out.deleteDocument = deleted_;
    }

  private:
    std::string bodyText() {
        switch (body_) {
            case Body::Tree:
                return dumpJson(tree_);
            case Body::Raw:
                return std::move(rawBody_);
            case Body::Absent:
                return {};
        }
        return {};
    }

    // The body as a tree; an absent body starts as the empty container the
    // spec needs (an array for array pushes on the root or a leading index).
    Status bodyTree(const Spec& spec, const ParsedPath& path, Json*& out) {
        if (body_ == Body::Absent) {
            const bool array = (path.components.empty() && isArrayOp(spec.opcode)) ||
                               (!path.components.empty() && path.components[0].isIndex);
            tree_ = array ? Json::array() : Json::object();
            body_ = Body::Tree;
        } else if (body_ == Body::Raw) {
            if (Status s = parseStored(rawBody_, tree_); s != Status::Success) {
                return s;
            }
            rawBody_.clear();
            body_ = Body::Tree;
        }
        bodyJson_ = true;
        out = &tree_;
        return Status::Success;
    }

    Status runBody(const Spec& spec, std::string& result) {
        const ParsedPath path = parsePath(spec.path);
        if (path.status != Status::Success) {
            return path.status;
        }
        Json* root = nullptr;
        if (Status s = bodyTree(spec, path, root); s != Status::Success) {
            return s;
        }
        MutationArgs args{spec.opcode, path.components, spec.value,
                          plan_.mkdirP || (spec.flags & path_flag::MkdirP) != 0, 0};
        return mutateOp(*root, args, result);
    }

    XattrEntry* findXattr(std::string_view key) {
        auto it = std::find_if(xattrs_.begin(), xattrs_.end(),
                               [&](const XattrEntry& e) { return e.key == key; });
        return it == xattrs_.end() ? nullptr : &*it;
    }

    // The parsed value of a stored xattr; DocNotJson if its text is not JSON.
    Status xattrTree(XattrEntry& e) {
        if (!e.tree) {
            Json tree;
            if (Status s = parseStored(e.raw, tree); s != Status::Success) {
                return s;
            }
            e.tree = std::move(tree);
            e.raw.clear();
        }
        return Status::Success;
    }

    Status runXattr(const Spec& spec, std::string& result) {
        const ParsedPath path = parseXattrPath(spec.path);
        if (path.status != Status::Success) {
            return path.status;
        }
        const std::string& key = path.components.front().key;
        std::string value = spec.value;
        const bool macro = (spec.flags & path_flag::ExpandMacros) != 0;
        if (macro) {
            if (Status s = macroValueText(spec.value, meta_, originalBody_, value);
                s != Status::Success) {
                return s;
            }
        }
        // The xattr runs inside a one-key object, so that the path's first
        // component (the key) creates, replaces or deletes the xattr itself.
        Json wrapper = Json::object();
        XattrEntry* entry = findXattr(key);
        if (entry != nullptr) {
            if (Status s = xattrTree(*entry); s != Status::Success) {
                return s;
            }
            wrapper[key] = std::move(*entry->tree);
        }
        MutationArgs args{spec.opcode, path.components, value,
                          plan_.mkdirP || (spec.flags & path_flag::MkdirP) != 0, -1};
        if (Status s = mutateOp(wrapper, args, result); s != Status::Success) {
            return s;  // the working copy is dropped with the failure
        }
        storeXattr(key, wrapper, macro);
        return Status::Success;
    }

    void storeXattr(const std::string& key, Json& wrapper, bool macro) {
        XattrEntry* entry = findXattr(key);
        auto it = wrapper.find(key);
        if (it == wrapper.end()) {
            std::erase_if(xattrs_, [&](const XattrEntry& e) { return e.key == key; });
            return;
        }
        if (entry == nullptr) {
            xattrs_.push_back({key, {}, std::nullopt, false});
            entry = &xattrs_.back();
        }
        entry->tree = std::move(*it);
        entry->macros = entry->macros || macro;
    }

    Status replaceBodyWithXattr(const Spec& spec) {
        const ParsedPath path = parseXattrPath(spec.path);
        if (path.status != Status::Success) {
            return path.status;
        }
        XattrEntry* entry = findXattr(path.components.front().key);
        if (entry == nullptr) {
            return Status::PathNotFound;
        }
        if (Status s = xattrTree(*entry); s != Status::Success) {
            return s;
        }
        const Json* node = nullptr;
        const std::span<const PathComponent> rest(path.components.begin() + 1,
                                                  path.components.end());
        if (Status s = findNode(*entry->tree, rest, node); s != Status::Success) {
            return s;
        }
        if ((spec.flags & path_flag::BinaryValue) == 0) {
            tree_ = *node;
            body_ = Body::Tree;
            bodyJson_ = true;
            return Status::Success;
        }
        auto bytes = node->is_string() ? decodeBinaryValue(node->get<std::string>()) : std::nullopt;
        if (!bytes) {
            return Status::FieldNotBinaryValue;
        }
        return wholeSet(*bytes);  // JSON again if the bytes are
    }

    Status wholeSet(const std::string& value) {
        rawBody_ = value;
        body_ = Body::Raw;
        bodyJson_ = parseJson(value, kMaxDepth).error == JsonError::None;
        return Status::Success;
    }

    // Deletes the body and the user xattrs; system xattrs stay with the
    // tombstone.
    Status wholeDelete() {
        std::erase_if(xattrs_, [](const XattrEntry& e) { return !isSystemXattr(e.key); });
        body_ = Body::Absent;
        rawBody_.clear();
        bodyJson_ = false;
        deleted_ = true;
        return Status::Success;
    }

    const DocumentMeta& meta_;
    const Plan& plan_;
    std::string_view originalBody_;
    std::vector<XattrEntry> xattrs_;
    Body body_ = Body::Absent;
    std::string rawBody_;
    Json tree_;
    bool bodyJson_ = false;
    bool deleted_ = false;
};

// The specs with each BinaryValue mutation's bytes as the JSON string an
// xattr keeps (binary_value.h); empty when no spec has the flag.
std::vector<Spec> withBinaryValuesEncoded(std::span<const Spec> specs) {
    const auto binary = [](const Spec& spec) {
        return (spec.flags & path_flag::BinaryValue) != 0 &&
               spec.opcode != Opcode::ReplaceBodyWithXattr;
    };
    if (std::none_of(specs.begin(), specs.end(), binary)) {
        return {};
    }
    std::vector<Spec> encoded(specs.begin(), specs.end());
    for (Spec& spec : encoded) {
        if (binary(spec)) {
            spec.value = encodeBinaryValue(spec.value);
        }
    }
    return encoded;
}

// Settles creation, tombstones and revival; Success or the document-level
// status to answer with.
Status makePlan(bool exists, const DocumentMeta& meta, std::uint8_t docFlags,
                std::span<const Spec> specs, Plan& plan) {
    using namespace doc_flag;
    const bool accessDeleted = (docFlags & AccessDeleted) != 0;
    const bool revive = (docFlags & ReviveDocument) != 0;
    const bool tombstone = exists && meta.deleted;
    if (tombstone && (docFlags & Add) && (docFlags & CreateAsDeleted)) {
        return Status::KeyExists;
    }
    // A tombstone that may not be accessed is no document at all.
    const bool usable = exists && (!tombstone || (accessDeleted && !(docFlags & Add)));
    if (revive && !tombstone) {
        return Status::CanOnlyReviveDeletedDocuments;
    }
    if (!usable && !(docFlags & (Mkdoc | Add))) {
        return Status::KeyNotFound;
    }
    if (usable && !tombstone && (docFlags & Add)) {
        return Status::KeyExists;
    }
    plan.creating = !usable;
    plan.tombstone = usable && tombstone;
    plan.staysDeleted =
        (plan.tombstone && !revive) || (plan.creating && (docFlags & CreateAsDeleted));
    plan.mkdirP = (docFlags & (Mkdoc | Add)) != 0;
    const bool touchesBody = std::any_of(specs.begin(), specs.end(), [](const Spec& s) {
        return !s.isXattr() && s.opcode != Opcode::WholeDelete;
    });
    if (plan.staysDeleted && touchesBody) {
        return Status::DeletedDocumentCantHaveValue;
    }
    return Status::Success;
}

}  // namespace

MutationOutcome mutate(std::optional<std::string_view> stored, const DocumentMeta& meta,
                       std::span<const Spec> specs, std::uint8_t docFlags) {
    MutationOutcome out;
    out.status = validateRequest(specs, RequestKind::Mutation, docFlags);
    Plan plan;
    std::vector<Spec> binaryEncoded;
    if (out.status == Status::Success) {
        binaryEncoded = withBinaryValuesEncoded(specs);
        if (!binaryEncoded.empty()) {
            specs = binaryEncoded;
        }
        out.status = makePlan(stored.has_value(), meta, docFlags, specs, plan);
    }
    if (out.status != Status::Success) {
        return out;
    }
    std::optional<SplitValue> split = SplitValue{};
    if (!plan.creating) {
        split = splitValue(*stored, meta.datatype);
        if (!split) {
            out.status = Status::Internal;
            return out;
        }
        if (plan.tombstone) {
            split->body = {};
        }
    }
    MutationState state(meta, plan, std::move(*split));
    for (std::size_t i = 0; i < specs.size(); ++i) {
        std::string result;
        const Status s = state.run(specs[i], result);
        if (s != Status::Success) {
            out.status =
                plan.tombstone ? Status::MultiPathFailureDeleted : Status::MultiPathFailure;
            out.failedIndex = i;
            out.failedStatus = s;
            out.results.clear();
            return out;
        }
        if (!result.empty()) {
            out.results.emplace_back(static_cast<std::uint8_t>(i), std::move(result));
        }
    }
    state.finish(out);
    out.createDocument = plan.creating;
    out.storeAsDeleted = plan.staysDeleted || out.deleteDocument;
    out.status = plan.staysDeleted ? Status::SuccessDeleted : Status::Success;
    return out;
}

}  // namespace kvexec::subdoc
