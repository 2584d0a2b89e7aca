// upsample (flow.layers.upsample_2d): enlarges the two spatial axes of a 4-D x by height_scale and
// width_scale (each >= 1); out size = floor(scale * in). data_format "channels_first" (N, C, H, W)
// or "channels_last" (N, H, W, C), both run natively (OneFlow 0.3 transposed NHWC around an
// NCHW-only op). interpolation:
//   "nearest":  in index = min(floor(out index / scale), in - 1);
//   "bilinear": OneFlow 0.3's default align_corners=False, the half-pixel rule of PyTorch's
//               align_corners=False: source = max(0, (out + 0.5) / scale - 0.5), interpolated
//               between floor(source) and the next index (the last one at the border).
// Both are linear in x; upsample_grad (dy, x_like -> dx) is the transposed map. Each output
// element reads at most 2x2 input elements and the map is separable per axis; the kernels
// (oneflow/kernels/cpu/upsample.cpp) gather in both directions, so each element is written once.

#include <cmath>

#include "oneflow/common/data_type.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"

namespace oneflow {

namespace {

int64_t ChannelAxisOf(const std::string& data_format) {
  return data_format == "channels_first" ? 1 : 3;
}

// Checks the attributes against x (rank 4); returns the output shape.
Shape UpsampleOutputShape(const std::string& op_type, const OperatorConf& conf, const Shape& x) {
  if (x.num_axes() != 4) {
    throw Error(ErrorKind::kValue) << op_type << ": x must have rank 4 (N, C, H, W or N, H, W, C), "
                                   << "got shape " << x.ToString();
  }
  const std::string data_format = FromAttrValue<std::string>(conf.attr().at("data_format"));
  if (data_format != "channels_first" && data_format != "channels_last") {
    throw Error(ErrorKind::kValue)
        << op_type << ": data_format must be channels_first or channels_last, got '" << data_format
        << "'";
  }
  const std::string interpolation = FromAttrValue<std::string>(conf.attr().at("interpolation"));
  if (interpolation != "nearest" && interpolation != "bilinear") {
    throw Error(ErrorKind::kValue)
        << op_type << ": interpolation must be 'nearest' or 'bilinear', got '" << interpolation
        << "'";
  }
  const double scales[2] = {FromAttrValue<double>(conf.attr().at("height_scale")),
                            FromAttrValue<double>(conf.attr().at("width_scale"))};
  const int64_t first_spatial = data_format == "channels_first" ? 2 : 1;
  std::vector<int64_t> dims = x.dims();
  for (int64_t axis = 0; axis < 2; ++axis) {
    if (!std::isfinite(scales[axis]) || scales[axis] < 1.0) {
      throw Error(ErrorKind::kValue) << op_type << ": height_scale and width_scale must be finite "
                                     << "and at least 1, got " << scales[0] << " and " << scales[1];
    }
    const double size = static_cast<double>(x.At(first_spatial + axis));
    dims[first_spatial + axis] = static_cast<int64_t>(std::floor(scales[axis] * size));
  }
  return Shape(dims);
}

void InferUpsample(InferContext& ctx) {
  const BlobDesc& x = ctx.Input("x");
  CheckFloatingOrHalfDataType("upsample", "x", x.data_type);
  ctx.Output("y") = BlobDesc{UpsampleOutputShape("upsample", ctx.conf(), x.shape), x.data_type};
}

void InferUpsampleGrad(InferContext& ctx) {
  const BlobDesc& dy = ctx.Input("dy");
  const BlobDesc& x = ctx.Input("x");
  CheckFloatingOrHalfDataType("upsample_grad", "dy", dy.data_type);
  CheckSameDataType("upsample_grad", "dy", dy.data_type, "x", x.data_type);
  const Shape y = UpsampleOutputShape("upsample_grad", ctx.conf(), x.shape);
  if (dy.shape != y) {
    throw Error(ErrorKind::kValue) << "upsample_grad: dy must have the forward output's shape "
                                   << y.ToString() << ", got " << dy.shape.ToString();
  }
  ctx.Output("dx") = x;
}

// Batch and channel splits pass through (each (n, c) plane is resampled on its own); linear.
void GetUpsampleSbp(SbpContext& ctx) {
  const int64_t channel_axis = ChannelAxisOf(ctx.Attr<std::string>("data_format"));
  for (int64_t axis : {int64_t{0}, channel_axis}) {
    ctx.NewSignature().Split("x", axis).Split("y", axis).Build();
  }
  ctx.NewSignature().PartialSum("x").PartialSum("y").Build();
  ctx.NewSignature().Broadcast("x").Broadcast("y").Build();
}

void GetUpsampleGradSbp(SbpContext& ctx) {
  const int64_t channel_axis = ChannelAxisOf(ctx.Attr<std::string>("data_format"));
  for (int64_t axis : {int64_t{0}, channel_axis}) {
    ctx.NewSignature().Split("dy", axis).Split("x", axis).Split("dx", axis).Build();
  }
  ctx.NewSignature().PartialSum("dy").Broadcast("x").PartialSum("dx").Build();
  ctx.NewSignature().Broadcast("dy").Broadcast("x").Broadcast("dx").Build();
}

void GenerateUpsampleGrad(GradContext& ctx) {
  if (!ctx.NeedInputGrad("x")) { return; }
  OpConfBuilder builder("upsample_grad", "");
  builder.Input("dy", ctx.OutputGrad("y")).Input("x", ctx.Input("x"));
  for (const char* name : {"height_scale", "width_scale"}) {
    builder.Attr(name, ctx.Attr<double>(name));
  }
  for (const char* name : {"data_format", "interpolation"}) {
    builder.Attr(name, ctx.Attr<std::string>(name));
  }
  ctx.SetInputGrad("x", ctx.AddOp("x_grad", builder, "dx"));
}

}  // namespace

REGISTER_OP("upsample")
    .Input("x")
    .Output("y")
    .Attr<double>("height_scale", 2.0)
    .Attr<double>("width_scale", 2.0)
    .Attr<std::string>("data_format", "channels_first")
    .Attr<std::string>("interpolation", "nearest")
    .SetInferFn(InferUpsample)
    .SetSbpFn(GetUpsampleSbp)
    .SetGradFn(GenerateUpsampleGrad);

REGISTER_OP("upsample_grad")
    .Input("dy")
    .Input("x")
    .Output("dx")
    .Attr<double>("height_scale", 2.0)
    .Attr<double>("width_scale", 2.0)
    .Attr<std::string>("data_format", "channels_first")
    .Attr<std::string>("interpolation", "nearest")
    .SetInferFn(InferUpsampleGrad)
    .SetSbpFn(GetUpsampleGradSbp)
    .NonDifferentiable();

}  // namespace oneflow
