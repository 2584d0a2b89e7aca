// Random ops: random_uniform and random_normal (source ops of a given shape and dtype) and
// bernoulli (1 with probability x, elementwise). Not differentiable.
//
// Every value is a function of (seed, iteration, logical element index) only (a counter-based
// generator, see kernels/cpu/random.cpp), so each iteration draws a fresh sample, the same seed
// gives the same sequence in every session, and a device holding a split slice computes exactly
// its part of the single-device blob: splits on any axis are valid signatures, as is broadcast.

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

}  // namespace oneflow
