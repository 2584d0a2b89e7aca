#pragma once
// float16 <-> float32 conversion of contiguous ranges, vectorized: AVX-512F (16 per instruction)
// or F16C (8), chosen once from the CPU the process runs on; a scalar loop elsewhere. GCC 12 does
// not vectorize a plain loop of _Float16 conversions (it emits one vcvtph2ps per element, about
// 3x slower). Rounding to float16 is to nearest, ties to even, as static_cast<_Float16>.

#include <cstdint>

namespace oneflow {

void HalfToFloat(const _Float16* in, float* out, int64_t count);
void FloatToHalf(const float* in, _Float16* out, int64_t count);

// The implementations by instruction set, for tests: each supported one must agree.
enum class HalfConversionIsa { kScalar, kF16c, kAvx512 };
bool HalfConversionIsaSupported(HalfConversionIsa isa);
void HalfToFloat(HalfConversionIsa isa, const _Float16* in, float* out, int64_t count);
void FloatToHalf(HalfConversionIsa isa, const float* in, _Float16* out, int64_t count);

}  // namespace oneflow
