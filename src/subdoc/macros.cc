#include "subdoc/macros.h"

#include <cstdio>

#include "subdoc/virtual_xattr.h"

namespace kvexec::subdoc {

namespace {

// Control characters: JSON text from a client can only carry them escaped,
// so a stored string equal to these is all but impossible to meet by chance.
constexpr std::string_view kCasPlaceholder = "\x01kvexec:Mutation.CAS\x01";
constexpr std::string_view kSeqnoPlaceholder = "\x01kvexec:Mutation.seqno\x01";
constexpr std::string_view kCrcPlaceholder = "\x01kvexec:Mutation.value_crc32c\x01";

constexpr std::size_t kHex64Length = 18;  // "0x" + 16 digits

// The token of `kind` for attempt `n`: 18 characters, like the value.
std::string token(MacroKind kind, unsigned long long n) {
    char buffer[kHex64Length + 1];
    std::snprintf(buffer, sizeof buffer, "~kvx%c%013llu", kind == MacroKind::Cas ? 'C' : 'S', n);
    return buffer;
}

// Every string node of `tree` equal to `placeholder`.
std::vector<Json*> findStrings(Json& tree, std::string_view placeholder) {
    std::vector<Json*> found;
    std::vector<Json*> pending{&tree};
    while (!pending.empty()) {
        Json* node = pending.back();
        pending.pop_back();
        if (node->is_string() && node->get_ref<const std::string&>() == placeholder) {
            found.push_back(node);
        } else if (node->is_structured()) {
            for (auto& child : *node) {
                pending.push_back(&child);
            }
        }
    }
    return found;
}

void appendSlots(const std::string& text, const std::string& tok, MacroKind kind,
                 std::vector<MacroSlot>& slots) {
    const std::string quoted = '"' + tok + '"';
    for (std::size_t at = text.find(quoted); at != std::string::npos;
         at = text.find(quoted, at + quoted.size())) {
        slots.push_back({at + 1, kind});
    }
}

}  // namespace

Status macroValueText(std::string_view macro, const DocumentMeta& meta,
                      std::string_view originalBody, std::string& text) {
    if (macro == R"("${Mutation.CAS}")") {
        text = dumpJson(Json(std::string(kCasPlaceholder)));
    } else if (macro == R"("${Mutation.seqno}")") {
        text = dumpJson(Json(std::string(kSeqnoPlaceholder)));
    } else if (macro == R"("${Mutation.value_crc32c}")") {
        text = dumpJson(Json(std::string(kCrcPlaceholder)));
    } else if (macro == R"("${$document}")") {
        text = dumpJson(documentVattr(meta, originalBody));
    } else if (macro.starts_with(R"("${$document.)") && macro.ends_with(R"(}")")) {
        const std::string field(macro.substr(13, macro.size() - 15));
        const Json doc = documentVattr(meta, originalBody);
        const auto it = doc.find(field);
        if (it == doc.end()) {
            return Status::XattrUnknownVattrMacro;
        }
        text = dumpJson(*it);
    } else {
        return Status::XattrUnknownMacro;
    }
    return Status::Success;
}

std::string dumpWithMacros(Json& tree, const std::string& crc32cHex,
                           std::vector<MacroSlot>& slots) {
    for (Json* node : findStrings(tree, kCrcPlaceholder)) {
        *node = crc32cHex;
    }
    const auto cas = findStrings(tree, kCasPlaceholder);
    const auto seqno = findStrings(tree, kSeqnoPlaceholder);
    if (cas.empty() && seqno.empty()) {
        return dumpJson(tree);
    }
    // Pick tokens the text does not already contain, so that every
    // occurrence after the swap is one of ours.
    const std::string before = dumpJson(tree);
    unsigned long long n = 0;
    while (before.find(token(MacroKind::Cas, n)) != std::string::npos ||
           before.find(token(MacroKind::Seqno, n)) != std::string::npos) {
        ++n;
    }
    for (Json* node : cas) {
        *node = token(MacroKind::Cas, n);
    }
    for (Json* node : seqno) {
        *node = token(MacroKind::Seqno, n);
    }
    std::string text = dumpJson(tree);
    appendSlots(text, token(MacroKind::Cas, n), MacroKind::Cas, slots);
    appendSlots(text, token(MacroKind::Seqno, n), MacroKind::Seqno, slots);
    return text;
}

void expandMacros(std::string& newValue, std::span<const MacroSlot> slots, std::uint64_t cas,
                  std::uint64_t seqno) {
    for (const MacroSlot& slot : slots) {
        // Couchbase writes the CAS's bytes in network order as if they were
        // a host (little-endian) number: the hex reads the CAS byte-swapped,
        // and the SDKs' transactions decode it so. The seqno reads as is.
        const std::string hex = hex64(slot.kind == MacroKind::Cas ? __builtin_bswap64(cas) : seqno);
        if (slot.offset <= newValue.size() && newValue.size() - slot.offset >= hex.size()) {
            newValue.replace(slot.offset, hex.size(), hex);
        }
    }
}

}  // namespace kvexec::subdoc
