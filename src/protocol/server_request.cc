// protocol/server_request.cc: server-initiated requests.
#include "protocol/server_request.h"

#include "protocol/binary_response.h"
#include "protocol/binary_types.h"

namespace kvexec::protocol {

void appendClustermapNotification(std::string& out, std::string_view bucket,
                                  std::int64_t revisionEpoch, std::uint64_t revision,
                                  std::string_view config, bool jsonDatatype) {
    constexpr std::size_t kExtras = 16;
    out.reserve(out.size() + kHeaderSize + kExtras + bucket.size() + config.size());
    out.push_back(static_cast<char>(Magic::ServerRequest));
    out.push_back(static_cast<char>(ServerOpcode::ClustermapChangeNotification));
    appendBe16(out, static_cast<std::uint16_t>(bucket.size()));
    out.push_back(static_cast<char>(kExtras));
    out.push_back(static_cast<char>(jsonDatatype && !config.empty() ? kDatatypeJson : 0));
    appendBe16(out, 0);  // reserved
    appendBe32(out, static_cast<std::uint32_t>(kExtras + bucket.size() + config.size()));
    appendBe32(out, 0);  // opaque
    appendBe64(out, 0);  // cas
    appendBe64(out, static_cast<std::uint64_t>(revisionEpoch));
    appendBe64(out, revision);
    out.append(bucket);
    out.append(config);
}

}  // namespace kvexec::protocol
