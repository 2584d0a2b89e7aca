#pragma once
// Reduction of one value per thread over a thread block, through shared memory
// (any element type, including int8). blockDim.x must be a power of two no
// larger than kBlockSize. Every thread of the block must call it; all get the
// result. It may be called again in the same kernel (the trailing barrier
// protects the buffer).

#include <cuda_runtime.h>

#include "oneflow/kernels/cuda/elementwise.cuh"

namespace oneflow {
namespace cuda {

template <typename Acc, typename Merge>
__device__ Acc BlockReduce(Acc value, Merge merge) {
  __shared__ Acc buffer[kBlockSize];
  const int thread = threadIdx.x;
  buffer[thread] = value;
  __syncthreads();
  for (int active = blockDim.x / 2; active > 0; active /= 2) {
    if (thread < active) { buffer[thread] = merge(buffer[thread], buffer[thread + active]); }
    __syncthreads();
  }
  const Acc result = buffer[0];
  __syncthreads();
  return result;
}

// The smallest power of two >= count, within [32, kBlockSize]: the block size
// for reducing rows of `count` elements with one block per row.
inline int RowBlockSize(int64_t count) {
  int size = 32;
  while (size < kBlockSize && size < count) { size *= 2; }
  return size;
}

}  // namespace cuda
}  // namespace oneflow
