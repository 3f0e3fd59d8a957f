// process_cpu.h: the whole process's CPU time (user + sys, every thread),
// so that each throughput row also says what it cost: a pool (or a peer)
// that wins by spinning idle workers shows it as CPU per item.
//
// Thread safety: processCpuSeconds() from any thread.
#pragma once

#include <sys/resource.h>

namespace kvexec::bench {

inline double processCpuSeconds() {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    auto secs = [](const timeval& tv) { return double(tv.tv_sec) + double(tv.tv_usec) / 1e6; };
    return secs(ru.ru_utime) + secs(ru.ru_stime);
}

}  // namespace kvexec::bench
