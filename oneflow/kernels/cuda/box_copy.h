#pragma once
// Copies an N-d box between two row-major tensors on a GPU stream: the executor of the box
// copies of an NCCL collective plan (comm/nccl_collective_plan.h), which pack parts into staging
// chunks and unpack them. Elements move as raw bytes of 1, 2, 4 or 8, so one kernel serves every
// dtype. Plain C++ (no nvcc needed to include it); CUDA builds only.

#ifdef ONEFLOW_WITH_CUDA

#include <cuda_runtime_api.h>

#include <cstdint>

namespace oneflow {

constexpr int kMaxBoxCopyKernelAxes = 8;

// The box `extent` (num_axes axes, 1 to kMaxBoxCopyKernelAxes) from `src` (a tensor of
// `src_dims`, box corner `src_begin`) to `dst` (`dst_dims`, `dst_begin`), elements of
// `elem_size` bytes, enqueued on `stream`. Returns at once; an empty box enqueues nothing.
// Throws Error(kRuntime) if the launch fails, Error(kInternal) on a bad rank or element size.
void LaunchBoxCopy(int64_t elem_size, int64_t num_axes, const int64_t* extent, const void* src,
                   const int64_t* src_dims, const int64_t* src_begin, void* dst,
                   const int64_t* dst_dims, const int64_t* dst_begin, cudaStream_t stream);

}  // namespace oneflow

#endif  // ONEFLOW_WITH_CUDA
