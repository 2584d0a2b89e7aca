// Random ops: random_uniform and random_normal (source ops of a given shape and dtype),
// bernoulli (1 with probability x, elementwise) and generate_random_batch_permutation_indices
// (a random permutation of 0 .. x.shape[0] - 1, int32; flow.random.shuffle gathers x's rows with
// it). Not differentiable.
//
// Every value is a function of (seed, iteration, logical element index) only (a counter-based
// generator, see kernels/cpu/random.cpp), so each iteration draws a fresh sample, the same seed
// gives the same sequence in every session, and a device holding a split slice computes exactly
// its part of the single-device blob: splits on any axis are valid signatures, as is broadcast.

#include <limits>

#include "oneflow/common/data_type.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"
#include "oneflow/sbp/sbp_helpers.h"

namespace oneflow {

namespace {

void InferRandomSource(InferContext& ctx) {
  const std::string& op_type = ctx.conf().op_type();
  DataType data_type = ctx.Attr<DataType>("dtype");
  CheckFloatingDataType(op_type, "dtype", data_type);
  Shape shape = ctx.Attr<Shape>("shape");
  for (int64_t dim : shape.dims()) {
    if (dim < 1) {
      throw Error(ErrorKind::kValue) << op_type << ": shape " << shape.ToString()
                                     << " must have positive dimensions";
    }
  }
  ctx.Output("out") = BlobDesc{shape, data_type};
}

void GetRandomSourceSbp(SbpContext& ctx) {
  const Shape shape = ctx.Attr<Shape>("shape");
  for (int64_t axis = 0; axis < shape.num_axes(); ++axis) {
    ctx.NewSignature().Split("out", axis).Build();
  }
  ctx.NewSignature().Broadcast("out").Build();
}

void InferBernoulli(InferContext& ctx) {
  const BlobDesc& x = ctx.Input("x");
  CheckFloatingDataType("bernoulli", "x", x.data_type);
  DataType data_type = ctx.Attr<DataType>("dtype");
  CheckDataTypeIn("bernoulli", "dtype", data_type, {kFloat, kDouble, kInt8, kInt32, kInt64});
  ctx.Output("out") = BlobDesc{x.shape, data_type};
}

void InferBatchPermutation(InferContext& ctx) {
  const std::string op_type = "generate_random_batch_permutation_indices";
  const Shape& x = ctx.Input("x").shape;
  if (x.num_axes() == 0) {
    throw Error(ErrorKind::kValue) << op_type << ": x must have at least one axis (the batch "
                                   << "axis to permute), got a scalar";
  }
  if (x.At(0) > std::numeric_limits<int32_t>::max()) {
    throw Error(ErrorKind::kValue) << op_type << ": the batch axis of x " << x.ToString()
                                   << " is longer than int32 indices can address";
  }
  ctx.Output("y") = BlobDesc{Shape({x.At(0)}), kInt32};
}

// The permutation depends on the seed, the iteration and x's logical batch size only (the
// kernel never reads x), so every layout of x gives every device the whole permutation.
void GetBatchPermutationSbp(SbpContext& ctx) {
  const int64_t num_axes = ctx.LogicalInput("x").shape.num_axes();
  for (int64_t axis = 0; axis < num_axes; ++axis) {
    ctx.NewSignature().Split("x", axis).Broadcast("y").Build();
  }
  ctx.NewSignature().Broadcast("x").Broadcast("y").Build();
}

}  // namespace

REGISTER_OP("random_uniform")
    .Output("out")
    .RequiredAttr<Shape>("shape")
    .RequiredAttr<DataType>("dtype")
    .Attr<double>("low", 0.0)
    .Attr<double>("high", 1.0)
    .RequiredAttr<int64_t>("seed")
    .SetInferFn(InferRandomSource)
    .SetSbpFn(GetRandomSourceSbp)
    .NonDifferentiable();

REGISTER_OP("random_normal")
    .Output("out")
    .RequiredAttr<Shape>("shape")
    .RequiredAttr<DataType>("dtype")
    .Attr<double>("mean", 0.0)
    .Attr<double>("stddev", 1.0)
    .RequiredAttr<int64_t>("seed")
    .SetInferFn(InferRandomSource)
    .SetSbpFn(GetRandomSourceSbp)
    .NonDifferentiable();

REGISTER_OP("bernoulli")
    .Input("x")
    .Output("out")
    .RequiredAttr<DataType>("dtype")
    .RequiredAttr<int64_t>("seed")
    .SetInferFn(InferBernoulli)
    .SetSbpFn([](SbpContext& ctx) {
      AddElementwiseSignatures(ctx, ctx.LogicalInput("x").shape.num_axes(), false);
    })
    .KernelDataTypeFrom("x")
    .NonDifferentiable();

REGISTER_OP("generate_random_batch_permutation_indices")
    .Input("x")
    .Output("y")
    .RequiredAttr<int64_t>("seed")
    .SetInferFn(InferBatchPermutation)
    .SetSbpFn(GetBatchPermutationSbp)
    .NonDifferentiable();

}  // namespace oneflow
