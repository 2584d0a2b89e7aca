#pragma once
// Splits large elementwise work over the CPU device's compute threads; small work runs inline
// because handing it off costs more than doing it.

#include <algorithm>
#include <cstdint>
#include <functional>

#include "oneflow/device/cpu_device_context.h"
#include "oneflow/framework/kernel.h"

namespace oneflow {

// Elements per chunk below which elementwise work is not split.
constexpr int64_t kElementwiseGrain = 32768;

inline void ParallelForElements(KernelContext& ctx, int64_t count, int64_t grain,
                                const std::function<void(int64_t, int64_t)>& fn) {
  if (count <= grain) {
    if (count > 0) { fn(0, count); }
  } else {
    ctx.cpu_device().ParallelFor(count, grain, fn);
  }
}

// Splits `rows` rows of `row_size` elements each, keeping whole rows together and about
// kElementwiseGrain elements per chunk.
inline void ParallelForRows(KernelContext& ctx, int64_t rows, int64_t row_size,
                            const std::function<void(int64_t, int64_t)>& fn) {
  const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(row_size, 1));
  ParallelForElements(ctx, rows, grain, fn);
}

}  // namespace oneflow
