// CPU quantization kernels (ops in oneflow/ops/quantization.cpp, formulas shared with the GPU
// kernels in kernels/quantization_formulas.h), float32 and float64. A blob whose values are all
// zero (or all equal, for the affine scheme) gets scale 0 and passes fake_quantization unchanged.

#include <algorithm>
#include <cmath>
#include <string>

#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/cpu/parallel_for.h"
#include "oneflow/kernels/quantization_formulas.h"

namespace oneflow {

namespace {

template <typename T>
void MinMax(const T* x, int64_t count, double* low, double* high) {
  const auto [min, max] = std::minmax_element(x, x + count);
  *low = *min;
  *high = *max;
}

template <typename T>
class MinMaxObserverKernel final : public Kernel {
 public:
  explicit MinMaxObserverKernel(const KernelInitContext& ctx)
      : q_(QuantizationScheme::Of(ctx)) {}

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
      ChooseQuantizationParameters(q_, low, ObservedHigh(q_, low, high), scale + c,
                                   zero_point + c);
    }
  }

 private:
  QuantizationScheme q_;
};

template <typename T>
class MovingAverageMinMaxObserverKernel final : public Kernel {
 public:
  explicit MovingAverageMinMaxObserverKernel(const KernelInitContext& ctx)
      : q_(QuantizationScheme::Of(ctx)),
        training_(ctx.Attr<bool>("training")),
        stop_update_after_iters_(ctx.Attr<int64_t>("stop_update_after_iters")),
        momentum_(ctx.Attr<double>("momentum")) {}

  void Forward(KernelContext& ctx) override {
    T* moving_max = ctx.MutableInput("moving_max").mut_data<T>();
    T* moving_min = ctx.MutableInput("moving_min").mut_data<T>();
    const int64_t step = ctx.Input("current_train_step").data<int64_t>()[0];
    if (training_ && step <= stop_update_after_iters_) {
      const Blob& in = ctx.Input("in");
      double low = 0, high = 0;
      MinMax(in.data<T>(), in.elem_count(), &low, &high);
      UpdateMovingRange(q_, momentum_, low, high, moving_max, moving_min);
    }
    ChooseQuantizationParameters(q_, double(*moving_min), double(*moving_max),
                                 ctx.Output("scale").mut_data<T>(),
                                 ctx.Output("zero_point").mut_data<T>());
  }

 private:
  QuantizationScheme q_;
  bool training_;
  int64_t stop_update_after_iters_;
  double momentum_;
};

template <typename T>
class FakeQuantizationKernel final : public Kernel {
 public:
  explicit FakeQuantizationKernel(const KernelInitContext& ctx)
      : q_(QuantizationScheme::Of(ctx)) {}

  void Forward(KernelContext& ctx) override {
    const Blob& in = ctx.Input("in");
    const T* x = in.data<T>();
    const T* scales = ctx.Input("scale").data<T>();
    const T* zero_points = ctx.Input("zero_point").data<T>();
    T* y = ctx.Output("out").mut_data<T>();
    const int64_t channels = ctx.Input("scale").elem_count();
    const int64_t inner = in.elem_count() / channels;
    for (int64_t c = 0; c < channels; ++c) {
      const FakeQuantizer<T> quantize(q_, scales[c], zero_points[c]);
      const T* in_row = x + c * inner;
      T* out_row = y + c * inner;
      if (quantize.PassesThrough()) {
        std::copy(in_row, in_row + inner, out_row);
        continue;
      }
      ParallelForElements(ctx, inner, kElementwiseGrain, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) { out_row[i] = quantize(in_row[i]); }
      });
    }
  }

 private:
  QuantizationScheme q_;
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
