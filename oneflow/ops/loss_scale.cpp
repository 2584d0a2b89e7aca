// Ops of loss scaling, added by the optimizer pass (see there for how they connect):
//   loss_scale_seed:      out = like-shaped blob filled with loss_scale[0] (seeds the loss grad)
//   loss_scale_inverse:   out = 1 / loss_scale (multiplies the variable gradients back down)
//   count_not_finite:     out = number of NaN or infinite elements of x ((1,) int64)
//   dynamic_loss_scale_schedule: after a step with count > 0: loss_scale = max(loss_scale /
//       multiplier, 1) and good_step_counter = 0; otherwise good_step_counter += 1 and, once it
//       reaches increment_period, loss_scale = min(loss_scale * multiplier, float max) and the
//       counter restarts at 0. loss_scale and good_step_counter are updated in place.
// None is differentiable.

#include "oneflow/common/data_type.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"
#include "oneflow/sbp/sbp_helpers.h"

namespace oneflow {

namespace {

void CheckScalarBlob(const std::string& op_type, const std::string& name, const BlobDesc& desc,
                     DataType data_type) {
  if (desc.data_type != data_type || desc.shape != Shape({1})) {
    throw Error(ErrorKind::kType) << op_type << ": " << name << " must be (1,) "
                                  << DataTypeName(data_type) << ", got " << desc.ToString();
  }
}

void BroadcastAll(SbpContext& ctx) {
  ctx.NewSignature().BroadcastAllInputs().BroadcastAllOutputs().Build();
}

}  // namespace

REGISTER_OP("loss_scale_seed")
    .Input("like")
    .Input("loss_scale")
    .Output("out")
    .KernelDataTypeFrom("like")
    .SetInferFn([](InferContext& ctx) {
      const BlobDesc& like = ctx.Input("like");
      CheckFloatingDataType("loss_scale_seed", "like", like.data_type);
      CheckScalarBlob("loss_scale_seed", "loss_scale", ctx.Input("loss_scale"), kFloat);
      ctx.Output("out") = like;
    })
    .SetSbpFn([](SbpContext& ctx) {
      for (int64_t axis = 0; axis < ctx.LogicalInput("like").shape.num_axes(); ++axis) {
        ctx.NewSignature().Split("like", axis).Broadcast("loss_scale").Split("out", axis).Build();
      }
      BroadcastAll(ctx);
    })
    .NonDifferentiable();

REGISTER_OP("loss_scale_inverse")
    .Input("loss_scale")
    .Output("out")
    .SetInferFn([](InferContext& ctx) {
      CheckScalarBlob("loss_scale_inverse", "loss_scale", ctx.Input("loss_scale"), kFloat);
      ctx.Output("out") = BlobDesc{Shape({1}), kFloat};
    })
    .SetSbpFn(BroadcastAll)
    .NonDifferentiable();

REGISTER_OP("count_not_finite")
    .Input("x")
    .Output("out")
    .KernelDataTypeFrom("x")
    .SetInferFn([](InferContext& ctx) {
      CheckFloatingDataType("count_not_finite", "x", ctx.Input("x").data_type);
      ctx.Output("out") = BlobDesc{Shape({1}), kInt64};
    })
    .SetSbpFn([](SbpContext& ctx) {
      // Each part counts its own elements: the counts of a split x add up.
      for (int64_t axis = 0; axis < ctx.LogicalInput("x").shape.num_axes(); ++axis) {
        ctx.NewSignature().Split("x", axis).PartialSum("out").Build();
      }
      BroadcastAll(ctx);
    })
    .NonDifferentiable();

REGISTER_OP("dynamic_loss_scale_schedule")
    .Input("count_not_finite")
    .Input("loss_scale")
    .Input("good_step_counter")
    .MutableInput("loss_scale")
    .MutableInput("good_step_counter")
    .Attr<int64_t>("increment_period", 2000)
    .Attr<double>("multiplier", 2.0)
    .KernelDataTypeFrom("loss_scale")
    .SetInferFn([](InferContext& ctx) {
      const std::string op = "dynamic_loss_scale_schedule";
      CheckScalarBlob(op, "count_not_finite", ctx.Input("count_not_finite"), kInt64);
      CheckScalarBlob(op, "loss_scale", ctx.Input("loss_scale"), kFloat);
      CheckScalarBlob(op, "good_step_counter", ctx.Input("good_step_counter"), kInt64);
      if (ctx.Attr<int64_t>("increment_period") < 1) {
        throw Error(ErrorKind::kValue) << "dynamic_loss_scale: increment_period must be >= 1, got "
                                       << ctx.Attr<int64_t>("increment_period");
      }
      if (!(ctx.Attr<double>("multiplier") > 1.0)) {
        throw Error(ErrorKind::kValue)
            << "dynamic_loss_scale: multiplier must be > 1, got " << ctx.Attr<double>("multiplier");
      }
    })
    .SetSbpFn(BroadcastAll)
    .NonDifferentiable();

}  // namespace oneflow
