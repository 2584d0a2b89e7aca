#pragma once
// Candidate SBP signature sets shared by many ops. Each helper appends signatures to an
// SbpContext; op files call them from their SbpFn and add op-specific extras.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "oneflow/common/shape.h"

namespace oneflow {

class SbpContext;

// Elementwise ops (every argument has the same shape): split(axis) on every argument for each
// axis, and all broadcast. With `partial_sum_linear`, also partial-sum on all arguments, which
// is valid for ops linear in their inputs (identity, cast of floats, add_n, scalar_mul).
void AddElementwiseSignatures(SbpContext& ctx, int64_t num_axes, bool partial_sum_linear);

// How partial-sum inputs may pass through a broadcast binary op z = f(x, y).
enum class PartialSumRule {
  kNone,
  kBothPartial,    // z = x + y, x - y: P, P -> P
  kEitherPartial,  // z = x * y: P, B -> P and B, P -> P
  kFirstPartial,   // z = x / y: P, B -> P
};

// Binary ops with numpy broadcasting: for each output axis of size > 1, split the output there,
// split each input that has that axis at full size and broadcast an input that broadcasts along
// it; plus all broadcast and the partial-sum signatures allowed by `rule`.
void AddBroadcastBinarySignatures(SbpContext& ctx, const std::string& x, const std::string& y,
                                  const std::string& z, const Shape& x_shape, const Shape& y_shape,
                                  PartialSumRule rule);

// Ops whose inputs broadcast together to the output (numpy rules, e.g. where): for each output
// axis of size > 1, split the output there, split each input that has that axis at full size
// and broadcast the others; plus all broadcast. `inputs`: (argument, logical shape).
void AddBroadcastSignatures(SbpContext& ctx,
                            const std::vector<std::pair<std::string, Shape>>& inputs,
                            const std::string& output);

// Sum reductions of `input` over normalised `axes`: a split on a kept axis stays a split of the
// output (at its position after dropping reduced axes unless keepdims); a split on a reduced axis
// gives a partial-sum output; partial-sum passes through; all broadcast.
void AddReduceSumSignatures(SbpContext& ctx, const std::string& input, const std::string& output,
                            int64_t num_axes, const std::vector<int64_t>& axes, bool keepdims);

// 2-D matmul out = op(a) * op(b): a split on rows -> out split(0); b split on columns -> out
// split(1); both split on the inner dimension -> partial sum; one partial and one broadcast ->
// partial sum; all broadcast.
void AddMatmulSignatures(SbpContext& ctx, const std::string& a, const std::string& b,
                         const std::string& out, bool transpose_a, bool transpose_b);

}  // namespace oneflow
