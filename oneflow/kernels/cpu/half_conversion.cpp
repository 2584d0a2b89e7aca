#include "oneflow/kernels/cpu/half_conversion.h"

#if defined(__x86_64__) && defined(__GNUC__)
// GCC 12's avx512fintrin.h trips -Wmaybe-uninitialized on its own placeholder operand of
// _mm512_cvtph_ps / _mm512_cvtps_ph.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#define ONEFLOW_HALF_CONVERSION_X86 1
#endif

namespace oneflow {

namespace {

void HalfToFloatScalar(const _Float16* in, float* out, int64_t count) {
  for (int64_t i = 0; i < count; ++i) { out[i] = static_cast<float>(in[i]); }
}

void FloatToHalfScalar(const float* in, _Float16* out, int64_t count) {
  for (int64_t i = 0; i < count; ++i) { out[i] = static_cast<_Float16>(in[i]); }
}

#ifdef ONEFLOW_HALF_CONVERSION_X86

constexpr int kRound = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;

__attribute__((target("avx512f,f16c"))) void HalfToFloatAvx512(const _Float16* in, float* out,
                                                                int64_t count) {
  int64_t i = 0;
  for (; i + 16 <= count; i += 16) {
    const __m256i half = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i));
    _mm512_storeu_ps(out + i, _mm512_cvtph_ps(half));
  }
  for (; i < count; ++i) { out[i] = static_cast<float>(in[i]); }
}

__attribute__((target("avx512f,f16c"))) void FloatToHalfAvx512(const float* in, _Float16* out,
                                                                int64_t count) {
  int64_t i = 0;
  for (; i + 16 <= count; i += 16) {
    const __m256i half = _mm512_cvtps_ph(_mm512_loadu_ps(in + i), kRound);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), half);
  }
  for (; i < count; ++i) { out[i] = static_cast<_Float16>(in[i]); }
}

__attribute__((target("avx,f16c"))) void HalfToFloatF16c(const _Float16* in, float* out,
                                                          int64_t count) {
  int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m128i half = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(half));
  }
  for (; i < count; ++i) { out[i] = static_cast<float>(in[i]); }
}

__attribute__((target("avx,f16c"))) void FloatToHalfF16c(const float* in, _Float16* out,
                                                          int64_t count) {
  int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m128i half = _mm256_cvtps_ph(_mm256_loadu_ps(in + i), kRound);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), half);
  }
  for (; i < count; ++i) { out[i] = static_cast<_Float16>(in[i]); }
}

#endif  // ONEFLOW_HALF_CONVERSION_X86

using HalfToFloatFn = void (*)(const _Float16*, float*, int64_t);
using FloatToHalfFn = void (*)(const float*, _Float16*, int64_t);

struct Conversions {
  HalfToFloatFn to_float;
  FloatToHalfFn to_half;
};

Conversions ConversionsOf(HalfConversionIsa isa) {
  switch (isa) {
#ifdef ONEFLOW_HALF_CONVERSION_X86
    case HalfConversionIsa::kAvx512:
      return {HalfToFloatAvx512, FloatToHalfAvx512};
    case HalfConversionIsa::kF16c:
      return {HalfToFloatF16c, FloatToHalfF16c};
#endif
    default:
      return {HalfToFloatScalar, FloatToHalfScalar};
  }
}

const Conversions& Chosen() {
  // The CPU does not change while the process runs: chosen once.
  static const Conversions conversions = ConversionsOf(
      HalfConversionIsaSupported(HalfConversionIsa::kAvx512) ? HalfConversionIsa::kAvx512
      : HalfConversionIsaSupported(HalfConversionIsa::kF16c) ? HalfConversionIsa::kF16c
                                                             : HalfConversionIsa::kScalar);
  return conversions;
}

}  // namespace

bool HalfConversionIsaSupported(HalfConversionIsa isa) {
#ifdef ONEFLOW_HALF_CONVERSION_X86
  __builtin_cpu_init();
  switch (isa) {
    case HalfConversionIsa::kAvx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("f16c");
    case HalfConversionIsa::kF16c:
      return __builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c");
    case HalfConversionIsa::kScalar:
      return true;
  }
  return false;
#else
  return isa == HalfConversionIsa::kScalar;
#endif
}

void HalfToFloat(const _Float16* in, float* out, int64_t count) {
  Chosen().to_float(in, out, count);
}

void FloatToHalf(const float* in, _Float16* out, int64_t count) {
  Chosen().to_half(in, out, count);
}

void HalfToFloat(HalfConversionIsa isa, const _Float16* in, float* out, int64_t count) {
  ConversionsOf(isa).to_float(in, out, count);
}

void FloatToHalf(HalfConversionIsa isa, const float* in, _Float16* out, int64_t count) {
  ConversionsOf(isa).to_half(in, out, count);
}

}  // namespace oneflow
