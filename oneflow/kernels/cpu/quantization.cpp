// CPU quantization kernels (ops and formulas in oneflow/ops/quantization.cpp), float32 and
// float64. Rounding is to nearest, ties to even (std::nearbyint in the default rounding mode),
// as OneFlow's kernels and numpy.rint. A blob whose values are all zero (or all equal, for the
// affine scheme) gets scale 0 and passes fake_quantization unchanged.

#include <algorithm>
#include <cmath>
#include <string>

#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/cpu/parallel_for.h"

namespace oneflow {

namespace {

struct QuantizationAttrs {
  int64_t bit;
  bool affine, cambricon;

  explicit QuantizationAttrs(const KernelInitContext& ctx)
      : bit(ctx.Attr<int64_t>("quantization_bit")),
        affine(ctx.Attr<std::string>("quantization_scheme") == "affine"),
        cambricon(ctx.Attr<std::string>("quantization_formula") == "cambricon") {}

  // Google formulas: the largest integer of the scheme's range, 2^(bit-1) - 1 or 2^bit - 1.
  double Levels() const { return std::ldexp(1.0, affine ? bit : bit - 1) - 1.0; }
};

// scale and zero_point for values in [low, high] (for symmetric schemes high is max|x|).
template <typename T>
void ChooseParameters(const QuantizationAttrs& q, double low, double high, T* scale,
                      T* zero_point) {
  *zero_point = T(0);
  if (q.cambricon) {
    *scale = high > 0 ? static_cast<T>(std::floor(std::log2(high)) - double(q.bit - 2)) : T(0);
  } else if (!q.affine) {
    *scale = static_cast<T>(high / q.Levels());
  } else {
    *scale = static_cast<T>((high - low) / q.Levels());
    // Not rounded, as OneFlow 0.3's kernels.
    if (*scale != T(0)) { *zero_point = static_cast<T>(-low / double(*scale)); }
  }
}

template <typename T>
void MinMax(const T* x, int64_t count, double* low, double* high) {
  const auto [min, max] = std::minmax_element(x, x + count);
  *low = *min;
  *high = *max;
}

template <typename T>
class MinMaxObserverKernel final : public Kernel {
 public:
  explicit MinMaxObserverKernel(const KernelInitContext& ctx) : q_(ctx) {}

  void Forward(KernelContext& ctx) override {
    const Blob& in = ctx.Input("in");
    T* scale = ctx.Output("scale").mut_data<T>();
    T* zero_point = ctx.Output("zero_point").mut_data<T>();
    const int64_t channels = ctx.Output("scale").elem_count();
    const int64_t inner = in.elem_count() / channels;
    const T* x = in.data<T>();
    for (int64_t c = 0; c < channels; ++c) {
      double low = 0, high = 0;
      MinMax(x + c * inner, inner, &low, &high);
      if (!q_.affine || q_.cambricon) { high = std::max(std::fabs(low), std::fabs(high)); }
      ChooseParameters(q_, low, high, scale + c, zero_point + c);
    }
  }

 private:
  QuantizationAttrs q_;
};

template <typename T>
class MovingAverageMinMaxObserverKernel final : public Kernel {
 public:
  explicit MovingAverageMinMaxObserverKernel(const KernelInitContext& ctx)
      : q_(ctx),
        training_(ctx.Attr<bool>("training")),
        stop_update_after_iters_(ctx.Attr<int64_t>("stop_update_after_iters")),
        momentum_(ctx.Attr<double>("momentum")) {}

  void Forward(KernelContext& ctx) override {
    T* moving_max = ctx.MutableInput("moving_max").mut_data<T>();
    T* moving_min = ctx.MutableInput("moving_min").mut_data<T>();
    const int64_t step = ctx.Input("current_train_step").data<int64_t>()[0];
    const bool symmetric = !q_.affine || q_.cambricon;
    if (training_ && step <= stop_update_after_iters_) {
      const Blob& in = ctx.Input("in");
      double low = 0, high = 0;
      MinMax(in.data<T>(), in.elem_count(), &low, &high);
      if (symmetric) { high = std::max(std::fabs(low), std::fabs(high)); }
      // A moving value still 0 is unset: the first batch sets it.
      auto average = [&](T* moving, double value) {
        *moving = *moving == T(0) ? static_cast<T>(value)
                                  : static_cast<T>(*moving * momentum_ + value * (1 - momentum_));
      };
      average(moving_max, high);
      if (symmetric) {
        *moving_min = *moving_max;
      } else {
        average(moving_min, low);
      }
    }
    ChooseParameters(q_, double(*moving_min), double(*moving_max),
                     ctx.Output("scale").mut_data<T>(), ctx.Output("zero_point").mut_data<T>());
  }

 private:
  QuantizationAttrs q_;
  bool training_;
  int64_t stop_update_after_iters_;
  double momentum_;
};

template <typename T>
class FakeQuantizationKernel final : public Kernel {
 public:
  explicit FakeQuantizationKernel(const KernelInitContext& ctx) : q_(ctx) {}

  void Forward(KernelContext& ctx) override {
    const Blob& in = ctx.Input("in");
    const T* x = in.data<T>();
    const T* scales = ctx.Input("scale").data<T>();
    const T* zero_points = ctx.Input("zero_point").data<T>();
    T* y = ctx.Output("out").mut_data<T>();
    const int64_t channels = ctx.Input("scale").elem_count();
    const int64_t inner = in.elem_count() / channels;
    // Integer range, as OneFlow 0.3's kernels and tests: [-(2^(bit-1) - 1), 2^(bit-1) - 1]
    // signed (symmetric around 0), [0, 2^bit - 1] for affine.
    const T upper = static_cast<T>(q_.affine && !q_.cambricon ? std::ldexp(1.0, q_.bit) - 1
                                                              : std::ldexp(1.0, q_.bit - 1) - 1);
    const T lower = q_.affine && !q_.cambricon ? T(0) : -upper;
    for (int64_t c = 0; c < channels; ++c) {
      const T scale = q_.cambricon ? static_cast<T>(std::ldexp(1.0, int(scales[c]))) : scales[c];
      const T zero_point = q_.affine && !q_.cambricon ? zero_points[c] : T(0);
      const T* in_row = x + c * inner;
      T* out_row = y + c * inner;
      if (scale == T(0)) {
        std::copy(in_row, in_row + inner, out_row);
        continue;
      }
      ParallelForElements(ctx, inner, kElementwiseGrain, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          const T level = std::clamp(std::nearbyint(in_row[i] / scale + zero_point), lower, upper);
          out_row[i] = (level - zero_point) * scale;
        }
      });
    }
  }

 private:
  QuantizationAttrs q_;
};

}  // namespace

REGISTER_KERNEL("min_max_observer", "cpu", kFloat, MinMaxObserverKernel<float>);
REGISTER_KERNEL("min_max_observer", "cpu", kDouble, MinMaxObserverKernel<double>);
REGISTER_KERNEL("moving_average_min_max_observer", "cpu", kFloat,
                MovingAverageMinMaxObserverKernel<float>);
REGISTER_KERNEL("moving_average_min_max_observer", "cpu", kDouble,
                MovingAverageMinMaxObserverKernel<double>);
REGISTER_KERNEL("fake_quantization", "cpu", kFloat, FakeQuantizationKernel<float>);
REGISTER_KERNEL("fake_quantization", "cpu", kDouble, FakeQuantizationKernel<double>);

}  // namespace oneflow
