// document_body.h: what a plain read (binary get/gat/get-locked, text get,
// gat, mg) returns of a document: its body, without the extended
// attributes kept at the front of its value (kvexec/engine/xattrs.h);
// clients read those through sub-document lookups only.
//
// Thread safety: a pure function.
#pragma once

#include <string_view>

#include "kvexec/engine/item.h"
#include "kvexec/engine/xattrs.h"

namespace kvexec::server {

inline std::string_view documentBody(const engine::Item& item) {
    return engine::documentBody(item.value, item.meta.datatype);
}

}  // namespace kvexec::server
