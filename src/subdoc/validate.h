// subdoc/validate.h: the request-level rules of a sub-document request
// (one spec or many) that hold before any document is read: spec count,
// which opcodes and flags go together, xattr specs first, and the doc
// flags' combinations. The codec applies them to decoded requests;
// lookup() and mutate() apply them again so that hand-built specs get the
// same answers.
//
// Pure functions. Safe from any thread.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "subdoc/spec.h"
#include "subdoc/status.h"

namespace kvexec::subdoc {

enum class RequestKind { Lookup, Mutation };

// Success, or the status the whole request is answered with:
//   InvalidCombo       no specs, more than 16, an unknown opcode, a lookup
//                      opcode in a mutation (or the reverse), a body spec
//                      after a whole-document delete
//   InvalidXattrOrder  an xattr spec after a body spec
//   InvalidArguments   flags the opcode does not take, a missing or
//                      unexpected value or path, bad doc-flag combinations
//   XattrInvalid       an xattr key that breaks the naming rules, or an
//                      xattr value with a binary value's marker
//                      (binary_value.h) that does not decode
//   XattrInvalidFlagCombo  ExpandMacros or BinaryValue without Xattr, or both
//   XattrCantModifyVattr   a mutation of a `$` key
//   XattrUnknownMacro  ExpandMacros with a value that is no known macro
Status validateRequest(std::span<const Spec> specs, RequestKind kind, std::uint8_t docFlags);

// Whether `value` (JSON text, quotes included) names a macro this library
// expands: "${Mutation.CAS}", "${Mutation.seqno}",
// "${Mutation.value_crc32c}", "${$document}" or "${$document.<field>}".
bool isKnownMacro(std::string_view value);

}  // namespace kvexec::subdoc
