// text_errors.h: the SERVER_ERROR line a text client (classic or meta
// commands) gets for an engine failure, memcached's words where it has them.
//
// Thread safety: a pure function.
#pragma once

#include <string_view>

#include "kvexec/engine/status.h"

namespace kvexec::server {

std::string_view textServerError(engine::Status status);

}  // namespace kvexec::server
