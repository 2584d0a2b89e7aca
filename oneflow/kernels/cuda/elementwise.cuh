#pragma once
// The one elementwise launcher of the GPU kernels: out[i] = functor(in0[i],
// in1[i], ...) for i in [0, n), n an int64, over a grid-stride loop on the
// kernel's stream. Each element is loaded, converted to the functor's compute
// type (float for half, the type itself otherwise), given to the functor, and
// converted to the output type on store. When every pointer is aligned to a
// pack of kPackSize elements, each thread moves whole packs (one vector load
// per input) and the remainder runs one element at a time; both paths live in
// one kernel (one instantiation).
//
// A functor is a small struct with `__device__ Out operator()(Compute...)
// const`; its state (scalars, attributes) is copied to the device by value.

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "oneflow/device/cuda_check.h"

namespace oneflow {
namespace cuda {

constexpr int kBlockSize = 256;
// Enough blocks to fill an H100/H200 several times over; the grid-stride loop
// does the rest.
constexpr int64_t kMaxBlocks = 8192;
constexpr int kPackSize = 4;

inline int BlockCount(int64_t n, int64_t per_thread = 1) {
  const int64_t threads = (n + per_thread - 1) / per_thread;
  return static_cast<int>(
      std::max<int64_t>(1, std::min(kMaxBlocks, (threads + kBlockSize - 1) / kBlockSize)));
}

// The type a kernel computes in: float for half, the type itself otherwise.
template <typename T>
struct ComputeTypeOf {
  using type = T;
};
template <>
struct ComputeTypeOf<half> {
  using type = float;
};
template <typename T>
using ComputeType = typename ComputeTypeOf<T>::type;

// Conversion between element types; half goes through float (one rounding from
// float, as the CPU cast).
template <typename To, typename From>
__device__ __forceinline__ To Convert(From x) {
  if constexpr (std::is_same_v<To, From>) {
    return x;
  } else if constexpr (std::is_same_v<From, half>) {
    return static_cast<To>(__half2float(x));
  } else if constexpr (std::is_same_v<To, half>) {
    return __float2half(static_cast<float>(x));
  } else {
    return static_cast<To>(x);
  }
}

template <typename T>
struct alignas(sizeof(T) * kPackSize) Pack {
  T value[kPackSize];
};

template <typename T>
bool IsPackAligned(const T* pointer) {
  return reinterpret_cast<uintptr_t>(pointer) % (sizeof(T) * kPackSize) == 0;
}

// Pack `p` of `in` (kPackSize * sizeof(T) bytes, aligned to that) as whole 4-, 8- or 16-byte
// words, so that the compiler emits vector loads (a struct copy is loaded element by element).
template <typename T>
__device__ __forceinline__ Pack<T> LoadPack(const T* in, int64_t p) {
  constexpr int kBytes = sizeof(T) * kPackSize;
  Pack<T> pack;
  if constexpr (kBytes % 16 == 0) {
    const uint4* source = reinterpret_cast<const uint4*>(in) + p * (kBytes / 16);
#pragma unroll
    for (int w = 0; w < kBytes / 16; ++w) { reinterpret_cast<uint4*>(&pack)[w] = source[w]; }
  } else if constexpr (kBytes == 8) {
    *reinterpret_cast<uint2*>(&pack) = reinterpret_cast<const uint2*>(in)[p];
  } else if constexpr (kBytes == 4) {
    *reinterpret_cast<uint32_t*>(&pack) = reinterpret_cast<const uint32_t*>(in)[p];
  } else {
    pack = reinterpret_cast<const Pack<T>*>(in)[p];
  }
  return pack;
}

// One pack of results from one pack of each input.
template <typename Compute, typename Functor, typename Out, typename... In>
__device__ __forceinline__ Pack<Out> ApplyToPacks(const Functor& functor, const Pack<In>&... in) {
  Pack<Out> result;
#pragma unroll
  for (int j = 0; j < kPackSize; ++j) {
    result.value[j] = Convert<Out>(functor(Convert<Compute>(in.value[j])...));
  }
  return result;
}

template <typename Compute, typename Functor, typename Out, typename... In>
__global__ void ElementwiseKernel(int64_t n, bool packed, Functor functor, Out* out,
                                  const In*... in) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  const int64_t start = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  int64_t scalar_begin = 0;
  if (packed) {
    const int64_t pack_count = n / kPackSize;
    for (int64_t p = start; p < pack_count; p += stride) {
      reinterpret_cast<Pack<Out>*>(out)[p] =
          ApplyToPacks<Compute, Functor, Out, In...>(functor, LoadPack(in, p)...);
    }
    scalar_begin = pack_count * kPackSize;
  }
  for (int64_t i = scalar_begin + start; i < n; i += stride) {
    out[i] = Convert<Out>(functor(Convert<Compute>(in[i])...));
  }
}

// out[i] = functor(in[i]...) on `stream`. Compute: the type the functor takes.
template <typename Compute, typename Functor, typename Out, typename... In>
void LaunchElementwise(cudaStream_t stream, int64_t n, Functor functor, Out* out, const In*... in) {
  if (n <= 0) { return; }
  const bool packed = IsPackAligned(out) && (IsPackAligned(in) && ...) && n >= kPackSize;
  ElementwiseKernel<Compute><<<BlockCount(n, packed ? kPackSize : 1), kBlockSize, 0, stream>>>(
      n, packed, functor, out, in...);
  OF_CUDA_CHECK(cudaGetLastError());
}

// Fills out[0, n) with `value`.
template <typename T>
__global__ void FillKernel(int64_t n, T value, T* out) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    out[i] = value;
  }
}

template <typename T>
void LaunchFill(cudaStream_t stream, int64_t n, T value, T* out) {
  if (n <= 0) { return; }
  FillKernel<T><<<BlockCount(n), kBlockSize, 0, stream>>>(n, value, out);
  OF_CUDA_CHECK(cudaGetLastError());
}

}  // namespace cuda
}  // namespace oneflow

// Registration of GPU kernel templates: float, double and float16.
#define OF_REGISTER_GPU_FLOATING_KERNELS(op_type, KernelTemplate)   \
  REGISTER_KERNEL(op_type, "gpu", kFloat, KernelTemplate<float>);   \
  REGISTER_KERNEL(op_type, "gpu", kDouble, KernelTemplate<double>); \
  REGISTER_KERNEL(op_type, "gpu", kFloat16, KernelTemplate<half>)
// ... and int32, int64.
#define OF_REGISTER_GPU_ARITHMETIC_KERNELS(op_type, KernelTemplate) \
  OF_REGISTER_GPU_FLOATING_KERNELS(op_type, KernelTemplate);        \
  REGISTER_KERNEL(op_type, "gpu", kInt32, KernelTemplate<int32_t>); \
  REGISTER_KERNEL(op_type, "gpu", kInt64, KernelTemplate<int64_t>)
// ... and int8, uint8.
#define OF_REGISTER_GPU_ALL_TYPE_KERNELS(op_type, KernelTemplate) \
  OF_REGISTER_GPU_ARITHMETIC_KERNELS(op_type, KernelTemplate);    \
  REGISTER_KERNEL(op_type, "gpu", kInt8, KernelTemplate<int8_t>); \
  REGISTER_KERNEL(op_type, "gpu", kUInt8, KernelTemplate<uint8_t>)
