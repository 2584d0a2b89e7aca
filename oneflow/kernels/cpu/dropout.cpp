// CPU dropout, dropout_grad and random_mask_like. The mask bit of logical element i at
// iteration (piece) t is a counter-based hash of (seed, t, i) compared with rate (24-bit resolution), so
// every device computes its own slice of the same logical mask and no generator state is shared;
// random_mask_like with the same seed and rate gives dropout's mask. The hash (two rounds of a
// 32-bit multiply-xorshift finaliser) vectorizes.

#include <cstdint>

#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/cpu/cpu_dispatch.h"
#include "oneflow/kernels/cpu/parallel_for.h"
#include "oneflow/sbp/tensor_slice.h"

namespace oneflow {

namespace {

inline uint64_t SplitMix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

inline uint32_t Mix32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7FEB352Du;
  x ^= x >> 15;
  x *= 0x846CA68Bu;
  x ^= x >> 16;
  return x;
}

// 1 (keep) or 0 (drop) for logical element `index` under the iteration's key.
ONEFLOW_PER_ISA_BODY inline int8_t KeepBit(uint64_t index, uint32_t key0, uint32_t key1,
                                           uint32_t threshold) {
  const uint32_t folded =
      static_cast<uint32_t>(index) ^ (static_cast<uint32_t>(index >> 32) * 0x9E3779B9u);
  const uint32_t h = Mix32(Mix32(folded ^ key0) + key1);
  return (h >> 8) >= threshold ? 1 : 0;
}

// Writes mask and y for logical indices [first, first + count).
template <typename T>
ONEFLOW_PER_ISA_BODY inline void DropoutRun(const T* __restrict__ x, T* __restrict__ y,
                                            int8_t* __restrict__ mask, int64_t count,
                                            uint64_t first, uint32_t key0, uint32_t key1,
                                            uint32_t threshold, T scale) {
  for (int64_t i = 0; i < count; ++i) {
    const int8_t keep = KeepBit(first + static_cast<uint64_t>(i), key0, key1, threshold);
    mask[i] = keep;
    y[i] = keep ? x[i] * scale : T(0);
  }
}

// Writes the mask alone for logical indices [first, first + count).
ONEFLOW_PER_ISA_BODY inline void MaskRun(int8_t* __restrict__ mask, int64_t count, uint64_t first,
                                         uint32_t key0, uint32_t key1, uint32_t threshold) {
  for (int64_t i = 0; i < count; ++i) {
    mask[i] = KeepBit(first + static_cast<uint64_t>(i), key0, key1, threshold);
  }
}

// Where a device's part of a blob lies in the logical blob, and the per-iteration keys of one
// seeded mask: the physical blob is `rows` runs of `run` contiguous elements; run r starts at
// logical flat index r * logical_stride + offset.
class MaskGenerator {
 public:
  MaskGenerator(const KernelInitContext& ctx, const std::string& argument) {
    const double rate = ctx.Attr<double>("rate");
    seed_ = static_cast<uint64_t>(ctx.Attr<int64_t>("seed"));
    threshold_ = static_cast<uint32_t>(rate * double(1u << 24) + 0.5);
    const Shape& logical = ctx.LogicalDesc(argument).shape;
    const Shape& physical = ctx.Desc(argument).shape;
    const SbpParallel sbp = ctx.Sbp(argument);
    const ParallelContext& parallel = ctx.parallel_context();
    run_ = physical.elem_count();
    if (sbp.has_split_parallel() && parallel.parallel_num() > 1) {
      const int64_t axis = sbp.split_parallel().axis();
      int64_t inner = 1;
      for (int64_t a = axis + 1; a < logical.num_axes(); ++a) { inner *= logical.At(a); }
      for (int64_t a = 0; a < axis; ++a) { rows_ *= logical.At(a); }
      const Range part =
          BalancedPart(logical.At(axis), parallel.parallel_num(), parallel.parallel_id());
      run_ = part.size() * inner;
      logical_stride_ = logical.At(axis) * inner;
      offset_ = part.begin * inner;
    }
  }

  // The two 32-bit keys of iteration (piece) `piece_id`.
  void Keys(int64_t piece_id, uint32_t* key0, uint32_t* key1) const {
    const uint64_t key = SplitMix64(seed_ ^ SplitMix64(static_cast<uint64_t>(piece_id)));
    *key0 = static_cast<uint32_t>(key);
    *key1 = static_cast<uint32_t>(key >> 32);
  }
  uint32_t threshold() const { return threshold_; }
  int64_t rows() const { return rows_; }
  int64_t run() const { return run_; }
  int64_t logical_stride() const { return logical_stride_; }
  int64_t offset() const { return offset_; }

 private:
  uint64_t seed_ = 0;
  uint32_t threshold_ = 0;
  int64_t rows_ = 1, run_ = 0, logical_stride_ = 0, offset_ = 0;
};

template <typename T>
class DropoutKernel final : public Kernel {
 public:
  explicit DropoutKernel(const KernelInitContext& ctx)
      : mask_(ctx, "x"), scale_(static_cast<T>(1.0 / (1.0 - ctx.Attr<double>("rate")))) {}

  void Forward(KernelContext& ctx) override {
    uint32_t key0, key1;
    mask_.Keys(ctx.piece_id(), &key0, &key1);
    const T* x = ctx.Input("x").data<T>();
    T* y = ctx.Output("y").mut_data<T>();
    int8_t* mask = ctx.Output("mask").mut_data<int8_t>();
    const int64_t run = mask_.run(), stride = mask_.logical_stride(), offset = mask_.offset();
    const uint32_t threshold = mask_.threshold();
    const T scale = scale_;
    if (mask_.rows() == 1) {
      ParallelForElements(
          ctx, run, kElementwiseGrain, PerIsa([=](int64_t begin, int64_t end) ONEFLOW_PER_ISA_BODY {
            DropoutRun(x + begin, y + begin, mask + begin, end - begin,
                       static_cast<uint64_t>(offset + begin), key0, key1, threshold, scale);
          }));
      return;
    }
    ParallelForRows(ctx, mask_.rows(), run,
                    PerIsa([=](int64_t begin, int64_t end) ONEFLOW_PER_ISA_BODY {
                      for (int64_t r = begin; r < end; ++r) {
                        DropoutRun(x + r * run, y + r * run, mask + r * run, run,
                                   static_cast<uint64_t>(r * stride + offset), key0, key1,
                                   threshold, scale);
                      }
                    }));
  }

 private:
  MaskGenerator mask_;
  T scale_;
};

// random_mask_like's output is int8 whatever like's dtype; the kernel never reads like.
class RandomMaskLikeKernel final : public Kernel {
 public:
  explicit RandomMaskLikeKernel(const KernelInitContext& ctx) : mask_(ctx, "like") {}

  void Forward(KernelContext& ctx) override {
    uint32_t key0, key1;
    mask_.Keys(ctx.piece_id(), &key0, &key1);
    int8_t* mask = ctx.Output("out").mut_data<int8_t>();
    const int64_t run = mask_.run(), stride = mask_.logical_stride(), offset = mask_.offset();
    const uint32_t threshold = mask_.threshold();
    if (mask_.rows() == 1) {
      ParallelForElements(ctx, run, kElementwiseGrain,
                          PerIsa([=](int64_t begin, int64_t end) ONEFLOW_PER_ISA_BODY {
                            MaskRun(mask + begin, end - begin,
                                    static_cast<uint64_t>(offset + begin), key0, key1, threshold);
                          }));
      return;
    }
    ParallelForRows(ctx, mask_.rows(), run,
                    PerIsa([=](int64_t begin, int64_t end) ONEFLOW_PER_ISA_BODY {
                      for (int64_t r = begin; r < end; ++r) {
                        MaskRun(mask + r * run, run, static_cast<uint64_t>(r * stride + offset),
                                key0, key1, threshold);
                      }
                    }));
  }

 private:
  MaskGenerator mask_;
};

template <typename T>
class DropoutGradKernel final : public Kernel {
 public:
  explicit DropoutGradKernel(const KernelInitContext& ctx)
      : scale_(static_cast<T>(ctx.Attr<double>("scale"))) {}
  void Forward(KernelContext& ctx) override {
    const T* dy = ctx.Input("dy").data<T>();
    const int8_t* mask = ctx.Input("mask").data<int8_t>();
    T* dx = ctx.Output("dx").mut_data<T>();
    const T scale = scale_;
    ParallelForElements(ctx, ctx.Input("dy").elem_count(), kElementwiseGrain,
                        PerIsa([=](int64_t begin, int64_t end) ONEFLOW_PER_ISA_BODY {
                          for (int64_t i = begin; i < end; ++i) {
                            dx[i] = mask[i] ? dy[i] * scale : T(0);
                          }
                        }));
  }

 private:
  T scale_;
};

}  // namespace

REGISTER_CPU_FLOATING_KERNELS("dropout", DropoutKernel);
REGISTER_KERNEL("dropout_grad", "cpu", kFloat, DropoutGradKernel<float>);
REGISTER_KERNEL("dropout_grad", "cpu", kDouble, DropoutGradKernel<double>);
REGISTER_KERNEL("random_mask_like", "cpu", kInt8, RandomMaskLikeKernel);

}  // namespace oneflow
