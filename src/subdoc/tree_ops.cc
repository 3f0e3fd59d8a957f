#include "subdoc/tree_ops.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>

namespace kvexec::subdoc {

namespace {

// The array position `index` names (-1: last); nullopt when out of range.
std::optional<std::size_t> arrayPosition(const Json& array, std::int64_t index) {
    if (index == -1) {
        return array.empty() ? std::nullopt : std::optional<std::size_t>(array.size() - 1);
    }
    if (index < 0 || static_cast<std::uint64_t>(index) >= array.size()) {
        return std::nullopt;
    }
    return static_cast<std::size_t>(index);
}

// One step down from `node`; creates a missing object member when `create`.
template <typename J>
Status step(J*& node, const PathComponent& c, bool create) {
    if (c.isIndex) {
        if (!node->is_array()) {
            return Status::PathMismatch;
        }
        const auto at = arrayPosition(*node, c.index);
        if (!at) {
            return Status::PathNotFound;
        }
        node = &(*node)[*at];
        return Status::Success;
    }
    if (!node->is_object()) {
        return Status::PathMismatch;
    }
    auto it = node->find(c.key);
    if (it == node->end()) {
        if constexpr (!std::is_const_v<J>) {
            if (create) {
                node = &((*node)[c.key] = Json::object());
                return Status::Success;
            }
        }
        return Status::PathNotFound;
    }
    node = &*it;
    return Status::Success;
}

// Walks to the parent of the path's last component. With mkdirP, missing
// objects on the way are created (never arrays: a created object followed
// by an index component is PathNotFound, as the docs say).
Status walkToParent(Json& root, std::span<const PathComponent> path, bool mkdirP, Json*& parent) {
    parent = &root;
    for (std::size_t i = 0; i + 1 < path.size(); ++i) {
        const bool create = mkdirP && !path[i + 1].isIndex;
        if (Status s = step(parent, path[i], create); s != Status::Success) {
            return s;
        }
    }
    return Status::Success;
}

// Whether a value of depth `valueDepth` fits below a container reached by
// `parentLevels` components.
bool fitsDepth(std::size_t parentLevels, int bias, std::size_t valueDepth) {
    const long long depth =
        static_cast<long long>(parentLevels) + 1 + bias + static_cast<long long>(valueDepth);
    return depth <= static_cast<long long>(kMaxDepth);
}

Status parseOne(std::string_view text, Json& out) {
    ParsedJson parsed = parseJson(text, kMaxDepth);
    if (parsed.error == JsonError::TooDeep) {
        return Status::ValueTooDeep;
    }
    if (parsed.error != JsonError::None) {
        return Status::ValueCantInsert;
    }
    out = std::move(parsed.value);
    return Status::Success;
}

Status parseList(std::string_view text, Json& out) {
    ParsedJson parsed = parseJsonList(text, kMaxDepth);
    if (parsed.error == JsonError::TooDeep) {
        return Status::ValueTooDeep;
    }
    if (parsed.error != JsonError::None) {
        return Status::ValueCantInsert;
    }
    out = std::move(parsed.value);
    return Status::Success;
}

Status dictSet(Json& root, const MutationArgs& a) {
    if (a.path.empty() || a.path.back().isIndex) {
        return Status::PathInvalid;
    }
    Json value;
    if (Status s = parseOne(a.value, value); s != Status::Success) {
        return s;
    }
    Json* parent = nullptr;
    if (Status s = walkToParent(root, a.path, a.mkdirP, parent); s != Status::Success) {
        return s;
    }
    if (!parent->is_object()) {
        return Status::PathMismatch;
    }
    if (!fitsDepth(a.path.size() - 1, a.depthBias, depthOf(value))) {
        return Status::ValueTooDeep;
    }
    const std::string& key = a.path.back().key;
    if (a.opcode == Opcode::DictAdd && parent->contains(key)) {
        return Status::PathExists;
    }
    (*parent)[key] = std::move(value);
    return Status::Success;
}

Status replace(Json& root, const MutationArgs& a) {
    if (a.path.empty()) {
        return Status::PathInvalid;
    }
    Json value;
    if (Status s = parseOne(a.value, value); s != Status::Success) {
        return s;
    }
    Json* node = &root;
    for (const auto& c : a.path) {
        if (Status s = step(node, c, false); s != Status::Success) {
            return s;
        }
    }
    if (!fitsDepth(a.path.size() - 1, a.depthBias, depthOf(value))) {
        return Status::ValueTooDeep;
    }
    *node = std::move(value);
    return Status::Success;
}

Status remove(Json& root, const MutationArgs& a) {
    if (a.path.empty()) {
        return Status::PathInvalid;
    }
    Json* parent = nullptr;
    if (Status s = walkToParent(root, a.path, false, parent); s != Status::Success) {
        return s;
    }
    const PathComponent& last = a.path.back();
    if (last.isIndex) {
        if (!parent->is_array()) {
            return Status::PathMismatch;
        }
        const auto at = arrayPosition(*parent, last.index);
        if (!at) {
            return Status::PathNotFound;
        }
        parent->erase(*at);
        return Status::Success;
    }
    if (!parent->is_object()) {
        return Status::PathMismatch;
    }
    return parent->erase(last.key) == 1 ? Status::Success : Status::PathNotFound;
}

// The array a push or add-unique targets; with mkdirP a missing array at a
// key is created empty.
Status targetArray(Json& root, const MutationArgs& a, Json*& array) {
    if (a.path.empty()) {
        array = &root;
    } else {
        Json* parent = nullptr;
        if (Status s = walkToParent(root, a.path, a.mkdirP, parent); s != Status::Success) {
            return s;
        }
        array = parent;
        const PathComponent& last = a.path.back();
        Status s = step(array, last, false);
        if (s == Status::PathNotFound && a.mkdirP && !last.isIndex) {
            array = &((*parent)[last.key] = Json::array());
            s = Status::Success;
        }
        if (s != Status::Success) {
            return s;
        }
    }
    return array->is_array() ? Status::Success : Status::PathMismatch;
}

Status push(Json& root, const MutationArgs& a) {
    Json values;
    if (Status s = parseList(a.value, values); s != Status::Success) {
        return s;
    }
    Json* array = nullptr;
    if (Status s = targetArray(root, a, array); s != Status::Success) {
        return s;
    }
    if (!fitsDepth(a.path.size(), a.depthBias, depthOf(values) - 1)) {
        return Status::ValueTooDeep;
    }
    const auto at = a.opcode == Opcode::ArrayPushFirst ? array->begin() : array->end();
    array->insert(at, values.begin(), values.end());
    return Status::Success;
}

Status insert(Json& root, const MutationArgs& a) {
    if (a.path.empty() || !a.path.back().isIndex || a.path.back().index < 0) {
        return Status::PathInvalid;
    }
    Json values;
    if (Status s = parseList(a.value, values); s != Status::Success) {
        return s;
    }
    Json* parent = nullptr;
    if (Status s = walkToParent(root, a.path, a.mkdirP, parent); s != Status::Success) {
        return s;
    }
    if (!parent->is_array()) {
        return Status::PathMismatch;
    }
    const auto index = static_cast<std::uint64_t>(a.path.back().index);
    if (index > parent->size()) {
        return Status::PathNotFound;
    }
    if (!fitsDepth(a.path.size() - 1, a.depthBias, depthOf(values) - 1)) {
        return Status::ValueTooDeep;
    }
    parent->insert(parent->begin() + static_cast<std::ptrdiff_t>(index), values.begin(),
                   values.end());
    return Status::Success;
}

Status addUnique(Json& root, const MutationArgs& a) {
    Json value;
    if (Status s = parseOne(a.value, value); s != Status::Success) {
        return s;
    }
    if (value.is_structured()) {
        return Status::ValueCantInsert;
    }
    Json* array = nullptr;
    if (Status s = targetArray(root, a, array); s != Status::Success) {
        return s;
    }
    // Uniqueness is by text: 1 and 1.0 and "1" all differ.
    const std::string text = dumpJson(value);
    for (const auto& element : *array) {
        if (element.is_structured()) {
            return Status::PathMismatch;
        }
        if (dumpJson(element) == text) {
            return Status::PathExists;
        }
    }
    array->push_back(std::move(value));
    return Status::Success;
}

// The delta of a counter: a non-zero integer in int64 range, nothing else.
std::optional<std::int64_t> parseDelta(std::string_view text) {
    std::int64_t delta = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), delta);
    if (ec != std::errc() || end != text.data() + text.size() || delta == 0) {
        return std::nullopt;
    }
    return delta;
}

// The counter's current value: PathMismatch if not an integer, NumRange if
// an integer outside int64.
Status currentCount(const Json& node, std::int64_t& out) {
    if (node.is_number_unsigned()) {
        const auto v = node.get<std::uint64_t>();
        if (v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
            return Status::NumRange;
        }
        out = static_cast<std::int64_t>(v);
        return Status::Success;
    }
    if (node.is_number_integer()) {
        out = node.get<std::int64_t>();
        return Status::Success;
    }
    if (node.is_number_float()) {
        // Integers too long for 64 bits arrive as doubles.
        const double d = node.get<double>();
        const bool integral = std::isfinite(d) && d == std::floor(d);
        return integral && std::fabs(d) >= 9.2e18 ? Status::NumRange : Status::PathMismatch;
    }
    return Status::PathMismatch;
}

Status counter(Json& root, const MutationArgs& a, std::string& result) {
    if (a.path.empty()) {
        return Status::PathInvalid;
    }
    const auto delta = parseDelta(a.value);
    if (!delta) {
        return Status::DeltaInvalid;
    }
    Json* parent = nullptr;
    if (Status s = walkToParent(root, a.path, a.mkdirP, parent); s != Status::Success) {
        return s;
    }
    Json* node = parent;
    const PathComponent& last = a.path.back();
    Status s = step(node, last, false);
    if (s == Status::PathNotFound && !last.isIndex && parent->is_object()) {
        node = &((*parent)[last.key] = Json(0));
        s = Status::Success;
    }
    if (s != Status::Success) {
        return s;
    }
    std::int64_t current = 0;
    if (Status c = currentCount(*node, current); c != Status::Success) {
        return c;
    }
    std::int64_t updated = 0;
    if (__builtin_add_overflow(current, *delta, &updated)) {
        return Status::ValueCantInsert;  // what Couchbase answers on overflow
    }
    *node = updated;
    result = std::to_string(updated);
    return Status::Success;
}

}  // namespace

Status findNode(const Json& root, std::span<const PathComponent> path, const Json*& out) {
    out = &root;
    for (const auto& c : path) {
        if (Status s = step(out, c, false); s != Status::Success) {
            return s;
        }
    }
    return Status::Success;
}

Status lookupOp(const Json& root, Opcode opcode, std::span<const PathComponent> path,
                std::string& result) {
    const Json* node = nullptr;
    if (Status s = findNode(root, path, node); s != Status::Success) {
        return s;
    }
    switch (opcode) {
        case Opcode::Get:
            result = dumpJson(*node);
            return Status::Success;
        case Opcode::Exists:
            return Status::Success;
        case Opcode::GetCount:
            if (!node->is_structured()) {
                return Status::PathMismatch;
            }
            result = std::to_string(node->size());
            return Status::Success;
        default:
            return Status::InvalidCombo;
    }
}

Status mutateOp(Json& root, const MutationArgs& args, std::string& result) {
    switch (args.opcode) {
        case Opcode::DictAdd:
        case Opcode::DictUpsert:
            return dictSet(root, args);
        case Opcode::Replace:
            return replace(root, args);
        case Opcode::Delete:
            return remove(root, args);
        case Opcode::ArrayPushLast:
        case Opcode::ArrayPushFirst:
            return push(root, args);
        case Opcode::ArrayInsert:
            return insert(root, args);
        case Opcode::ArrayAddUnique:
            return addUnique(root, args);
        case Opcode::Counter:
            return counter(root, args, result);
        default:
            return Status::InvalidCombo;
    }
}

}  // namespace kvexec::subdoc
