#pragma once
// Merging the lanes of one GCC vector (vector_size) into a scalar by constant shuffles: log2(lanes)
// steps that each ISA clone compiles to its shuffle instructions. GCC compiles the same halving
// over an array, and OpenMP's simd reductions, to scalar code through the stack (one dependent
// add per lane).

#include <utility>

namespace oneflow {

// `merge` over the lanes of one vector: each lane merged with the lane Half away (a constant
// shuffle), halving until lane 0 holds the whole merge.
template <int Half, typename Vector, typename Merge, int... Lane>
__attribute__((always_inline)) inline auto MergeWithin(Vector merged, Merge merge,
                                                        std::integer_sequence<int, Lane...> lanes) {
  using Index = decltype(merged != merged);
  merged = merge(merged, __builtin_shuffle(merged, Index{(Lane ^ Half)...}));
  if constexpr (Half > 1) {
    return MergeWithin<Half / 2>(merged, merge, lanes);
  } else {
    return merged[0];
  }
}

// `merge` (associative, commutative; takes and returns vectors) over all lanes of `vector`.
template <typename Vector, typename Merge>
__attribute__((always_inline)) inline auto MergeAllLanes(Vector vector, Merge merge) {
  constexpr int kWidth = static_cast<int>(sizeof(Vector) / sizeof(vector[0]));
  return MergeWithin<kWidth / 2>(vector, merge, std::make_integer_sequence<int, kWidth>());
}

// FoldPair: two vectors whose lanes hold rows in segments of Segment lanes (rows of a, then of
// b) folded into one whose rows have segments of Segment / 2: each segment's low half merged
// with its high half. FoldIndex is the source lane (a: 0..Width-1, b: Width..) of lane j of the
// low halves (kHigh false) or the high halves.
template <int Width, int Segment, bool kHigh>
constexpr int FoldIndex(int j) {
  const int half = Segment / 2;
  const int segment = j / half;
  const int rows_per_vector = Width / Segment;
  const int source = segment < rows_per_vector ? 0 : Width;
  return source + (segment % rows_per_vector) * Segment + j % half + (kHigh ? half : 0);
}

template <int Segment, typename Vector, typename Merge, int... Lane>
__attribute__((always_inline)) inline Vector FoldPair(Vector a, Vector b, Merge merge,
                                                       std::integer_sequence<int, Lane...>) {
  using Index = decltype(a != a);
  constexpr int kWidth = sizeof...(Lane);
  return merge(__builtin_shuffle(a, b, Index{FoldIndex<kWidth, Segment, false>(Lane)...}),
               __builtin_shuffle(a, b, Index{FoldIndex<kWidth, Segment, true>(Lane)...}));
}

template <int Segment, typename Vector, typename Merge>
__attribute__((always_inline)) inline Vector FoldLevels(Vector* vectors, Merge merge) {
  constexpr int kWidth = static_cast<int>(sizeof(Vector) / sizeof(vectors[0][0]));
  for (int i = 0; i < Segment / 2; ++i) {
    vectors[i] = FoldPair<Segment>(vectors[2 * i], vectors[2 * i + 1], merge,
                                   std::make_integer_sequence<int, kWidth>());
  }
  if constexpr (Segment > 2) {
    return FoldLevels<Segment / 2>(vectors, merge);
  } else {
    return vectors[0];
  }
}

// `merge` over the lanes of each of as many vectors as a vector has lanes: lane r of the result
// is the merge of vectors[r]'s lanes. log2(lanes) levels of FoldPair, 2 shuffles and a merge per
// pair: for 16 rows 15 merges instead of 16 MergeAllLanes' 64, and no chain of dependent steps
// per row. Overwrites `vectors`.
template <typename Vector, typename Merge>
__attribute__((always_inline)) inline Vector MergeEachOf(Vector* vectors, Merge merge) {
  constexpr int kWidth = static_cast<int>(sizeof(Vector) / sizeof(vectors[0][0]));
  return FoldLevels<kWidth>(vectors, merge);
}

}  // namespace oneflow
