// cpu_relax.h: the pause a spin-wait makes between two looks at shared
// state, so the core does not flood the memory system with reads (and, on
// a hyper-threaded core, leaves its sibling the pipeline).
//
// Thread safety: none needed (no state).
#pragma once

namespace kvexec::detail {

inline void cpuRelax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
}

}  // namespace kvexec::detail
