// protocol/server_request.h: encodes the requests a server sends on its
// own (magic 0x82): today the cluster-map change notification, pushed to a
// connection that asked for it in HELLO (feature 0x0d) whenever the map
// changes, so that a client moves to a promoted replica without waiting
// for its next config poll or a NOT_MY_VBUCKET.
//
// Pure functions appending to a caller-owned std::string. Safe from any
// thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kvexec::protocol {

// Appends a ClustermapChangeNotification: key the bucket's name, extras
// the revision epoch and revision (two signed 64-bit integers, the
// 16-byte form), value the full config (JSON; the datatype says so when
// `jsonDatatype`, i.e. the client negotiated HELLO JSON). Opaque 0: the
// client owes no reply; kvexec-server drops one unread.
void appendClustermapNotification(std::string& out, std::string_view bucket,
                                  std::int64_t revisionEpoch, std::uint64_t revision,
                                  std::string_view config, bool jsonDatatype);

}  // namespace kvexec::protocol
