#pragma once
// OneFlow 0.3's quantization formulas (ops/quantization.cpp), written once for the CPU kernels
// (cpu/quantization.cpp) and the GPU ones (cuda/quantization.cu), so that both compute the same
// numbers. Rounding is to nearest, ties to even (rint in the default rounding mode, as OneFlow's
// kernels and numpy.rint).

#include <cmath>
#include <cstdint>
#include <string>

#include "oneflow/framework/kernel_registry.h"

#ifdef __CUDACC__
#define OF_QUANTIZATION_FUNC __host__ __device__ __forceinline__
#else
#define OF_QUANTIZATION_FUNC inline
#endif

namespace oneflow {

struct QuantizationScheme {
  int bit = 8;
  bool affine = false;     // quantization_scheme "affine" (else "symmetric")
  bool cambricon = false;  // quantization_formula "cambricon" (else "google")

  // From the op's attributes (quantization_bit, quantization_scheme, quantization_formula).
  static QuantizationScheme Of(const KernelInitContext& ctx) {
    QuantizationScheme q;
    q.bit = static_cast<int>(ctx.Attr<int64_t>("quantization_bit"));
    q.affine = ctx.Attr<std::string>("quantization_scheme") == "affine";
    q.cambricon = ctx.Attr<std::string>("quantization_formula") == "cambricon";
    return q;
  }

  // The observed range is symmetric (max |x|) unless the scheme is affine with Google's formula.
  OF_QUANTIZATION_FUNC bool Symmetric() const { return !affine || cambricon; }
  OF_QUANTIZATION_FUNC bool AffineLevels() const { return affine && !cambricon; }
  // The largest integer level: 2^bit - 1 (affine, Google) or 2^(bit-1) - 1; the smallest is 0 or
  // its negative (OneFlow 0.3's kernels and tests: signed levels are symmetric around 0).
  OF_QUANTIZATION_FUNC double UpperLevel() const {
    return ldexp(1.0, AffineLevels() ? bit : bit - 1) - 1.0;
  }
};

// The scale and zero point of values in [low, high] (for symmetric schemes high is max |x|).
// cambricon stores the exponent of a power-of-two scale; the affine zero point is not rounded,
// as in OneFlow 0.3. A range of zero width gives scale 0 (fake quantization then passes x).
template <typename T>
OF_QUANTIZATION_FUNC void ChooseQuantizationParameters(const QuantizationScheme& q, double low,
                                                       double high, T* scale, T* zero_point) {
  *zero_point = T(0);
  if (q.cambricon) {
    *scale = high > 0 ? static_cast<T>(floor(log2(high)) - double(q.bit - 2)) : T(0);
  } else if (!q.affine) {
    *scale = static_cast<T>(high / q.UpperLevel());
  } else {
    *scale = static_cast<T>((high - low) / q.UpperLevel());
    if (*scale != T(0)) { *zero_point = static_cast<T>(-low / double(*scale)); }
  }
}

// The high end of an observed range [low, high]: max |x| for the symmetric schemes.
OF_QUANTIZATION_FUNC double ObservedHigh(const QuantizationScheme& q, double low, double high) {
  if (!q.Symmetric()) { return high; }
  const double a = fabs(low), b = fabs(high);
  return a < b ? b : a;
}

// One moving value updated with a batch's value: moving * momentum + value * (1 - momentum),
// except that a moving value still 0 is unset and the batch sets it.
template <typename T>
OF_QUANTIZATION_FUNC T MovingAverage(T moving, double value, double momentum) {
  return moving == T(0) ? static_cast<T>(value)
                        : static_cast<T>(moving * momentum + value * (1 - momentum));
}

// The moving-average observer's update with a batch whose values span [low, high]; symmetric
// schemes average max |x| and keep moving_min equal to moving_max.
template <typename T>
OF_QUANTIZATION_FUNC void UpdateMovingRange(const QuantizationScheme& q, double momentum,
                                            double low, double high, T* moving_max,
                                            T* moving_min) {
  *moving_max = MovingAverage(*moving_max, ObservedHigh(q, low, high), momentum);
  *moving_min = q.Symmetric() ? *moving_max : MovingAverage(*moving_min, low, momentum);
}

// x rounded to its channel's quantization level and back, from the stored scale and zero point.
template <typename T>
struct FakeQuantizer {
  T scale, zero_point, lower, upper;

  OF_QUANTIZATION_FUNC FakeQuantizer(const QuantizationScheme& q, T stored_scale,
                                     T stored_zero_point)
      : scale(q.cambricon ? static_cast<T>(ldexp(1.0, static_cast<int>(stored_scale)))
                          : stored_scale),
        zero_point(q.AffineLevels() ? stored_zero_point : T(0)),
        lower(q.AffineLevels() ? T(0) : static_cast<T>(-q.UpperLevel())),
        upper(static_cast<T>(q.UpperLevel())) {}

  OF_QUANTIZATION_FUNC bool PassesThrough() const { return scale == T(0); }

  // NaN stays NaN (the comparisons are false), as std::clamp.
  OF_QUANTIZATION_FUNC T operator()(T x) const {
#ifdef __CUDA_ARCH__
    T level = rint(x / scale + zero_point);
#else
    T level = std::rint(x / scale + zero_point);
#endif
    level = level < lower ? lower : (level > upper ? upper : level);
    return (level - zero_point) * scale;
  }
};

}  // namespace oneflow
