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

}  // namespace oneflow
