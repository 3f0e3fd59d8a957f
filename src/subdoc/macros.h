// subdoc/macros.h: the xattr macros of a mutation (the ExpandMacros path
// flag). ${Mutation.CAS} and ${Mutation.seqno} depend on the store that
// has not happened yet: the mutation writes a placeholder string into the
// tree, and when the value is serialised each placeholder becomes a token
// of the final length that occurs nowhere else in the text, whose offsets
// become MacroSlots for expandMacros(). ${Mutation.value_crc32c} is known
// once the new body is, and ${$document...} before the mutation starts, so
// both are written directly.
//
// Pure functions. Safe from any thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "subdoc/document_meta.h"
#include "subdoc/executor.h"
#include "subdoc/json_text.h"
#include "subdoc/status.h"

namespace kvexec::subdoc {

// The JSON text a macro spec value stands for while the mutation runs:
// a placeholder string for the ${Mutation...} macros, the metadata itself
// for ${$document...} (XattrUnknownVattrMacro for an unknown field).
Status macroValueText(std::string_view macro, const DocumentMeta& meta,
                      std::string_view originalBody, std::string& text);

// Serialises `tree`, replacing its placeholders: value_crc32c by
// `crc32cHex`, CAS and seqno by unique tokens whose offsets in the
// returned text are appended to `slots`. `tree` is changed.
std::string dumpWithMacros(Json& tree, const std::string& crc32cHex, std::vector<MacroSlot>& slots);

}  // namespace kvexec::subdoc
