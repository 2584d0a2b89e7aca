// dropout: y = x * mask * scale, mask[i] = 1 with probability 1 - rate, scale = 1 / (1 - rate)
// (flow.nn.dropout; the Python wrapper adds no op in predict jobs or for rate 0). The mask is
// an output (int8), so the gradient op "dropout_grad" (dx = dy * mask * scale) uses exactly the
// forward's mask. Masks come from a counter-based hash of (seed, iteration, logical element
// index): the same on any number of devices and any split, and new each iteration.
// random_mask_like: that mask alone (int8, 1 = keep with probability 1 - rate) shaped like its
// input (flow.nn.random_mask_like); with dropout's seed and rate it is dropout's mask.

#include "oneflow/common/data_type.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"
#include "oneflow/sbp/sbp_helpers.h"

namespace oneflow {

namespace {

void GenerateDropoutGrad(GradContext& ctx) {
  if (!ctx.NeedInputGrad("x")) { return; }
  const double rate = ctx.Attr<double>("rate");
  std::string dx = ctx.AddOp("x_grad",
                             OpConfBuilder("dropout_grad", "")
                                 .Input("dy", ctx.OutputGrad("y"))
                                 .Input("mask", ctx.Output("mask"))
                                 .Attr<double>("scale", 1.0 / (1.0 - rate)),
                             "dx");
  ctx.SetInputGrad("x", dx);
}

}  // namespace

REGISTER_OP("dropout")
    .Input("x")
    .Output("y")
    .Output("mask")
    .RequiredAttr<double>("rate")
    .Attr<int64_t>("seed", 0)
    .SetInferFn([](InferContext& ctx) {
      const BlobDesc& x = ctx.Input("x");
      CheckFloatingOrHalfDataType("dropout", "x", x.data_type);
      const double rate = ctx.Attr<double>("rate");
      if (!(rate >= 0.0 && rate < 1.0)) {
        throw Error(ErrorKind::kValue) << "dropout: rate must be in [0, 1), got " << rate;
      }
      ctx.Output("y") = x;
      ctx.Output("mask") = BlobDesc{x.shape, kInt8};
    })
    .SetSbpFn([](SbpContext& ctx) {
      AddElementwiseSignatures(ctx, ctx.LogicalInput("x").shape.num_axes(), false);
    })
    .SetGradFn(GenerateDropoutGrad);

REGISTER_OP("dropout_grad")
    .Input("dy")
    .Input("mask")
    .Output("dx")
    .RequiredAttr<double>("scale")
    .SetInferFn([](InferContext& ctx) {
      const BlobDesc& dy = ctx.Input("dy");
      CheckFloatingOrHalfDataType("dropout_grad", "dy", dy.data_type);
      CheckDataTypeIn("dropout_grad", "mask", ctx.Input("mask").data_type, {kInt8});
      if (ctx.Input("mask").shape != dy.shape) {
        throw Error(ErrorKind::kValue)
            << "dropout_grad: mask " << ctx.Input("mask").shape.ToString()
            << " must have dy's shape " << dy.shape.ToString();
      }
      ctx.Output("dx") = dy;
    })
    .SetSbpFn([](SbpContext& ctx) {
      const int64_t num_axes = ctx.LogicalInput("dy").shape.num_axes();
      for (int64_t axis = 0; axis < num_axes; ++axis) {
        ctx.NewSignature().SplitAllInputs(axis).SplitAllOutputs(axis).Build();
      }
      ctx.NewSignature().BroadcastAllInputs().BroadcastAllOutputs().Build();
      ctx.NewSignature().PartialSum("dy").Broadcast("mask").PartialSum("dx").Build();
    })
    .NonDifferentiable();

REGISTER_OP("random_mask_like")
    .Input("like")
    .Output("out")
    .RequiredAttr<double>("rate")
    .RequiredAttr<int64_t>("seed")
    .SetInferFn([](InferContext& ctx) {
      const double rate = ctx.Attr<double>("rate");
      if (!(rate >= 0.0 && rate < 1.0)) {
        throw Error(ErrorKind::kValue) << "random_mask_like: rate must be in [0, 1), got " << rate;
      }
      ctx.Output("out") = BlobDesc{ctx.Input("like").shape, kInt8};
    })
    .SetSbpFn([](SbpContext& ctx) {
      AddElementwiseSignatures(ctx, ctx.LogicalInput("like").shape.num_axes(), false);
    })
    .NonDifferentiable();

}  // namespace oneflow
