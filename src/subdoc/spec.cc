#include "subdoc/spec.h"

namespace kvexec::subdoc {

namespace {

using namespace path_flag;

constexpr OpcodeTraits lookup(std::uint8_t flags, bool wholeDoc = false) {
    return {false, false, wholeDoc, wholeDoc, !wholeDoc, flags};
}

constexpr OpcodeTraits mutation(bool value, bool emptyPath, std::uint8_t flags) {
    return {true, value, emptyPath, false, true, flags};
}

constexpr OpcodeTraits wholeDocMutation(bool value) {
    return {true, value, true, true, false, 0};
}

}  // namespace

std::optional<OpcodeTraits> traitsOf(std::uint8_t opcode) {
    switch (static_cast<Opcode>(opcode)) {
        case Opcode::WholeGet:
            return lookup(0, true);
        case Opcode::WholeSet:
            return wholeDocMutation(true);
        case Opcode::WholeDelete:
            return wholeDocMutation(false);
        case Opcode::Get:
            return lookup(Xattr | BinaryValue);
        case Opcode::Exists:
            return lookup(Xattr);
        case Opcode::GetCount:
            return lookup(Xattr);
        case Opcode::DictAdd:
        case Opcode::DictUpsert:
            return mutation(true, false, MkdirP | Xattr | ExpandMacros | BinaryValue);
        case Opcode::Delete:
            return mutation(false, false, Xattr);
        case Opcode::Replace:
            return mutation(true, false, Xattr | ExpandMacros | BinaryValue);
        case Opcode::ArrayPushLast:
        case Opcode::ArrayPushFirst:
            return mutation(true, true, MkdirP | Xattr | ExpandMacros);
        case Opcode::ArrayInsert:
            return mutation(true, false, Xattr | ExpandMacros);
        case Opcode::ArrayAddUnique:
            return mutation(true, true, MkdirP | Xattr);
        case Opcode::Counter:
            return mutation(true, false, MkdirP | Xattr);
        case Opcode::ReplaceBodyWithXattr:
            return mutation(false, false, Xattr | BinaryValue);
        case Opcode::MultiLookup:
        case Opcode::MultiMutation:
            return std::nullopt;
    }
    return std::nullopt;
}

}  // namespace kvexec::subdoc
