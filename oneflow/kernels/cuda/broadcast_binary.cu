// GPU kernels of the broadcast binary family
// (oneflow/ops/broadcast_binary.cpp): one functor per op over the broadcast
// launcher of broadcast.cuh. Same formulas, edge cases and dtypes as the CPU
// kernels (cpu/broadcast_binary.cpp), plus float16 for the floating ones
// (computed in float). Comparisons and logical ops write int8.

#include <cuda_fp16.h>

#include <type_traits>

#include "oneflow/device/cuda_device_context.h"
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/broadcast_binary_op_list.h"
#include "oneflow/kernels/cuda/broadcast.cuh"
#include "oneflow/kernels/cuda/math_functors.cuh"

namespace oneflow {
namespace cuda {

namespace {

namespace dm = device_math;

#define OF_BINARY_FUNCTOR(Name, expression)                      \
  struct Name {                                                  \
    template <typename T>                                        \
    __device__ __forceinline__ auto operator()(T x, T y) const { \
      return expression;                                         \
    }                                                            \
  };

// clang-format off
OF_BINARY_FUNCTOR(AddFunctor, T(x + y))
OF_BINARY_FUNCTOR(SubFunctor, T(x - y))
OF_BINARY_FUNCTOR(MulFunctor, T(x * y))
OF_BINARY_FUNCTOR(DivFunctor, T(x / y))
OF_BINARY_FUNCTOR(PowFunctor, T(dm::Pow(x, y)))
OF_BINARY_FUNCTOR(Atan2Functor, T(dm::Atan2(x, y)))
OF_BINARY_FUNCTOR(XdivyFunctor, x == T(0) ? T(0) : T(x / y))
OF_BINARY_FUNCTOR(XlogyFunctor, x == T(0) ? T(0) : T(x * dm::Log(y)))
OF_BINARY_FUNCTOR(MaximumFunctor, (x > y || x != x) ? x : y)
OF_BINARY_FUNCTOR(MinimumFunctor, (x < y || x != x) ? x : y)
OF_BINARY_FUNCTOR(EqualFunctor, int8_t(x == y))
OF_BINARY_FUNCTOR(NotEqualFunctor, int8_t(x != y))
OF_BINARY_FUNCTOR(GreaterFunctor, int8_t(x > y))
OF_BINARY_FUNCTOR(GreaterEqualFunctor, int8_t(x >= y))
OF_BINARY_FUNCTOR(LessFunctor, int8_t(x < y))
OF_BINARY_FUNCTOR(LessEqualFunctor, int8_t(x <= y))
OF_BINARY_FUNCTOR(LogicalAndFunctor, int8_t(x != T(0) && y != T(0)))
OF_BINARY_FUNCTOR(LogicalOrFunctor, int8_t(x != T(0) || y != T(0)))
// clang-format on
#undef OF_BINARY_FUNCTOR

// Python's floor division and modulo; integer division by zero gives 0
// (cpu/broadcast_binary.cpp).
struct FloorModFunctor {
  template <typename T>
  __device__ __forceinline__ T operator()(T x, T y) const {
    if constexpr (std::is_floating_point_v<T>) {
      const T remainder = dm::Fmod(x, y);
      return remainder != T(0) && ((remainder < T(0)) != (y < T(0))) ? remainder + y : remainder;
    } else {
      const T safe_y = y == T(0) ? T(1) : y;
      const T remainder = x % safe_y;
      const T adjusted = remainder != T(0) && ((remainder < T(0)) != (safe_y < T(0)))
                             ? remainder + safe_y
                             : remainder;
      return y == T(0) ? T(0) : adjusted;
    }
  }
};
struct FloorDivFunctor {
  template <typename T>
  __device__ __forceinline__ T operator()(T x, T y) const {
    if constexpr (std::is_floating_point_v<T>) {
      return dm::Floor(x / y);
    } else {
      const T safe_y = y == T(0) ? T(1) : y;
      const T quotient = x / safe_y;
      const T adjusted =
          (x % safe_y != T(0) && ((x < T(0)) != (safe_y < T(0)))) ? quotient - T(1) : quotient;
      return y == T(0) ? T(0) : adjusted;
    }
  }
};

// Out: z's element type (T, or int8 for comparisons and logical ops).
template <typename Functor, typename T, typename Out = T>
class BroadcastBinaryGpuKernel final : public Kernel {
 public:
  explicit BroadcastBinaryGpuKernel(const KernelInitContext& ctx)
      : plan_(ctx.Desc("z").shape, ctx.Desc("x").shape, ctx.Desc("y").shape) {}

  void Forward(KernelContext& ctx) override {
    LaunchBroadcastBinary<ComputeType<T>>(ctx.cuda_device().cuda_stream(), plan_, Functor(),
                                          ctx.Output("z").mut_data<Out>(), ctx.Input("x").data<T>(),
                                          ctx.Input("y").data<T>());
  }

 private:
  BroadcastBinaryPlan plan_;
};

}  // namespace

#define OF_REGISTER_BROADCAST_KERNEL(op_type, Functor, data_type, T, Out) \
  REGISTER_KERNEL(op_type, "gpu", data_type, BroadcastBinaryGpuKernel<Functor, T, Out>)

#define OF_REGISTER_BROADCAST_FLOATING_KERNELS(op_type, Functor)           \
  OF_REGISTER_BROADCAST_KERNEL(op_type, Functor, kFloat, float, float);    \
  OF_REGISTER_BROADCAST_KERNEL(op_type, Functor, kDouble, double, double); \
  OF_REGISTER_BROADCAST_KERNEL(op_type, Functor, kFloat16, half, half)

#define OF_REGISTER_BROADCAST_KERNELS_ALL_TYPES(op_type, Functor)           \
  OF_REGISTER_BROADCAST_FLOATING_KERNELS(op_type, Functor);                 \
  OF_REGISTER_BROADCAST_KERNEL(op_type, Functor, kInt32, int32_t, int32_t); \
  OF_REGISTER_BROADCAST_KERNEL(op_type, Functor, kInt64, int64_t, int64_t)

#define OF_REGISTER_BROADCAST_COMPARE_KERNELS(op_type, Functor)            \
  OF_REGISTER_BROADCAST_KERNEL(op_type, Functor, kFloat, float, int8_t);   \
  OF_REGISTER_BROADCAST_KERNEL(op_type, Functor, kDouble, double, int8_t); \
  OF_REGISTER_BROADCAST_KERNEL(op_type, Functor, kFloat16, half, int8_t);  \
  OF_REGISTER_BROADCAST_KERNEL(op_type, Functor, kInt8, int8_t, int8_t);   \
  OF_REGISTER_BROADCAST_KERNEL(op_type, Functor, kInt32, int32_t, int8_t); \
  OF_REGISTER_BROADCAST_KERNEL(op_type, Functor, kInt64, int64_t, int8_t)

OF_FOR_EACH_BROADCAST_BINARY_OP(OF_REGISTER_BROADCAST_KERNELS_ALL_TYPES,
                                OF_REGISTER_BROADCAST_FLOATING_KERNELS,
                                OF_REGISTER_BROADCAST_COMPARE_KERNELS);

}  // namespace cuda
}  // namespace oneflow
