// MergeAllLanes and MergeEachOf (vector_merge.h) against scalar loops over the same lanes: sums
// and maxima of 64-byte vectors of floats (16 lanes), doubles (8) and 32-byte vectors of floats
// (8), with distinct values in every lane so that a lane taken from the wrong row shows.

#include "oneflow/kernels/cpu/vector_merge.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

namespace oneflow {
namespace test {
namespace {

template <typename Vector>
void ExpectEachMerged() {
  using T = std::remove_reference_t<decltype(Vector{}[0])>;
  constexpr int kWidth = static_cast<int>(sizeof(Vector) / sizeof(T));
  Vector rows[kWidth];
  T values[kWidth][kWidth];
  for (int r = 0; r < kWidth; ++r) {
    for (int j = 0; j < kWidth; ++j) {
      // Exact in float: small integers; the maximum of each row sits in a different lane.
      values[r][j] = static_cast<T>(((r * 7 + j * 5) % (kWidth + 3)) + r * 100);
    }
    std::memcpy(&rows[r], values[r], sizeof(Vector));
  }
  Vector copy[kWidth];
  std::copy(rows, rows + kWidth, copy);
  const Vector sums = MergeEachOf(copy, [](Vector a, Vector b) { return a + b; });
  std::copy(rows, rows + kWidth, copy);
  const Vector maxima = MergeEachOf(copy, [](Vector a, Vector b) { return a > b ? a : b; });
  for (int r = 0; r < kWidth; ++r) {
    T sum = 0, maximum = values[r][0];
    for (int j = 0; j < kWidth; ++j) {
      sum += values[r][j];
      maximum = std::max(maximum, values[r][j]);
    }
    EXPECT_EQ(sums[r], sum) << "row " << r << " of " << kWidth;
    EXPECT_EQ(maxima[r], maximum) << "row " << r << " of " << kWidth;
    EXPECT_EQ(MergeAllLanes(rows[r], [](Vector a, Vector b) { return a + b; }), sum);
  }
}

TEST(VectorMerge, EachOfSixteenFloatVectors) {
  typedef float Vector __attribute__((vector_size(64)));
  ExpectEachMerged<Vector>();
}

TEST(VectorMerge, EachOfEightDoubleVectors) {
  typedef double Vector __attribute__((vector_size(64)));
  ExpectEachMerged<Vector>();
}

TEST(VectorMerge, EachOfEightFloatVectorsOf32Bytes) {
  typedef float Vector __attribute__((vector_size(32)));
  ExpectEachMerged<Vector>();
}

}  // namespace
}  // namespace test
}  // namespace oneflow
