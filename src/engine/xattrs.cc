// xattrs.cc: the blob at the front of a value with the XATTR datatype bit.
#include "kvexec/engine/xattrs.h"

#include <algorithm>
#include <cstddef>

namespace kvexec::engine {

std::string_view xattrBlob(std::string_view value, std::uint8_t datatype) {
    if ((datatype & kDatatypeXattr) == 0 || value.size() < 4) {
        return {};
    }
    std::size_t length = 0;
    for (std::size_t i = 0; i < 4; ++i) {
        length = (length << 8) | static_cast<unsigned char>(value[i]);
    }
    return value.substr(0, std::min(value.size(), 4 + length));
}

std::string_view documentBody(std::string_view value, std::uint8_t datatype) {
    return value.substr(xattrBlob(value, datatype).size());
}

}  // namespace kvexec::engine
