#pragma once
// Run-time choice of the vector ISA for hot CPU kernel loops: the one mechanism all kernels use.
//
// The default build is generic x86-64 (-march=x86-64, SSE2 only: cmake/blas.cmake), so that the
// library runs on any x86-64 CPU. A function marked ONEFLOW_CPU_DISPATCH is compiled three times
// by GCC's function multiversioning (target_clones): for x86-64-v4 (AVX-512F/BW/DQ/VL), for
// x86-64-v3 (AVX2, FMA, F16C) and for the baseline; an ifunc resolver picks one when the library
// loads, from the CPU the process runs on. Calls go through the PLT, so dispatch a whole chunk
// or row, never one element.
//
// What gets per-ISA code: the body of the marked function and whatever GCC inlines into it.
// Inline functions of the default target (fast_math.h, functors, std::max) inline into the
// clones because x86-64-v3/v4 only add ISA features to the baseline's architecture. A lambda's
// own body is not cloned: run it through PerIsa() (below), which inlines it into a clone.
//
// With ONEFLOW_CPU_ARCH=native (or any -march with AVX2) everything is already compiled for the
// build machine and the macro is empty: clones would be no faster, and GCC cannot inline
// functions compiled for a named CPU into clones whose ISA is not a superset of it (measured: a
// call per element, 6x slower). Clang's target_clones needs a newer toolchain; there the macro
// is empty as well (baseline code).

#include <cstdint>
#include <utility>

namespace oneflow {

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__AVX2__)
#define ONEFLOW_CPU_DISPATCH \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define ONEFLOW_CPU_DISPATCH
#endif

// Marks a lambda given to PerIsa: forces it inline into each clone (a lambda called from three
// clones is otherwise an ordinary out-of-line call when its body is large).
#define ONEFLOW_PER_ISA_BODY __attribute__((always_inline))

// Runs body(args...) inside a per-ISA clone. The body is taken by value so that, inlined, its
// captures are locals that stores through the kernel's output pointers cannot alias.
template <typename Body, typename... Args>
ONEFLOW_CPU_DISPATCH void RunPerIsa(Body body, Args... args) {
  body(args...);
}

// Wraps a chunk function (begin, end) for ParallelForElements / ParallelForRows so that its loops
// run in the per-ISA clones:
//   ParallelForRows(ctx, rows, n, PerIsa([=](int64_t begin, int64_t end) ONEFLOW_PER_ISA_BODY {
//     ... loops ...
//   }));
template <typename Body>
auto PerIsa(Body body) {
  return [body = std::move(body)](int64_t begin, int64_t end) { RunPerIsa(body, begin, end); };
}

}  // namespace oneflow
