#pragma once
// Elementwise math written so that a loop calling it vectorizes: branch-free float32 exp, log,
// erfc and their relatives (selects instead of branches, no calls into libm), float64 Exp and
// Log of the same kind, and the other float64 names forwarding to libm for full accuracy.
// Kernels call these from loops compiled once per vector ISA (kernels/cpu/cpu_dispatch.h).
//
// Accuracy (float32, measured against float64 libm in tests/cpp/kernels/fast_math_test.cpp):
// Exp and Log within 2 ulp; Erfc within 4e-7 + 3 z^2 epsilon relative (Numerical Recipes'
// Chebyshev fit, 1.2e-7 in exact arithmetic; z^2 rounds to float before the exponential); Erf
// exact to ~2e-7 absolute and relative near 0 (Taylor series below |x| < 0.5).

#include <bit>
#include <cmath>
#include <cstdint>

namespace oneflow {
namespace fast_math {

// e^x: n = round(x / ln 2), r = x - n ln 2 in [-ln2/2, ln2/2], e^r by Cephes' degree-7
// polynomial, then 2^n applied as two factors so that overflow gives inf and underflow
// degrades gradually into denormals. NaN stays NaN.
inline float Exp(float x) {
  const float clamped = x < -104.0f ? -104.0f : (x > 89.0f ? 89.0f : x);
  const float rounding = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  const float n = (clamped * 1.44269504088896341f + rounding) - rounding;
  float r = clamped - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float e_r = p * r * r + r + 1.0f;
  const int32_t k = static_cast<int32_t>(n);
  const int32_t half = k >> 1;
  const float scale_1 = std::bit_cast<float>((half + 127) << 23);
  const float scale_2 = std::bit_cast<float>((k - half + 127) << 23);
  const float result = e_r * scale_1 * scale_2;
  return x != x ? x : result;
}
// ln 2 split for float64 range reduction: kLn2Hi has 32 significant bits, so n * kLn2Hi is
// exact for every exponent n; kLn2Lo = ln 2 - kLn2Hi.
constexpr double kLn2Hi = 6.93147180369123816490e-01;
constexpr double kLn2Lo = 1.90821492927058770002e-10;

// e^x in float64, the same scheme: |r| <= ln2/2 and e^r by its Taylor series to r^13 (the
// next term is below 1e-17 of the result), ln 2 split in two so that n ln2_hi is exact. The
// integer n comes from the rounding constant's low bits and both scale factors use only 64-bit
// adds and logical shifts, which AVX2 has. Within 2 ulp of libm; overflow gives inf, underflow
// goes through denormals to 0 (below about -745).
inline double Exp(double x) {
  const double clamped = x < -746.0 ? -746.0 : (x > 710.0 ? 710.0 : x);
  const double rounding = 6755399441055744.0;  // 1.5 * 2^52: adding it rounds to an integer
  const double shifted = clamped * 1.4426950408889634074 + rounding;
  const double n = shifted - rounding;
  // k + 2048 in [972, 3072]: the low bits of `shifted`, offset to stay non-negative.
  const int64_t k_biased = std::bit_cast<int64_t>(shifted) - std::bit_cast<int64_t>(rounding) +
                           2048;
  double r = clamped - n * kLn2Hi;
  r = r - n * kLn2Lo;
  double p = 1.0 / 6227020800.0;                        // 1/13!
  p = p * r + 1.0 / 479001600.0;
  p = p * r + 1.0 / 39916800.0;
  p = p * r + 1.0 / 3628800.0;
  p = p * r + 1.0 / 362880.0;
  p = p * r + 1.0 / 40320.0;
  p = p * r + 1.0 / 5040.0;
  p = p * r + 1.0 / 720.0;
  p = p * r + 1.0 / 120.0;
  p = p * r + 1.0 / 24.0;
  p = p * r + 1.0 / 6.0;
  p = p * r + 0.5;
  const double e_r = p * r * r + r + 1.0;
  // 2^k as 2^half * 2^(k - half) with half = floor(k / 2); exponents biased by 1023.
  const int64_t half_biased = k_biased >> 1;  // half + 1024
  const double scale_1 = std::bit_cast<double>((half_biased - 1) << 52);
  const double scale_2 = std::bit_cast<double>((k_biased - half_biased - 1) << 52);
  const double result = e_r * scale_1 * scale_2;
  return x != x ? x : result;
}

// e^x for x <= 88 (the caller bounds it: erfc's e^(p - z^2) below), cheaper than Exp: no upper
// clamp and one scale factor, so results below 2^-126 lose precision gradually only down to
// x = -88, where they become 0 (Exp keeps denormals down to -104). NaN propagates through the
// arithmetic. 20% of a gelu (measured on AVX-512 and AVX2).
inline float ExpBelow88(float x) {
  // At the clamp n = -127, whose scale bits are 0: the result is exactly 0.
  const float clamped = x < -88.0f ? -88.0f : x;
  const float rounding = 12582912.0f;
  const float n = (clamped * 1.44269504088896341f + rounding) - rounding;
  float r = clamped - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float e_r = p * r * r + r + 1.0f;
  return e_r * std::bit_cast<float>((static_cast<int32_t>(n) + 127) << 23);
}

// log(x): x = 2^e * m with m in [sqrt(1/2), sqrt(2)), log(m) = log1p(m - 1) by Cephes' degree-9
// polynomial. log(0) = -inf, log(negative) = NaN, log(inf) = inf; denormals are rescaled first.
inline float Log(float x) {
  const bool denormal = x < 1.17549435e-38f;
  const float scaled = denormal ? x * 8388608.0f : x;  // * 2^23
  const int32_t bits = std::bit_cast<int32_t>(scaled);
  int32_t e = ((bits >> 23) & 0xff) - 127 - (denormal ? 23 : 0);
  float m = std::bit_cast<float>((bits & 0x007fffff) | 0x3f800000);  // [1, 2)
  const bool high = m > 1.41421356f;
  m = high ? m * 0.5f : m;
  e = high ? e + 1 : e;
  const float f = m - 1.0f;
  const float z = f * f;
  float p = 7.0376836292e-2f;
  p = p * f - 1.1514610310e-1f;
  p = p * f + 1.1676998740e-1f;
  p = p * f - 1.2420140846e-1f;
  p = p * f + 1.4249322787e-1f;
  p = p * f - 1.6668057665e-1f;
  p = p * f + 2.0000714765e-1f;
  p = p * f - 2.4999993993e-1f;
  p = p * f + 3.3333331174e-1f;
  const float fe = static_cast<float>(e);
  float y = p * f * z + fe * -2.12194440e-4f - 0.5f * z;
  const float result = f + y + fe * 0.693359375f;
  const float infinity = __builtin_inff();
  return x > 0.0f ? (x == infinity ? infinity : result)
                  : (x == 0.0f ? -infinity : __builtin_nanf(""));
}
// log(x) in float64: x = 2^e * m with m in [sqrt(1/2), sqrt(2)), f = m - 1 (exact),
// s = f / (2 + f) and log(m) = 2 atanh(s) = 2 (s + s^3/3 + ... + s^23/23), |s| < 0.172 (the
// next term is below 1e-17 of the result). The exponent becomes a double through the 2^52
// constant's bits rather than an int64 conversion (which AVX2 lacks). Within 2 ulp of long
// double libm; log(0) = -inf, log(negative) = NaN, log(inf) = inf; denormals are rescaled.
inline double Log(double x) {
  const bool denormal = x < 2.2250738585072014e-308;  // (also 0 and negatives: fixed below)
  const double scaled = denormal ? x * 18014398509481984.0 : x;  // 2^54
  const int64_t bits = std::bit_cast<int64_t>(scaled);
  const int64_t exponent_bits = (bits >> 52) & 0x7ff;
  double m = std::bit_cast<double>((bits & 0x000fffffffffffffLL) | 0x3ff0000000000000LL);
  const bool above = m > 1.4142135623730951;
  m = above ? m * 0.5 : m;
  const double two_52 = 4503599627370496.0;
  const double e = (std::bit_cast<double>(exponent_bits | 0x4330000000000000LL) - two_52) -
                   (denormal ? 1077.0 : 1023.0) + (above ? 1.0 : 0.0);
  const double f = m - 1.0;
  const double s = f / (2.0 + f);
  const double z = s * s;
  double p = 1.0 / 23.0;
  p = p * z + 1.0 / 21.0;
  p = p * z + 1.0 / 19.0;
  p = p * z + 1.0 / 17.0;
  p = p * z + 1.0 / 15.0;
  p = p * z + 1.0 / 13.0;
  p = p * z + 1.0 / 11.0;
  p = p * z + 1.0 / 9.0;
  p = p * z + 1.0 / 7.0;
  p = p * z + 1.0 / 5.0;
  p = p * z + 1.0 / 3.0;
  const double log_m = 2.0 * s + 2.0 * s * z * p;
  const double result = e * kLn2Hi + (log_m + e * kLn2Lo);
  const double special = x == 0.0 ? -__builtin_inf() : (x < 0.0 ? __builtin_nan("") : x);
  return (x > 0.0 && x < __builtin_inf()) ? result : special;
}

// log(1 + u) for u >= 0 (used with u = e^-|x|): Kahan's correction makes log(w) / (w - 1) * u
// accurate even when u is far below float epsilon.
inline float Log1pNonNegative(float u) {
  const float w = 1.0f + u;
  const float denominator = w - 1.0f;
  return denominator == 0.0f ? u : Log(w) * (u / denominator);
}
inline double Log1pNonNegative(double u) { return std::log1p(u); }

// erfc(z) for z >= 0, relatively accurate into the tail (Numerical Recipes' erfcc).
inline float ErfcNonNegative(float z) {
  const float t = 1.0f / (1.0f + 0.5f * z);
  float p = 0.17087277f;
  p = p * t - 0.82215223f;
  p = p * t + 1.48851587f;
  p = p * t - 1.13520398f;
  p = p * t + 0.27886807f;
  p = p * t - 0.18628806f;
  p = p * t + 0.09678418f;
  p = p * t + 0.37409196f;
  p = p * t + 1.00002368f;
  p = p * t - 1.26551223f;
  return t * ExpBelow88(p - z * z);  // the argument is at most 3e-8 for z >= 0
}

inline float Erfc(float x) {
  const float tail = ErfcNonNegative(x < 0.0f ? -x : x);
  return x < 0.0f ? 2.0f - tail : tail;
}
inline double Erfc(double x) { return std::erfc(x); }

// erf: Taylor series near 0 (no cancellation), 1 - erfc elsewhere.
inline float Erf(float x) {
  const float z = x * x;
  float series = -1.0f / 1320.0f;  // 2/sqrt(pi) * sum (-1)^n x^(2n+1) / (n! (2n+1))
  series = series * z + 1.0f / 216.0f;
  series = series * z - 1.0f / 42.0f;
  series = series * z + 1.0f / 10.0f;
  series = series * z - 1.0f / 3.0f;
  series = (series * z + 1.0f) * x * 1.12837916709551257f;
  const float magnitude = 1.0f - ErfcNonNegative(x < 0.0f ? -x : x);
  const float far = x < 0.0f ? -magnitude : magnitude;
  return z < 0.25f ? series : far;
}
inline double Erf(double x) { return std::erf(x); }

// 1 / (1 + e^-x), saturating to 0 and 1 without overflow.
template <typename T>
inline T Sigmoid(T x) {
  return T(1) / (T(1) + Exp(-x));
}

// log(1 + e^x) = max(x, 0) + log1p(e^-|x|).
template <typename T>
inline T Softplus(T x) {
  const T magnitude = x < T(0) ? -x : x;
  return (x > T(0) ? x : T(0)) + Log1pNonNegative(Exp(-magnitude));
}

// x * Phi(x) with Phi the standard normal CDF, as 0.5 x erfc(-x / sqrt 2): no cancellation for
// negative x, where Phi(x) is tiny.
inline float Gelu(float x) {
  const float z = x * -0.70710678118654752f;
  const float tail = ErfcNonNegative(z < 0.0f ? -z : z);
  return 0.5f * x * (z < 0.0f ? 2.0f - tail : tail);
}
inline double Gelu(double x) { return 0.5 * x * std::erfc(x * -0.70710678118654752); }

}  // namespace fast_math
}  // namespace oneflow
