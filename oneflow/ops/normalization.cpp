// Batch normalization over one channel axis (flow.nn.batch_normalization,
// flow.layers.batch_normalization and its relu variants).
//
// Inference / explicit statistics: "normalization"(x, mean, variance, gamma?, beta?) computes
//   y = (x - mean[c]) / sqrt(variance[c] + epsilon) * gamma[c] + beta[c]
// and is differentiable in every input ("normalization_grad").
//
// Training with batch statistics is three forward ops, so that the statistics are global when
// the batch is split over devices (each device contributes a partial sum):
//   "batch_norm_mean"(x)            -> mean[c]      (sum / count, P when x is split off-channel)
//   "batch_norm_variance"(x, mean)  -> variance[c]  (biased, sum((x - mean)^2) / count, ditto)
//   "normalization_train"(x, mean, variance, gamma?, beta?, moving_mean?, moving_variance?)
//        -> y, and in place moving = momentum * moving + (1 - momentum) * batch statistic
//           (the moving variance takes the unbiased batch variance, as cuDNN and PyTorch do).
// The statistics ops are not differentiable; normalization_train's gradient rule is the full
// batch-norm gradient through the statistics: two backward ops,
//   "normalization_train_grad_stats"(x, dy, mean, variance) -> sum_dy[c], sum_dy_xhat[c] (P-able)
//   "normalization_train_grad"(x, dy, mean, variance, gamma?, sum_dy, sum_dy_xhat) -> dx
//        dx = gamma inv_std (dy - sum_dy / m - xhat sum_dy_xhat / m),  m = elements per channel
// and gamma's gradient is sum_dy_xhat, beta's sum_dy.
//
// Mixed precision (the auto_mixed_precision pass): x, y, dy and dx may be float16 while every
// per-channel blob (statistics, gamma, beta, moving statistics and their gradients) stays
// float32, as cuDNN's batch normalization takes them; otherwise all blobs share x's dtype.

#include "oneflow/common/data_type.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"

namespace oneflow {

namespace {

// The dtype of the per-channel blobs when x has `x_type`: float32 for a float16 x, else x's.
DataType ChannelDataType(DataType x_type) { return x_type == kFloat16 ? kFloat : x_type; }

// Checks that `argument` (when present) is a 1-D blob of x's channel count and channel dtype.
void CheckChannelInput(InferContext& ctx, const std::string& op_type, const std::string& argument,
                       int64_t channels) {
  if (!ctx.HasInput(argument)) { return; }
  const BlobDesc& desc = ctx.Input(argument);
  if (desc.shape != Shape({channels})) {
    throw Error(ErrorKind::kValue) << op_type << ": " << argument << " "
                                   << desc.shape.ToString() << " must have shape (" << channels
                                   << ",), the size of x's channel axis";
  }
  const DataType x_type = ctx.Input("x").data_type;
  if (x_type == kFloat16 && desc.data_type != kFloat) {
    throw Error(ErrorKind::kType) << op_type << ": " << argument << " must be float32 when x is "
                                  << "float16 (per-channel blobs stay float32), got "
                                  << DataTypeName(desc.data_type);
  }
  if (x_type != kFloat16) { CheckSameDataType(op_type, "x", x_type, argument, desc.data_type); }
}

// A per-channel output blob of x's channel count.
BlobDesc ChannelDesc(const BlobDesc& x, int64_t axis) {
  return BlobDesc{Shape({x.shape.At(axis)}), ChannelDataType(x.data_type)};
}

// x's normalised channel axis, after checking that x is floating and the axis in range.
int64_t ChannelAxis(InferContext& ctx, const std::string& op_type) {
  const BlobDesc& x = ctx.Input("x");
  CheckFloatingOrHalfDataType(op_type, "x", x.data_type);
  if (x.shape.num_axes() < 1) {
    throw Error(ErrorKind::kValue) << op_type << ": x must have at least 1 axis, got "
                                   << x.shape.ToString();
  }
  return NormalizeAxis(op_type, "axis", ctx.Attr<int64_t>("axis"), x.shape.num_axes());
}

int64_t NormalizedAxisAttr(SbpContext& ctx, const std::string& input) {
  const int64_t num_axes = ctx.LogicalInput(input).shape.num_axes();
  int64_t axis = ctx.Attr<int64_t>("axis");
  return axis < 0 ? axis + num_axes : axis;
}

// Signatures of an op whose `data` inputs are shaped like x and whose `channel` inputs and
// outputs are per-channel vectors. Splitting x on the channel axis splits every per-channel
// blob; splitting it on another axis broadcasts them to each device, and per-channel outputs
// that are sums over the batch (`reduced_outputs`) become partial sums there. Variables updated
// in place keep their broadcast layout, so an op updating moving statistics does not split the
// channels (allow_channel_split = false).
void AddChannelSignatures(SbpContext& ctx, int64_t num_axes, int64_t axis,
                          const std::vector<std::string>& data,
                          const std::vector<std::string>& channel,
                          const std::vector<std::string>& reduced_outputs,
                          const std::vector<std::string>& channel_outputs,
                          bool allow_channel_split = true) {
  for (int64_t split = 0; split < num_axes; ++split) {
    if (split == axis && !allow_channel_split) { continue; }
    auto builder = ctx.NewSignature();
    for (const std::string& name : data) { builder.Split(name, split); }
    if (split == axis) {
      for (const std::string& name : channel) { builder.Split(name, 0); }
      for (const std::string& name : reduced_outputs) { builder.Split(name, 0); }
      for (const std::string& name : channel_outputs) { builder.Split(name, 0); }
    } else {
      for (const std::string& name : channel) { builder.Broadcast(name); }
      for (const std::string& name : reduced_outputs) { builder.PartialSum(name); }
      for (const std::string& name : channel_outputs) { builder.Broadcast(name); }
    }
    builder.Build();
  }
  ctx.NewSignature().BroadcastAllInputs().BroadcastAllOutputs().Build();
}

void InferNormalization(InferContext& ctx, const std::string& op_type) {
  const BlobDesc& x = ctx.Input("x");
  const int64_t axis = ChannelAxis(ctx, op_type);
  const int64_t channels = x.shape.At(axis);
  for (const char* name : {"mean", "variance", "gamma", "beta", "moving_mean", "moving_variance"}) {
    CheckChannelInput(ctx, op_type, name, channels);
  }
  if (ctx.Attr<double>("epsilon") < 0) {
    throw Error(ErrorKind::kValue) << op_type << ": epsilon must be >= 0, got "
                                   << ctx.Attr<double>("epsilon");
  }
  ctx.Output("y") = x;
}

void GenerateNormalizationGrad(GradContext& ctx) {
  OpConfBuilder builder("normalization_grad", "");
  builder.Input("x", ctx.Input("x"))
      .Input("dy", ctx.OutputGrad("y"))
      .Input("mean", ctx.Input("mean"))
      .Input("variance", ctx.Input("variance"))
      .Attr<int64_t>("axis", ctx.Attr<int64_t>("axis"))
      .Attr<double>("epsilon", ctx.Attr<double>("epsilon"));
  if (ctx.InputCount("gamma") > 0) { builder.Input("gamma", ctx.Input("gamma")); }
  // One backward op; each needed gradient is one of its outputs.
  std::string dx = ctx.AddOp("grad", builder, "dx");
  const std::string grad_op = dx.substr(0, dx.rfind('/'));
  auto output = [&](const std::string& argument) { return grad_op + "/" + argument + "_0"; };
  if (ctx.NeedInputGrad("x")) { ctx.SetInputGrad("x", dx); }
  if (ctx.NeedInputGrad("mean")) { ctx.SetInputGrad("mean", output("mean_diff")); }
  if (ctx.NeedInputGrad("variance")) { ctx.SetInputGrad("variance", output("variance_diff")); }
  if (ctx.InputCount("gamma") > 0 && ctx.NeedInputGrad("gamma")) {
    ctx.SetInputGrad("gamma", output("gamma_diff"));
  }
  if (ctx.InputCount("beta") > 0 && ctx.NeedInputGrad("beta")) {
    ctx.SetInputGrad("beta", output("beta_diff"));
  }
}

void GenerateNormalizationTrainGrad(GradContext& ctx) {
  const bool need_x = ctx.NeedInputGrad("x");
  const bool need_gamma = ctx.InputCount("gamma") > 0 && ctx.NeedInputGrad("gamma");
  const bool need_beta = ctx.InputCount("beta") > 0 && ctx.NeedInputGrad("beta");
  if (!need_x && !need_gamma && !need_beta) { return; }
  const std::string dy = ctx.OutputGrad("y");
  const int64_t axis = ctx.Attr<int64_t>("axis");
  const double epsilon = ctx.Attr<double>("epsilon");
  std::string sum_dy = ctx.AddOp("grad_stats",
                                 OpConfBuilder("normalization_train_grad_stats", "")
                                     .Input("x", ctx.Input("x"))
                                     .Input("dy", dy)
                                     .Input("mean", ctx.Input("mean"))
                                     .Input("variance", ctx.Input("variance"))
                                     .Attr<int64_t>("axis", axis)
                                     .Attr<double>("epsilon", epsilon),
                                 "sum_dy");
  const std::string stats_op = sum_dy.substr(0, sum_dy.rfind('/'));
  const std::string sum_dy_xhat = stats_op + "/sum_dy_xhat_0";
  if (need_gamma) { ctx.SetInputGrad("gamma", sum_dy_xhat); }
  if (need_beta) { ctx.SetInputGrad("beta", sum_dy); }
  if (!need_x) { return; }
  OpConfBuilder builder("normalization_train_grad", "");
  builder.Input("x", ctx.Input("x"))
      .Input("dy", dy)
      .Input("mean", ctx.Input("mean"))
      .Input("variance", ctx.Input("variance"))
      .Input("sum_dy", sum_dy)
      .Input("sum_dy_xhat", sum_dy_xhat)
      .Attr<int64_t>("axis", axis)
      .Attr<double>("epsilon", epsilon);
  if (ctx.InputCount("gamma") > 0) { builder.Input("gamma", ctx.Input("gamma")); }
  ctx.SetInputGrad("x", ctx.AddOp("x_grad", builder, "dx"));
}

}  // namespace

REGISTER_OP("normalization")
    .KernelDataTypeFrom("x")  // x, not a float32 per-channel output, in mixed precision
    .Input("x")
    .Input("mean")
    .Input("variance")
    .OptionalInput("gamma")
    .OptionalInput("beta")
    .Output("y")
    .Attr<int64_t>("axis", 1)
    .Attr<double>("epsilon", 1e-5)
    .SetInferFn([](InferContext& ctx) { InferNormalization(ctx, "normalization"); })
    .SetSbpFn([](SbpContext& ctx) {
      AddChannelSignatures(ctx, ctx.LogicalInput("x").shape.num_axes(),
                           NormalizedAxisAttr(ctx, "x"), {"x", "y"},
                           {"mean", "variance", "gamma", "beta"}, {}, {});
    })
    .SetGradFn(GenerateNormalizationGrad);

REGISTER_OP("normalization_grad")
    .KernelDataTypeFrom("x")  // x, not a float32 per-channel output, in mixed precision
    .Input("x")
    .Input("dy")
    .Input("mean")
    .Input("variance")
    .OptionalInput("gamma")
    .Output("dx")
    .Output("mean_diff")
    .Output("variance_diff")
    .Output("gamma_diff")
    .Output("beta_diff")
    .Attr<int64_t>("axis", 1)
    .Attr<double>("epsilon", 1e-5)
    .SetInferFn([](InferContext& ctx) {
      const BlobDesc& x = ctx.Input("x");
      const int64_t axis = ChannelAxis(ctx, "normalization_grad");
      const int64_t channels = x.shape.At(axis);
      if (ctx.Input("dy").shape != x.shape) {
        throw Error(ErrorKind::kValue) << "normalization_grad: dy " << ctx.Input("dy").shape.ToString()
                                       << " must have x's shape " << x.shape.ToString();
      }
      for (const char* name : {"mean", "variance", "gamma"}) {
        CheckChannelInput(ctx, "normalization_grad", name, channels);
      }
      ctx.Output("dx") = x;
      for (const char* name : {"mean_diff", "variance_diff", "gamma_diff", "beta_diff"}) {
        ctx.Output(name) = ChannelDesc(x, axis);
      }
    })
    .SetSbpFn([](SbpContext& ctx) {
      AddChannelSignatures(ctx, ctx.LogicalInput("x").shape.num_axes(),
                           NormalizedAxisAttr(ctx, "x"), {"x", "dy", "dx"},
                           {"mean", "variance", "gamma"},
                           {"mean_diff", "variance_diff", "gamma_diff", "beta_diff"}, {});
    })
    .NonDifferentiable();

REGISTER_OP("batch_norm_mean")
    .KernelDataTypeFrom("x")  // x, not a float32 per-channel output, in mixed precision
    .Input("x")
    .Output("mean")
    .Attr<int64_t>("axis", 1)
    .SetInferFn([](InferContext& ctx) {
      const BlobDesc& x = ctx.Input("x");
      const int64_t axis = ChannelAxis(ctx, "batch_norm_mean");
      ctx.Output("mean") = ChannelDesc(x, axis);
    })
    .SetSbpFn([](SbpContext& ctx) {
      AddChannelSignatures(ctx, ctx.LogicalInput("x").shape.num_axes(),
                           NormalizedAxisAttr(ctx, "x"), {"x"}, {}, {"mean"}, {});
    })
    .NonDifferentiable();

REGISTER_OP("batch_norm_variance")
    .KernelDataTypeFrom("x")  // x, not a float32 per-channel output, in mixed precision
    .Input("x")
    .Input("mean")
    .Output("variance")
    .Attr<int64_t>("axis", 1)
    .SetInferFn([](InferContext& ctx) {
      const BlobDesc& x = ctx.Input("x");
      const int64_t axis = ChannelAxis(ctx, "batch_norm_variance");
      CheckChannelInput(ctx, "batch_norm_variance", "mean", x.shape.At(axis));
      ctx.Output("variance") = ChannelDesc(x, axis);
    })
    .SetSbpFn([](SbpContext& ctx) {
      AddChannelSignatures(ctx, ctx.LogicalInput("x").shape.num_axes(),
                           NormalizedAxisAttr(ctx, "x"), {"x"}, {"mean"}, {"variance"}, {});
    })
    .NonDifferentiable();

REGISTER_OP("normalization_train")
    .KernelDataTypeFrom("x")  // x, not a float32 per-channel output, in mixed precision
    .Input("x")
    .Input("mean")
    .Input("variance")
    .OptionalInput("gamma")
    .OptionalInput("beta")
    .OptionalInput("moving_mean")
    .OptionalInput("moving_variance")
    .MutableInput("moving_mean")
    .MutableInput("moving_variance")
    .NoGradInput("mean")
    .NoGradInput("variance")
    .NoGradInput("moving_mean")
    .NoGradInput("moving_variance")
    .Output("y")
    .Attr<int64_t>("axis", 1)
    .Attr<double>("epsilon", 1e-3)
    .Attr<double>("momentum", 0.99)
    .SetInferFn([](InferContext& ctx) {
      InferNormalization(ctx, "normalization_train");
      if (ctx.HasInput("moving_mean") != ctx.HasInput("moving_variance")) {
        throw Error(ErrorKind::kValue)
            << "normalization_train: moving_mean and moving_variance go together";
      }
      const double momentum = ctx.Attr<double>("momentum");
      if (!(momentum >= 0 && momentum <= 1)) {
        throw Error(ErrorKind::kValue)
            << "normalization_train: momentum must be in [0, 1], got " << momentum;
      }
    })
    .SetSbpFn([](SbpContext& ctx) {
      AddChannelSignatures(ctx, ctx.LogicalInput("x").shape.num_axes(),
                           NormalizedAxisAttr(ctx, "x"), {"x", "y"},
                           {"mean", "variance", "gamma", "beta", "moving_mean", "moving_variance"},
                           {}, {}, ctx.InputCount("moving_mean") == 0);
    })
    .SetGradFn(GenerateNormalizationTrainGrad);

REGISTER_OP("normalization_train_grad_stats")
    .KernelDataTypeFrom("x")  // x, not a float32 per-channel output, in mixed precision
    .Input("x")
    .Input("dy")
    .Input("mean")
    .Input("variance")
    .Output("sum_dy")
    .Output("sum_dy_xhat")
    .Attr<int64_t>("axis", 1)
    .Attr<double>("epsilon", 1e-3)
    .SetInferFn([](InferContext& ctx) {
      const BlobDesc& x = ctx.Input("x");
      const int64_t axis = ChannelAxis(ctx, "normalization_train_grad_stats");
      for (const char* name : {"mean", "variance"}) {
        CheckChannelInput(ctx, "normalization_train_grad_stats", name, x.shape.At(axis));
      }
      ctx.Output("sum_dy") = ChannelDesc(x, axis);
      ctx.Output("sum_dy_xhat") = ChannelDesc(x, axis);
    })
    .SetSbpFn([](SbpContext& ctx) {
      AddChannelSignatures(ctx, ctx.LogicalInput("x").shape.num_axes(),
                           NormalizedAxisAttr(ctx, "x"), {"x", "dy"}, {"mean", "variance"},
                           {"sum_dy", "sum_dy_xhat"}, {});
    })
    .NonDifferentiable();

REGISTER_OP("normalization_train_grad")
    .KernelDataTypeFrom("x")  // x, not a float32 per-channel output, in mixed precision
    .Input("x")
    .Input("dy")
    .Input("mean")
    .Input("variance")
    .OptionalInput("gamma")
    .Input("sum_dy")
    .Input("sum_dy_xhat")
    .Output("dx")
    .Attr<int64_t>("axis", 1)
    .Attr<double>("epsilon", 1e-3)
    .SetInferFn([](InferContext& ctx) {
      const BlobDesc& x = ctx.Input("x");
      const int64_t axis = ChannelAxis(ctx, "normalization_train_grad");
      for (const char* name : {"mean", "variance", "gamma", "sum_dy", "sum_dy_xhat"}) {
        CheckChannelInput(ctx, "normalization_train_grad", name, x.shape.At(axis));
      }
      ctx.Output("dx") = x;
    })
    .SetSbpFn([](SbpContext& ctx) {
      AddChannelSignatures(ctx, ctx.LogicalInput("x").shape.num_axes(),
                           NormalizedAxisAttr(ctx, "x"), {"x", "dy", "dx"},
                           {"mean", "variance", "gamma", "sum_dy", "sum_dy_xhat"}, {}, {});
    })
    .NonDifferentiable();

}  // namespace oneflow
