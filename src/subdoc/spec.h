// subdoc/spec.h: one sub-document operation (opcode, path flags, path,
// value) and what each opcode accepts (docs/SubDocument.md, "Command
// Listings"; opcode values from docs/BinaryProtocol.md).
//
// Plain values and pure functions. Safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace kvexec::subdoc {

enum class Opcode : std::uint8_t {
    // Whole-document operations, valid only inside multi-path requests.
    WholeGet = 0x00,     // multi-lookup: the whole body
    WholeSet = 0x01,     // multi-mutation: replace the whole body
    WholeDelete = 0x04,  // multi-mutation: delete the body and the user xattrs

    Get = 0xc5,
    Exists = 0xc6,
    DictAdd = 0xc7,
    DictUpsert = 0xc8,
    Delete = 0xc9,
    Replace = 0xca,
    ArrayPushLast = 0xcb,
    ArrayPushFirst = 0xcc,
    ArrayInsert = 0xcd,
    ArrayAddUnique = 0xce,
    Counter = 0xcf,
    MultiLookup = 0xd0,
    MultiMutation = 0xd1,
    GetCount = 0xd2,
    ReplaceBodyWithXattr = 0xd3,
};

// Per-path flags (the flags byte of a spec or of the single-path extras).
namespace path_flag {
inline constexpr std::uint8_t MkdirP = 0x01;        // create missing intermediate objects
inline constexpr std::uint8_t Xattr = 0x04;         // the path names an extended attribute
inline constexpr std::uint8_t ExpandMacros = 0x10;  // the value is a macro (xattrs only)
inline constexpr std::uint8_t BinaryValue = 0x20;   // bytes, kept as base64 (binary_value.h)
}  // namespace path_flag

// Per-document flags (the doc-flags byte of the extras).
namespace doc_flag {
inline constexpr std::uint8_t Mkdoc = 0x01;            // create the document (upsert)
inline constexpr std::uint8_t Add = 0x02;              // create; fail if it exists
inline constexpr std::uint8_t AccessDeleted = 0x04;    // operate on a tombstone's xattrs
inline constexpr std::uint8_t CreateAsDeleted = 0x08;  // with Mkdoc/Add: create as a tombstone
inline constexpr std::uint8_t ReviveDocument = 0x10;   // make a tombstone alive again
inline constexpr std::uint8_t ReplicaRead = 0x20;      // lookups on a replica (not ours to act on)
}  // namespace doc_flag

// Limits from docs/SubDocument.md "Limits".
inline constexpr std::size_t kMaxPathComponents = 32;
inline constexpr std::size_t kMaxPathLength = 1024;
inline constexpr std::size_t kMaxSpecs = 16;
inline constexpr std::size_t kMaxDepth = 32;  // nesting levels of a document or value
inline constexpr std::size_t kMaxXattrKeyLength = 15;

struct Spec {
    Opcode opcode = Opcode::Get;
    std::uint8_t flags = 0;  // path_flag bits
    std::string path;
    std::string value;  // empty for lookups and deletes

    bool isXattr() const { return (flags & path_flag::Xattr) != 0; }
};

// What an opcode accepts; the codec validates requests against it.
struct OpcodeTraits {
    bool mutation = false;
    bool needsValue = false;
    bool allowsEmptyPath = false;
    bool wholeDoc = false;        // path must be empty; multi-path only
    bool singlePath = false;      // valid as its own request opcode
    std::uint8_t validFlags = 0;  // path_flag bits allowed
};

// The traits of a spec opcode; nullopt for bytes that are not one
// (including MultiLookup/MultiMutation, which are containers).
std::optional<OpcodeTraits> traitsOf(std::uint8_t opcode);

}  // namespace kvexec::subdoc
