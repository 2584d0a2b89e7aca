// CPU random_uniform, random_normal, bernoulli and generate_random_batch_permutation_indices
// with a counter-based generator: the 64 random
// bits of element i in iteration t are SplitMix64's output for the state
// key(seed, t) + (i + 1) * gamma, where i is the element's index in the *logical* blob. No state
// is carried between elements, so chunks run on any thread, any split of the blob reproduces
// the single-device values, and iteration t + 1 draws new numbers (t is the piece id, so the
// kernels built for each run's shapes of a dynamic input continue one sequence). SplitMix64's finalizer passes BigCrush as a stream generator.

#include <cmath>
#include <string>
#include <utility>

#include "oneflow/common/data_type.h"
#include "oneflow/common/error.h"
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/cpu/parallel_for.h"
#include "oneflow/sbp/tensor_slice.h"

namespace oneflow {

namespace {

constexpr uint64_t kGamma = 0x9E3779B97F4A7C15ull;

inline uint64_t Finalize(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

inline uint64_t RandomBits(uint64_t key, int64_t index) {
  return Finalize(key + (static_cast<uint64_t>(index) + 1) * kGamma);
}

// Uniform in [0, 1) with the type's full mantissa.
template <typename T>
inline T Uniform01(uint64_t bits);
template <>
inline float Uniform01<float>(uint64_t bits) {
  return static_cast<float>(bits >> 40) * (1.0f / 16777216.0f);
}
template <>
inline double Uniform01<double>(uint64_t bits) {
  return static_cast<double>(bits >> 11) * (1.0 / 9007199254740992.0);
}

// Where this device's part of the output lies in the logical blob: rows of `inner` contiguous
// elements; physical row r is logical row LogicalRow(r).
class LogicalRows {
 public:
  LogicalRows(const KernelInitContext& ctx, const std::string& argument) {
    const Shape& physical = ctx.Desc(argument).shape;
    const Shape& logical = ctx.LogicalDesc(argument).shape;
    SbpParallel sbp = ctx.Sbp(argument);
    int64_t axis = 0;
    if (sbp.has_split_parallel() && physical != logical) {
      axis = sbp.split_parallel().axis();
      begin_ = SliceOfPart(logical, sbp, ctx.parallel_context().parallel_id(),
                           ctx.parallel_context().parallel_num())
                   .begin[axis];
    }
    if (physical.num_axes() == 0) {
      rows_ = 1;
      return;
    }
    inner_ = physical.Count(axis + 1, physical.num_axes());
    physical_dim_ = physical.At(axis);
    logical_dim_ = logical.At(axis);
    rows_ = physical.Count(0, axis + 1);
  }
  int64_t rows() const { return rows_; }
  int64_t inner() const { return inner_; }
  int64_t LogicalRow(int64_t row) const {
    return (row / physical_dim_) * logical_dim_ + row % physical_dim_ + begin_;
  }

 private:
  int64_t rows_ = 1, inner_ = 1, physical_dim_ = 1, logical_dim_ = 1, begin_ = 0;
};

// Runs fn(key, logical index, physical index) for every element, split over the threads.
template <typename Fn>
void ForEachElement(KernelContext& ctx, const LogicalRows& rows, uint64_t key, const Fn& fn) {
  const int64_t inner = rows.inner();
  ParallelForRows(ctx, rows.rows(), inner, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t logical = rows.LogicalRow(row) * inner;
      const int64_t physical = row * inner;
      for (int64_t i = 0; i < inner; ++i) { fn(RandomBits(key, logical + i), physical + i); }
    }
  });
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

template <typename T>
class RandomUniformKernel final : public Kernel {
 public:
  explicit RandomUniformKernel(const KernelInitContext& ctx)
      : rows_(ctx, "out"),
        keys_(ctx),
        low_(static_cast<T>(ctx.Attr<double>("low"))),
        range_(static_cast<T>(ctx.Attr<double>("high") - ctx.Attr<double>("low"))) {}

  void Forward(KernelContext& ctx) override {
    T* out = ctx.Output("out").mut_data<T>();
    const T low = low_, range = range_;
    ForEachElement(ctx, rows_, keys_.For(ctx.piece_id()), [=](uint64_t bits, int64_t i) {
      out[i] = low + range * Uniform01<T>(bits);
    });
  }

 private:
  LogicalRows rows_;
  IterationKeys keys_;
  T low_, range_;
};

// Box-Muller on the two 32-bit halves of an element's bits.
template <typename T>
class RandomNormalKernel final : public Kernel {
 public:
  explicit RandomNormalKernel(const KernelInitContext& ctx)
      : rows_(ctx, "out"),
        keys_(ctx),
        mean_(ctx.Attr<double>("mean")),
        stddev_(ctx.Attr<double>("stddev")) {}

  void Forward(KernelContext& ctx) override {
    T* out = ctx.Output("out").mut_data<T>();
    const double mean = mean_, stddev = stddev_;
    ForEachElement(ctx, rows_, keys_.For(ctx.piece_id()), [=](uint64_t bits, int64_t i) {
      const double u1 = (static_cast<double>(bits >> 32) + 1.0) * (1.0 / 4294967296.0);  // (0, 1]
      const double u2 = static_cast<double>(bits & 0xFFFFFFFFull) * (1.0 / 4294967296.0);
      const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
      out[i] = static_cast<T>(mean + stddev * z);
    });
  }

 private:
  LogicalRows rows_;
  IterationKeys keys_;
  double mean_, stddev_;
};

template <typename T>
class BernoulliKernel final : public Kernel {
 public:
  explicit BernoulliKernel(const KernelInitContext& ctx)
      : rows_(ctx, "out"), keys_(ctx), op_name_(ctx.conf().name()) {}

  void Forward(KernelContext& ctx) override {
    const Blob& x = ctx.Input("x");
    const T* p = x.data<T>();
    // A probability outside [0, 1] (or NaN) is an error, as in PyTorch, not a silent 0 or 1.
    for (int64_t i = 0; i < x.elem_count(); ++i) {
      if (!(p[i] >= T(0) && p[i] <= T(1))) {
        throw Error(ErrorKind::kValue)
            << "bernoulli (op '" << op_name_ << "'): probability x[" << i << "] (flat index on "
            << "this device) = " << static_cast<double>(p[i]) << " is not in [0, 1]";
      }
    }
    Blob& out = ctx.Output("out");
    const uint64_t key = keys_.For(ctx.piece_id());
    SwitchDataType(out.data_type(), [&]<typename Out>() {
      Out* target = out.mut_data<Out>();
      ForEachElement(ctx, rows_, key, [=](uint64_t bits, int64_t i) {
        target[i] = static_cast<Out>(Uniform01<double>(bits) < static_cast<double>(p[i]) ? 1 : 0);
      });
    });
  }

 private:
  LogicalRows rows_;
  IterationKeys keys_;
  std::string op_name_;
};

// A Fisher-Yates shuffle of 0 .. n - 1 drawing step i's bits as element i of the iteration's
// stream; n is x's logical batch size, so every device computes the same permutation.
class BatchPermutationKernel final : public Kernel {
 public:
  explicit BatchPermutationKernel(const KernelInitContext& ctx)
      : keys_(ctx), count_(ctx.LogicalDesc("x").shape.At(0)) {}

  void Forward(KernelContext& ctx) override {
    int32_t* y = ctx.Output("y").mut_data<int32_t>();
    const uint64_t key = keys_.For(ctx.piece_id());
    for (int64_t i = 0; i < count_; ++i) { y[i] = static_cast<int32_t>(i); }
    for (int64_t i = count_ - 1; i > 0; --i) {
      // Uniform in [0, i] by a 64x64 -> 128-bit product (Lemire), without modulo bias to
      // speak of for any batch size.
      const unsigned __int128 wide =
          static_cast<unsigned __int128>(RandomBits(key, i)) * static_cast<uint64_t>(i + 1);
      const int64_t j = static_cast<int64_t>(wide >> 64);
      std::swap(y[i], y[j]);
    }
  }

 private:
  IterationKeys keys_;
  int64_t count_;
};

}  // namespace

REGISTER_CPU_FLOATING_KERNELS("random_uniform", RandomUniformKernel);
REGISTER_CPU_FLOATING_KERNELS("random_normal", RandomNormalKernel);
REGISTER_CPU_FLOATING_KERNELS("bernoulli", BernoulliKernel);
REGISTER_KERNEL("generate_random_batch_permutation_indices", "cpu", kInt32, BatchPermutationKernel);

}  // namespace oneflow
