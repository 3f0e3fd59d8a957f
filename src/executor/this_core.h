// this_core.h: the core the calling thread runs on, for spreading shared
// writes over per-core slots (the Wheel's ready lanes, the kinds'
// histogram stripes).
//
// glibc reads it from the thread's rseq area (no system call). A thread
// that moves meanwhile only shares a slot for a while, so callers use it
// as a hint, never for correctness. 0 where the platform cannot tell.
//
// Thread safety: any thread.
#pragma once

#include <cstddef>

#if defined(__linux__)
#include <sched.h>
#endif

namespace kvexec::detail {

inline std::size_t thisCore() noexcept {
#if defined(__linux__)
    const int cpu = sched_getcpu();
    return cpu < 0 ? 0 : static_cast<std::size_t>(cpu);
#else
    return 0;
#endif
}

}  // namespace kvexec::detail
