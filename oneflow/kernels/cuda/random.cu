// GPU dropout, dropout_grad, random_mask_like, random_uniform, random_normal and bernoulli.
//
// The CPU kernels (cpu/dropout.cpp, cpu/random.cpp) draw from counter-based generators: the
// bits of logical element i at iteration t are a hash of (seed, t, i), with no state carried
// between elements. The GPU kernels compute the same hashes, so they give the CPU's numbers bit
// for bit (random_normal up to the last bits of the device's double log and cos), on any split
// of the blob over devices, and a dropout's mask equals random_mask_like's with the same seed
// and rate. The hash functions below must stay identical to the CPU's; the GPU tests compare
// them exactly.

#include <cuda_fp16.h>

#include "oneflow/device/cuda_device_context.h"
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/cuda/elementwise.cuh"
#include "oneflow/sbp/tensor_slice.h"

namespace oneflow {
namespace cuda {

namespace {

#define OF_GRID_STRIDE_LOOP(i, n)                                                        \
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(blockDim.x) * gridDim.x)

// ---------------------------------------------------------------------------------------------
// dropout, dropout_grad, random_mask_like (cpu/dropout.cpp)

__host__ __device__ inline uint64_t SplitMix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

__device__ __forceinline__ uint32_t Mix32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7FEB352Du;
  x ^= x >> 15;
  x *= 0x846CA68Bu;
  x ^= x >> 16;
  return x;
}

// 1 (keep) or 0 (drop) for logical element `index` under the iteration's keys.
__device__ __forceinline__ int8_t KeepBit(uint64_t index, uint32_t key0, uint32_t key1,
                                          uint32_t threshold) {
  const uint32_t folded =
      static_cast<uint32_t>(index) ^ (static_cast<uint32_t>(index >> 32) * 0x9E3779B9u);
  const uint32_t h = Mix32(Mix32(folded ^ key0) + key1);
  return (h >> 8) >= threshold ? 1 : 0;
}

// One iteration's mask parameters: physical element e is logical element
// (e / run) * logical_stride + offset + e % run.
struct MaskParams {
  uint32_t key0 = 0, key1 = 0, threshold = 0;
  int64_t run = 1, logical_stride = 0, offset = 0;
};

__device__ __forceinline__ int8_t MaskBit(const MaskParams& m, int64_t e) {
  const int64_t logical = (e / m.run) * m.logical_stride + m.offset + e % m.run;
  return KeepBit(static_cast<uint64_t>(logical), m.key0, m.key1, m.threshold);
}

// The seeded mask of one op: where its part lies in the logical blob, and its iteration count
// (as cpu/dropout.cpp's MaskGenerator).
class MaskGenerator {
 public:
  MaskGenerator(const KernelInitContext& ctx, const std::string& argument) {
    const double rate = ctx.Attr<double>("rate");
    seed_ = static_cast<uint64_t>(ctx.Attr<int64_t>("seed"));
    params_.threshold = static_cast<uint32_t>(rate * double(1u << 24) + 0.5);
    const Shape& logical = ctx.LogicalDesc(argument).shape;
    const Shape& physical = ctx.Desc(argument).shape;
    const SbpParallel sbp = ctx.Sbp(argument);
    const ParallelContext& parallel = ctx.parallel_context();
    elem_count_ = physical.elem_count();
    params_.run = std::max<int64_t>(1, elem_count_);
    if (sbp.has_split_parallel() && parallel.parallel_num() > 1) {
      const int64_t axis = sbp.split_parallel().axis();
      int64_t inner = 1;
      for (int64_t a = axis + 1; a < logical.num_axes(); ++a) { inner *= logical.At(a); }
      const Range part =
          BalancedPart(logical.At(axis), parallel.parallel_num(), parallel.parallel_id());
      params_.run = std::max<int64_t>(1, part.size() * inner);
      params_.logical_stride = logical.At(axis) * inner;
      params_.offset = part.begin * inner;
    }
  }

  // The parameters of iteration (piece) `piece_id`.
  MaskParams For(int64_t piece_id) const {
    const uint64_t key = SplitMix64(seed_ ^ SplitMix64(static_cast<uint64_t>(piece_id)));
    MaskParams params = params_;
    params.key0 = static_cast<uint32_t>(key);
    params.key1 = static_cast<uint32_t>(key >> 32);
    return params;
  }
  int64_t elem_count() const { return elem_count_; }

 private:
  uint64_t seed_ = 0;
  int64_t elem_count_ = 0;
  MaskParams params_;
};

template <typename T>
__global__ void DropoutKernel(int64_t n, MaskParams m, ComputeType<T> scale, const T* x, T* y,
                              int8_t* mask) {
  using C = ComputeType<T>;
  OF_GRID_STRIDE_LOOP(e, n) {
    const int8_t keep = MaskBit(m, e);
    mask[e] = keep;
    y[e] = keep ? Convert<T>(Convert<C>(x[e]) * scale) : Convert<T>(C(0));
  }
}

__global__ void RandomMaskKernel(int64_t n, MaskParams m, int8_t* mask) {
  OF_GRID_STRIDE_LOOP(e, n) { mask[e] = MaskBit(m, e); }
}

template <typename T>
class DropoutGpuKernel final : public Kernel {
 public:
  explicit DropoutGpuKernel(const KernelInitContext& ctx)
      : mask_(ctx, "x"),
        scale_(static_cast<ComputeType<T>>(1.0 / (1.0 - ctx.Attr<double>("rate")))) {}

  void Forward(KernelContext& ctx) override {
    const MaskParams params = mask_.For(ctx.piece_id());
    const int64_t n = mask_.elem_count();
    if (n == 0) { return; }
    DropoutKernel<T><<<BlockCount(n), kBlockSize, 0, ctx.cuda_device().cuda_stream()>>>(
        n, params, scale_, ctx.Input("x").data<T>(), ctx.Output("y").mut_data<T>(),
        ctx.Output("mask").mut_data<int8_t>());
    OF_CUDA_CHECK(cudaGetLastError());
  }

 private:
  MaskGenerator mask_;
  ComputeType<T> scale_;
};

// random_mask_like's output is int8 whatever like's dtype; the kernel never reads like.
class RandomMaskLikeGpuKernel final : public Kernel {
 public:
  explicit RandomMaskLikeGpuKernel(const KernelInitContext& ctx) : mask_(ctx, "like") {}

  void Forward(KernelContext& ctx) override {
    const MaskParams params = mask_.For(ctx.piece_id());
    const int64_t n = mask_.elem_count();
    if (n == 0) { return; }
    RandomMaskKernel<<<BlockCount(n), kBlockSize, 0, ctx.cuda_device().cuda_stream()>>>(
        n, params, ctx.Output("out").mut_data<int8_t>());
    OF_CUDA_CHECK(cudaGetLastError());
  }

 private:
  MaskGenerator mask_;
};

// dx = mask ? dy * scale : 0 (the mask converted to the compute type by the launcher).
template <typename C>
struct DropoutGradFunctor {
  C scale;
  __device__ C operator()(C dy, C mask) const { return mask != C(0) ? dy * scale : C(0); }
};

template <typename T>
class DropoutGradGpuKernel final : public Kernel {
 public:
  explicit DropoutGradGpuKernel(const KernelInitContext& ctx)
      : scale_(static_cast<ComputeType<T>>(ctx.Attr<double>("scale"))) {}

  void Forward(KernelContext& ctx) override {
    using C = ComputeType<T>;
    LaunchElementwise<C>(ctx.cuda_device().cuda_stream(), ctx.Input("dy").elem_count(),
                         DropoutGradFunctor<C>{scale_}, ctx.Output("dx").mut_data<T>(),
                         ctx.Input("dy").data<T>(), ctx.Input("mask").data<int8_t>());
  }

 private:
  ComputeType<T> scale_;
};

// ---------------------------------------------------------------------------------------------
// random_uniform, random_normal, bernoulli (cpu/random.cpp)

constexpr uint64_t kGamma = 0x9E3779B97F4A7C15ull;

__host__ __device__ inline uint64_t Finalize(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Uniform in [0, 1) with the type's full mantissa.
__device__ __forceinline__ float Uniform01(uint64_t bits, float) {
  return static_cast<float>(bits >> 40) * (1.0f / 16777216.0f);
}
__device__ __forceinline__ double Uniform01(uint64_t bits, double) {
  return static_cast<double>(bits >> 11) * (1.0 / 9007199254740992.0);
}

// Physical element e of the output is row e / inner, column e % inner; physical row r is logical
// row (r / physical_dim) * logical_dim + r % physical_dim + begin (as cpu/random.cpp).
struct LogicalRows {
  int64_t inner = 1, physical_dim = 1, logical_dim = 1, begin = 0;
};

LogicalRows MakeLogicalRows(const KernelInitContext& ctx, const std::string& argument) {
  const Shape& physical = ctx.Desc(argument).shape;
  const Shape& logical = ctx.LogicalDesc(argument).shape;
  const SbpParallel sbp = ctx.Sbp(argument);
  LogicalRows rows;
  int64_t axis = 0;
  if (sbp.has_split_parallel() && physical != logical) {
    axis = sbp.split_parallel().axis();
    rows.begin = SliceOfPart(logical, sbp, ctx.parallel_context().parallel_id(),
                             ctx.parallel_context().parallel_num())
                     .begin[axis];
  }
  if (physical.num_axes() == 0) { return rows; }
  rows.inner = std::max<int64_t>(1, physical.Count(axis + 1, physical.num_axes()));
  rows.physical_dim = std::max<int64_t>(1, physical.At(axis));
  rows.logical_dim = logical.At(axis);
  return rows;
}

// The random bits of physical element e under the iteration's key.
__device__ __forceinline__ uint64_t RandomBits(const LogicalRows& rows, uint64_t key, int64_t e) {
  const int64_t row = e / rows.inner;
  const int64_t logical_row =
      (row / rows.physical_dim) * rows.logical_dim + row % rows.physical_dim + rows.begin;
  const int64_t index = logical_row * rows.inner + e % rows.inner;
  return Finalize(key + (static_cast<uint64_t>(index) + 1) * kGamma);
}

// The key of one iteration of one seeded op.
class IterationKeys {
 public:
  explicit IterationKeys(const KernelInitContext& ctx)
      : seed_key_(Finalize(static_cast<uint64_t>(ctx.Attr<int64_t>("seed")) * kGamma + 1)) {}
  // The key of iteration (piece) `piece_id`: the same in every kernel built for this op.
  uint64_t For(int64_t piece_id) const {
    return Finalize(seed_key_ ^ ((static_cast<uint64_t>(piece_id) + 1) * kGamma));
  }

 private:
  uint64_t seed_key_;
};

// low + range * u rounded twice, as the CPU kernel: nvcc would contract it into one FMA (x86-64's
// baseline has none), and the numbers would differ from the CPU's in the last bit.
__device__ __forceinline__ float LowPlusRangeTimes(float low, float range, float u) {
  return __fadd_rn(low, __fmul_rn(range, u));
}
__device__ __forceinline__ double LowPlusRangeTimes(double low, double range, double u) {
  return __dadd_rn(low, __dmul_rn(range, u));
}

template <typename T>
__global__ void RandomUniformKernel(int64_t n, LogicalRows rows, uint64_t key, T low, T range,
                                    T* out) {
  OF_GRID_STRIDE_LOOP(e, n) {
    out[e] = LowPlusRangeTimes(low, range, Uniform01(RandomBits(rows, key, e), T()));
  }
}

// Box-Muller on the two 32-bit halves of an element's bits.
template <typename T>
__global__ void RandomNormalKernel(int64_t n, LogicalRows rows, uint64_t key, double mean,
                                   double stddev, T* out) {
  OF_GRID_STRIDE_LOOP(e, n) {
    const uint64_t bits = RandomBits(rows, key, e);
    const double u1 = (static_cast<double>(bits >> 32) + 1.0) * (1.0 / 4294967296.0);  // (0, 1]
    const double u2 = static_cast<double>(bits & 0xFFFFFFFFull) * (1.0 / 4294967296.0);
    const double z = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
    out[e] = static_cast<T>(mean + stddev * z);
  }
}

// out (of dtype out_type: float, double, int8, int32, int64) is 1 with probability p.
template <typename T>
__global__ void BernoulliKernel(int64_t n, LogicalRows rows, uint64_t key, const T* p,
                                DataType out_type, void* out) {
  OF_GRID_STRIDE_LOOP(e, n) {
    const int bit = Uniform01(RandomBits(rows, key, e), double()) < static_cast<double>(p[e]);
    switch (out_type) {
      case kFloat:
        static_cast<float*>(out)[e] = static_cast<float>(bit);
        break;
      case kDouble:
        static_cast<double*>(out)[e] = static_cast<double>(bit);
        break;
      case kInt8:
        static_cast<int8_t*>(out)[e] = static_cast<int8_t>(bit);
        break;
      case kInt32:
        static_cast<int32_t*>(out)[e] = bit;
        break;
      default:
        static_cast<int64_t*>(out)[e] = bit;
        break;
    }
  }
}

template <typename T>
class RandomUniformGpuKernel final : public Kernel {
 public:
  explicit RandomUniformGpuKernel(const KernelInitContext& ctx)
      : rows_(MakeLogicalRows(ctx, "out")),
        keys_(ctx),
        low_(static_cast<T>(ctx.Attr<double>("low"))),
        range_(static_cast<T>(ctx.Attr<double>("high") - ctx.Attr<double>("low"))) {}

  void Forward(KernelContext& ctx) override {
    const uint64_t key = keys_.For(ctx.piece_id());
    Blob& out = ctx.Output("out");
    const int64_t n = out.elem_count();
    if (n == 0) { return; }
    RandomUniformKernel<T><<<BlockCount(n), kBlockSize, 0, ctx.cuda_device().cuda_stream()>>>(
        n, rows_, key, low_, range_, out.mut_data<T>());
    OF_CUDA_CHECK(cudaGetLastError());
  }

 private:
  LogicalRows rows_;
  IterationKeys keys_;
  T low_, range_;
};

template <typename T>
class RandomNormalGpuKernel final : public Kernel {
 public:
  explicit RandomNormalGpuKernel(const KernelInitContext& ctx)
      : rows_(MakeLogicalRows(ctx, "out")),
        keys_(ctx),
        mean_(ctx.Attr<double>("mean")),
        stddev_(ctx.Attr<double>("stddev")) {}

  void Forward(KernelContext& ctx) override {
    const uint64_t key = keys_.For(ctx.piece_id());
    Blob& out = ctx.Output("out");
    const int64_t n = out.elem_count();
    if (n == 0) { return; }
    RandomNormalKernel<T><<<BlockCount(n), kBlockSize, 0, ctx.cuda_device().cuda_stream()>>>(
        n, rows_, key, mean_, stddev_, out.mut_data<T>());
    OF_CUDA_CHECK(cudaGetLastError());
  }

 private:
  LogicalRows rows_;
  IterationKeys keys_;
  double mean_, stddev_;
};

template <typename T>
class BernoulliGpuKernel final : public Kernel {
 public:
  explicit BernoulliGpuKernel(const KernelInitContext& ctx)
      : rows_(MakeLogicalRows(ctx, "out")), keys_(ctx) {}

  void Forward(KernelContext& ctx) override {
    const uint64_t key = keys_.For(ctx.piece_id());
    Blob& out = ctx.Output("out");
    const int64_t n = out.elem_count();
    if (n == 0) { return; }
    BernoulliKernel<T><<<BlockCount(n), kBlockSize, 0, ctx.cuda_device().cuda_stream()>>>(
        n, rows_, key, ctx.Input("x").data<T>(), out.data_type(), out.mut_raw());
    OF_CUDA_CHECK(cudaGetLastError());
  }

 private:
  LogicalRows rows_;
  IterationKeys keys_;
};

}  // namespace

OF_REGISTER_GPU_FLOATING_KERNELS("dropout", DropoutGpuKernel);
OF_REGISTER_GPU_FLOATING_KERNELS("dropout_grad", DropoutGradGpuKernel);
REGISTER_KERNEL("random_mask_like", "gpu", kInt8, RandomMaskLikeGpuKernel);
REGISTER_KERNEL("random_uniform", "gpu", kFloat, RandomUniformGpuKernel<float>);
REGISTER_KERNEL("random_uniform", "gpu", kDouble, RandomUniformGpuKernel<double>);
REGISTER_KERNEL("random_normal", "gpu", kFloat, RandomNormalGpuKernel<float>);
REGISTER_KERNEL("random_normal", "gpu", kDouble, RandomNormalGpuKernel<double>);
REGISTER_KERNEL("bernoulli", "gpu", kFloat, BernoulliGpuKernel<float>);
REGISTER_KERNEL("bernoulli", "gpu", kDouble, BernoulliGpuKernel<double>);

}  // namespace cuda
}  // namespace oneflow
