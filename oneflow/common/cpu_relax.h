#pragma once
// A hint inside spin-wait loops: lets the other hardware thread of the core run (and saves
// power) while this one polls.

namespace oneflow {

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace oneflow
