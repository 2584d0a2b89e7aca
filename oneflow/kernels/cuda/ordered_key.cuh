#pragma once
// Order-preserving unsigned keys of the sortable dtypes (float, double, float16, int8, int32,
// int64), for the GPU argmax / argmin / sort / argsort / top_k / in_top_k kernels.
// OrderedKey(a) < OrderedKey(b), as unsigned integers, exactly when the CPU kernels
// (cpu/arg_sort.cpp) order a before b ascending: smaller numbers first, -0.0 and +0.0 equal,
// every NaN equal to every other NaN and after every number. Keys are built from the bits,
// never from floating-point comparisons, so the order does not depend on flush-to-zero or other
// math flags.

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

namespace oneflow {
namespace cuda {

// The unsigned key type of T: as wide as T.
template <typename T>
struct OrderedKeyOf;
template <>
struct OrderedKeyOf<float> {
  using type = uint32_t;
};
template <>
struct OrderedKeyOf<double> {
  using type = uint64_t;
};
template <>
struct OrderedKeyOf<half> {
  using type = uint16_t;
};
template <>
struct OrderedKeyOf<int8_t> {
  using type = uint8_t;
};
template <>
struct OrderedKeyOf<int32_t> {
  using type = uint32_t;
};
template <>
struct OrderedKeyOf<int64_t> {
  using type = uint64_t;
};
template <typename T>
using OrderedKeyType = typename OrderedKeyOf<T>::type;

// float, double and float16 (NaN and signed zeros), as opposed to the integers.
template <typename T>
constexpr bool kIsFloatingKey = std::is_floating_point_v<T> || std::is_same_v<T, half>;

// The largest key: every NaN's (floating T), else the largest value's.
template <typename T>
__host__ __device__ __forceinline__ constexpr OrderedKeyType<T> MaxOrderedKey() {
  return static_cast<OrderedKeyType<T>>(~OrderedKeyType<T>(0));
}

template <typename T>
__device__ __forceinline__ OrderedKeyType<T> OrderedKey(T x) {
  using K = OrderedKeyType<T>;
  constexpr K kSign = static_cast<K>(K(1) << (sizeof(K) * 8 - 1));
  if constexpr (kIsFloatingKey<T>) {
    K bits, infinity;
    if constexpr (std::is_same_v<T, float>) {
      bits = __float_as_uint(x);
      infinity = K(0x7F800000u);
    } else if constexpr (std::is_same_v<T, half>) {
      bits = __half_as_ushort(x);
      infinity = K(0x7C00u);
    } else {
      bits = static_cast<K>(__double_as_longlong(x));
      infinity = K(0x7FF0000000000000ull);
    }
    const K magnitude = static_cast<K>(bits & ~kSign);
    if (magnitude > infinity) { return MaxOrderedKey<T>(); }  // NaN, any sign or payload
    if (magnitude == 0) { bits = 0; }                          // -0.0 as +0.0
    // Negative numbers: all bits flipped (larger magnitude, smaller key), below the positive
    // ones, which get the sign bit set.
    return (bits & kSign) != 0 ? static_cast<K>(~bits) : static_cast<K>(bits | kSign);
  } else {
    // Two's complement with the sign bit flipped: INT_MIN -> 0, -1 -> kSign - 1, 0 -> kSign.
    return static_cast<K>(static_cast<K>(x) ^ kSign);
  }
}

// Registers a GPU kernel template for the sortable dtypes: those of the CPU kernels (op
// arg_sort.cpp's sortable dtypes; float16 through float32 on the CPU), the ones OrderedKey
// takes.
#define OF_REGISTER_GPU_SORTABLE_KERNELS(op_type, Kernel)   \
  REGISTER_KERNEL(op_type, "gpu", kFloat, Kernel<float>);   \
  REGISTER_KERNEL(op_type, "gpu", kDouble, Kernel<double>); \
  REGISTER_KERNEL(op_type, "gpu", kFloat16, Kernel<half>);  \
  REGISTER_KERNEL(op_type, "gpu", kInt8, Kernel<int8_t>);   \
  REGISTER_KERNEL(op_type, "gpu", kInt32, Kernel<int32_t>); \
  REGISTER_KERNEL(op_type, "gpu", kInt64, Kernel<int64_t>)

}  // namespace cuda
}  // namespace oneflow
