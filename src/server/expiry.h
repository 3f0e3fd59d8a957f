// expiry.h: memcached's expiry rule: a value up to 30 days is relative to
// now, a larger one is an absolute Unix time, 0 is "never", and a negative
// one (text protocol) is "already expired". The engine wants absolute
// seconds since the epoch.
//
// Pure function of the system clock; safe from any thread.
#pragma once

#include <chrono>
#include <cstdint>

namespace kvexec::server {

// Seconds since the Unix epoch (the system clock).
inline std::uint32_t unixNow() {
    return static_cast<std::uint32_t>(std::chrono::duration_cast<std::chrono::seconds>(
                                          std::chrono::system_clock::now().time_since_epoch())
                                          .count());
}

inline std::uint32_t absoluteExpiry(std::int64_t exptime) {
    constexpr std::int64_t kRelativeLimit = 60 * 60 * 24 * 30;
    if (exptime == 0) {
        return 0;
    }
    if (exptime < 0) {
        return 1;  // in the past: expired at once
    }
    if (exptime > kRelativeLimit) {
        return static_cast<std::uint32_t>(exptime);
    }
    return static_cast<std::uint32_t>(unixNow() + exptime);
}

}  // namespace kvexec::server
