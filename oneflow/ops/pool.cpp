// max_pool_{1,2,3}d and avg_pool_{1,2,3}d: y = the max or mean of each window of x over 1-3
// spatial axes (window_geometry.h: pool_size, strides, padding, ceil_mode), per channel.
// x is (N, C, spatial...) for data_format "channels_first", (N, spatial..., C) for
// "channels_last". Padding never takes part: a max ignores it, and a mean divides by the number
// of input elements in the window (TensorFlow's and OneFlow's avg pool).
//
// Gradients: <op>_grad (x, dy -> dx). Max pooling sends dy to the first maximum of its window
// (in row-major window order), as PyTorch and oneDNN do.

#include "oneflow/common/data_type.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"
#include "oneflow/framework/window_geometry.h"

namespace oneflow {

namespace {

std::string PoolOpType(const std::string& kind, int64_t spatial_axes) {
  return kind + "_pool_" + std::to_string(spatial_axes) + "d";
}

WindowGeometry CheckPool(const std::string& op_type, int64_t spatial_axes,
                         const OperatorConf& conf, const BlobDesc& x) {
  CheckFloatingOrHalfDataType(op_type, "x", x.data_type);
  return ComputeWindowGeometry(op_type, x.shape, spatial_axes, PoolWindowAttributes(conf));
}

void InferPool(InferContext& ctx, const std::string& op_type, int64_t spatial_axes) {
  const BlobDesc& x = ctx.Input("x");
  WindowGeometry geometry = CheckPool(op_type, spatial_axes, ctx.conf(), x);
  ctx.Output("y") = BlobDesc{
      geometry.ActivationShape(geometry.batch, geometry.channels, geometry.output), x.data_type};
}

void InferPoolGrad(InferContext& ctx, const std::string& op_type, int64_t spatial_axes) {
  const BlobDesc& x = ctx.Input("x");
  const BlobDesc& dy = ctx.Input("dy");
  WindowGeometry geometry = CheckPool(op_type, spatial_axes, ctx.conf(), x);
  CheckSameDataType(op_type, "x", x.data_type, "dy", dy.data_type);
  Shape expected = geometry.ActivationShape(geometry.batch, geometry.channels, geometry.output);
  if (dy.shape.dims() != expected.dims()) {
    throw Error(ErrorKind::kValue) << op_type << ": dy must have the forward output's shape "
                                   << expected.ToString() << ", got " << dy.shape.ToString();
  }
  ctx.Output("dx") = x;
}

int64_t ChannelAxis(const SbpContext& ctx, int64_t spatial_axes) {
  return ctx.Attr<std::string>("data_format") == "channels_first" ? 1 : spatial_axes + 1;
}

// Each (batch, channel) plane is pooled alone: split either; a mean is linear, so partial sums
// pass through it.
void GetPoolSbp(SbpContext& ctx, int64_t spatial_axes, bool linear) {
  for (int64_t axis : {int64_t{0}, ChannelAxis(ctx, spatial_axes)}) {
    ctx.NewSignature().Split("x", axis).Split("y", axis).Build();
  }
  if (linear) { ctx.NewSignature().PartialSum("x").PartialSum("y").Build(); }
  ctx.NewSignature().Broadcast("x").Broadcast("y").Build();
}

void GetPoolGradSbp(SbpContext& ctx, int64_t spatial_axes, bool linear) {
  for (int64_t axis : {int64_t{0}, ChannelAxis(ctx, spatial_axes)}) {
    ctx.NewSignature().Split("x", axis).Split("dy", axis).Split("dx", axis).Build();
  }
  if (linear) { ctx.NewSignature().Broadcast("x").PartialSum("dy").PartialSum("dx").Build(); }
  ctx.NewSignature().Broadcast("x").Broadcast("dy").Broadcast("dx").Build();
}

OpDefBuilder& PoolAttributes(OpDefBuilder& builder) {
  return builder.Attr<std::string>("data_format", "channels_first")
      .Attr<std::vector<int64_t>>("pool_size", {})
      .Attr<std::vector<int64_t>>("strides", {})
      .Attr<std::string>("padding", "valid")
      .Attr<std::vector<int64_t>>("padding_before", {})
      .Attr<std::vector<int64_t>>("padding_after", {})
      .Attr<bool>("ceil_mode", false);
}

void GeneratePoolGrad(GradContext& ctx, const std::string& grad_op_type) {
  if (!ctx.NeedInputGrad("x")) { return; }
  OpConfBuilder conf(grad_op_type, "");
  conf.Input("x", ctx.Input("x"))
      .Input("dy", ctx.OutputGrad("y"))
      .Attr("data_format", ctx.Attr<std::string>("data_format"))
      .Attr("pool_size", Int64ListAttr(ctx.op(), "pool_size"))
      .Attr("strides", Int64ListAttr(ctx.op(), "strides"))
      .Attr("padding", ctx.Attr<std::string>("padding"))
      .Attr("padding_before", Int64ListAttr(ctx.op(), "padding_before"))
      .Attr("padding_after", Int64ListAttr(ctx.op(), "padding_after"))
      .Attr("ceil_mode", ctx.Attr<bool>("ceil_mode"));
  ctx.SetInputGrad("x", ctx.AddOp("x_grad", conf, "dx"));
}

OpDefBuilder PoolOp(const std::string& kind, int64_t spatial_axes) {
  const std::string op_type = PoolOpType(kind, spatial_axes);
  const std::string grad_op_type = op_type + "_grad";
  const bool linear = kind == "avg";
  OpDefBuilder builder(op_type);
  builder.Input("x").Output("y");
  PoolAttributes(builder)
      .SetInferFn([=](InferContext& ctx) { InferPool(ctx, op_type, spatial_axes); })
      .SetSbpFn([=](SbpContext& ctx) { GetPoolSbp(ctx, spatial_axes, linear); })
      .SetGradFn([=](GradContext& ctx) { GeneratePoolGrad(ctx, grad_op_type); });
  return builder;
}

OpDefBuilder PoolGradOp(const std::string& kind, int64_t spatial_axes) {
  const std::string op_type = PoolOpType(kind, spatial_axes) + "_grad";
  const bool linear = kind == "avg";
  OpDefBuilder builder(op_type);
  builder.Input("x").Input("dy").Output("dx");
  PoolAttributes(builder)
      .SetInferFn([=](InferContext& ctx) { InferPoolGrad(ctx, op_type, spatial_axes); })
      .SetSbpFn([=](SbpContext& ctx) { GetPoolGradSbp(ctx, spatial_axes, linear); })
      .NonDifferentiable();
  return builder;
}

}  // namespace

static OpRegistrar g_max_pool_1d_registrar = PoolOp("max", 1);
static OpRegistrar g_max_pool_2d_registrar = PoolOp("max", 2);
static OpRegistrar g_max_pool_3d_registrar = PoolOp("max", 3);
static OpRegistrar g_avg_pool_1d_registrar = PoolOp("avg", 1);
static OpRegistrar g_avg_pool_2d_registrar = PoolOp("avg", 2);
static OpRegistrar g_avg_pool_3d_registrar = PoolOp("avg", 3);
static OpRegistrar g_max_pool_1d_grad_registrar = PoolGradOp("max", 1);
static OpRegistrar g_max_pool_2d_grad_registrar = PoolGradOp("max", 2);
static OpRegistrar g_max_pool_3d_grad_registrar = PoolGradOp("max", 3);
static OpRegistrar g_avg_pool_1d_grad_registrar = PoolGradOp("avg", 1);
static OpRegistrar g_avg_pool_2d_grad_registrar = PoolGradOp("avg", 2);
static OpRegistrar g_avg_pool_3d_grad_registrar = PoolGradOp("avg", 3);

}  // namespace oneflow
