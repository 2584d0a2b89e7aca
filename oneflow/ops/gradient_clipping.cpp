// Ops of clipping gradients by their global norm, added by the optimizer pass:
//   scale_regularize_gradient: out = scale * s * diff + l1 * sign(model) + l2 * model, s the
//       optional scale_by_tensor[0] (the gradient an update op would use, made explicit so its
//       norm can be taken)
//   square_sum: out = sum of x^2 ((1,) float, accumulated in double)
//   multi_square_sum: y = the sum of the squares of every x[i] ((1,) of their dtype, accumulated
//       in double; OneFlow 0.3's user op, reached through flow.user_op_builder)
//   global_norm_clip_factor: out = clip_norm / max(sqrt(square_sum), clip_norm) ((1,) float), the
//       factor every clipped gradient is multiplied by
// None is differentiable.

#include "oneflow/common/data_type.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"
#include "oneflow/sbp/sbp_helpers.h"

namespace oneflow {

REGISTER_OP("scale_regularize_gradient")
    .Input("diff")
    .Input("model")
    .OptionalInput("scale_by_tensor")
    .Output("out")
    .Attr<double>("scale", 1.0)
    .Attr<double>("l1", 0.0)
    .Attr<double>("l2", 0.0)
    .KernelDataTypeFrom("diff")
    .SetInferFn([](InferContext& ctx) {
      const std::string op = "scale_regularize_gradient";
      const BlobDesc& diff = ctx.Input("diff");
      const BlobDesc& model = ctx.Input("model");
      CheckFloatingDataType(op, "diff", diff.data_type);
      CheckSameDataType(op, "diff", diff.data_type, "model", model.data_type);
      if (diff.shape != model.shape) {
        throw Error(ErrorKind::kValue) << op << ": diff " << diff.shape.ToString()
                                       << " must have model's shape " << model.shape.ToString();
      }
      if (ctx.HasInput("scale_by_tensor") && (ctx.Input("scale_by_tensor").shape != Shape({1}) ||
                                              ctx.Input("scale_by_tensor").data_type != kFloat)) {
        throw Error(ErrorKind::kType) << op << ": scale_by_tensor must be (1,) float32";
      }
      ctx.Output("out") = diff;
    })
    .SetSbpFn([](SbpContext& ctx) {
      const int64_t num_axes = ctx.LogicalInput("diff").shape.num_axes();
      const bool scaled = ctx.InputCount("scale_by_tensor") > 0;
      for (int64_t axis = 0; axis < num_axes; ++axis) {
        auto signature = ctx.NewSignature();
        signature.Split("diff", axis).Split("model", axis).Split("out", axis);
        if (scaled) { signature.Broadcast("scale_by_tensor"); }
        signature.Build();
      }
      ctx.NewSignature().BroadcastAllInputs().BroadcastAllOutputs().Build();
    })
    .NonDifferentiable();

REGISTER_OP("multi_square_sum")
    .VariadicInput("x")
    .Output("y")
    .SetInferFn([](InferContext& ctx) {
      const int64_t count = ctx.InputCount("x");
      if (count < 1) { throw Error(ErrorKind::kValue) << "multi_square_sum: needs an input x"; }
      const DataType data_type = ctx.Input("x", 0).data_type;
      CheckFloatingDataType("multi_square_sum", "x[0]", data_type);
      for (int64_t index = 1; index < count; ++index) {
        CheckSameDataType("multi_square_sum", "x[0]", data_type,
                          "x[" + std::to_string(index) + "]", ctx.Input("x", index).data_type);
      }
      ctx.Output("y") = BlobDesc{Shape({1}), data_type};
    })
    .SetSbpFn([](SbpContext& ctx) {
      // Each part sums its own squares when every x is split along axis 0.
      bool splittable = true;
      for (int64_t index = 0; index < ctx.InputCount("x"); ++index) {
        splittable = splittable && ctx.LogicalInput("x", index).shape.num_axes() > 0;
      }
      if (splittable) { ctx.NewSignature().Split("x", 0).PartialSum("y").Build(); }
      ctx.NewSignature().BroadcastAllInputs().BroadcastAllOutputs().Build();
    })
    .NonDifferentiable();

REGISTER_OP("square_sum")
    .Input("x")
    .Output("out")
    .KernelDataTypeFrom("x")
    .SetInferFn([](InferContext& ctx) {
      CheckFloatingDataType("square_sum", "x", ctx.Input("x").data_type);
      ctx.Output("out") = BlobDesc{Shape({1}), kFloat};
    })
    .SetSbpFn([](SbpContext& ctx) {
      // Each part sums its own squares: the sums of a split x add up.
      for (int64_t axis = 0; axis < ctx.LogicalInput("x").shape.num_axes(); ++axis) {
        ctx.NewSignature().Split("x", axis).PartialSum("out").Build();
      }
      ctx.NewSignature().Broadcast("x").Broadcast("out").Build();
    })
    .NonDifferentiable();

REGISTER_OP("global_norm_clip_factor")
    .Input("square_sum")
    .Output("out")
    .Attr<double>("clip_norm", 1.0)
    .SetInferFn([](InferContext& ctx) {
      const BlobDesc& sum = ctx.Input("square_sum");
      if (sum.shape != Shape({1}) || sum.data_type != kFloat) {
        throw Error(ErrorKind::kType)
            << "global_norm_clip_factor: square_sum must be (1,) float32, got " << sum.ToString();
      }
      if (!(ctx.Attr<double>("clip_norm") > 0.0)) {
        throw Error(ErrorKind::kValue)
            << "grad_clipping.by_global_norm: clip_norm must be > 0, got "
            << ctx.Attr<double>("clip_norm");
      }
      ctx.Output("out") = BlobDesc{Shape({1}), kFloat};
    })
    .SetSbpFn([](SbpContext& ctx) {
      ctx.NewSignature().Broadcast("square_sum").Broadcast("out").Build();
    })
    .NonDifferentiable();

}  // namespace oneflow
