// conv1d, conv2d, conv3d: out = in (*) weight, a cross-correlation over 1-3 spatial axes, with
// strides, dilations, groups and any padding (window_geometry.h). Layouts:
//   data_format "channels_first": in (N, C, spatial...), weight (filters, C / groups, kernel...),
//                                 out (N, filters, out_spatial...);
//   data_format "channels_last":  in (N, spatial..., C), weight (filters, kernel..., C / groups),
//                                 out (N, out_spatial..., filters).
// Output channel o uses input channels of group o / (filters / groups).
//
// Gradients: conv_data_grad (dy, weight, x_like -> dx) and conv_filter_grad (dy, x -> weight
// diff), each declared here with its SBP signatures; the bias is a separate bias_add.
//
// deconv2d (flow.nn.conv2d_transpose): out = the data gradient of the convolution that maps
// out's shape to in's, with weight as that convolution's weight: (in channels, out channels /
// groups, kh, kw) for channels_first, (in channels, kh, kw, out channels / groups) for
// channels_last, as in OneFlow and TensorFlow. Its attributes are that convolution's (padding
// "valid" or "customized" only) plus output_padding; each spatial size is
//   out = (in - 1) * stride + (kernel - 1) * dilation + 1 - padding_before - padding_after
//         + output_padding,  0 <= output_padding < stride.
// Its gradients are that convolution (for in) and its filter gradient (for weight).

#include "oneflow/common/data_type.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"
#include "oneflow/framework/window_geometry.h"

namespace oneflow {

namespace {

// Axis of the weight's input channels: 1 for channels_first, the last for channels_last.
int64_t WeightInChannelAxis(const std::string& data_format, int64_t spatial_axes) {
  return data_format == "channels_first" ? 1 : spatial_axes + 1;
}

int64_t ActivationChannelAxis(const std::string& data_format, int64_t spatial_axes) {
  return data_format == "channels_first" ? 1 : spatial_axes + 1;
}

// Checks the weight against the input and attributes; returns the geometry. kernel_size and
// filters may be left empty / 0, they are then the weight's.
WindowGeometry CheckConv(const std::string& op_type, int64_t spatial_axes, const OperatorConf& conf,
                         const Shape& in, const Shape& weight, DataType in_type,
                         DataType weight_type) {
  CheckFloatingOrHalfDataType(op_type, "in", in_type);
  CheckSameDataType(op_type, "in", in_type, "weight", weight_type);
  if (weight.num_axes() != spatial_axes + 2) {
    throw Error(ErrorKind::kValue)
        << op_type << ": weight must have rank " << spatial_axes + 2
        << " (filters, in channels / groups and " << spatial_axes << " kernel axes), got shape "
        << weight.ToString();
  }
  WindowAttributes attributes = ConvWindowAttributes(conf);
  const bool channels_first = attributes.data_format == "channels_first";
  const int64_t weight_first_spatial = channels_first ? 2 : 1;
  std::vector<int64_t> weight_kernel;
  for (int64_t axis = 0; axis < spatial_axes; ++axis) {
    weight_kernel.push_back(weight.At(weight_first_spatial + axis));
  }
  if (attributes.window.empty()) { attributes.window = weight_kernel; }
  WindowGeometry geometry = ComputeWindowGeometry(op_type, in, spatial_axes, attributes);
  if (geometry.window != weight_kernel) {
    throw Error(ErrorKind::kValue)
        << op_type << ": kernel_size " << ListToString(geometry.window)
        << " differs from the weight's kernel axes " << ListToString(weight_kernel)
        << " (weight " << weight.ToString() << ", data_format " << attributes.data_format << ")";
  }
  const int64_t groups = FromAttrValue<int64_t>(conf.attr().at("groups"));
  const int64_t filters = FromAttrValue<int64_t>(conf.attr().at("filters"));
  const int64_t out_channels = weight.At(0);
  if (filters > 0 && filters != out_channels) {
    throw Error(ErrorKind::kValue) << op_type << ": filters=" << filters
                                   << " differs from the weight's first dimension (weight "
                                   << weight.ToString() << ")";
  }
  if (groups <= 0) {
    throw Error(ErrorKind::kValue) << op_type << ": groups must be positive, got " << groups;
  }
  if (geometry.channels % groups != 0 || out_channels % groups != 0) {
    throw Error(ErrorKind::kValue)
        << op_type << ": groups=" << groups << " must divide both the input channels ("
        << geometry.channels << ", input " << in.ToString() << ") and the filters ("
        << out_channels << ", weight " << weight.ToString() << ")";
  }
  const int64_t weight_in_channels = weight.At(WeightInChannelAxis(attributes.data_format,
                                                                   spatial_axes));
  if (weight_in_channels * groups != geometry.channels) {
    throw Error(ErrorKind::kValue)
        << op_type << ": the input has " << geometry.channels << " channels (input "
        << in.ToString() << ", data_format " << attributes.data_format << ") but the weight "
        << weight.ToString() << " expects " << weight_in_channels << " x groups=" << groups
        << " = " << weight_in_channels * groups;
  }
  return geometry;
}

std::string ConvOpType(int64_t spatial_axes) {
  return "conv" + std::to_string(spatial_axes) + "d";
}

void InferConv(InferContext& ctx, int64_t spatial_axes) {
  const BlobDesc& in = ctx.Input("in");
  const BlobDesc& weight = ctx.Input("weight");
  WindowGeometry geometry = CheckConv(ConvOpType(spatial_axes), spatial_axes, ctx.conf(), in.shape,
                                      weight.shape, in.data_type, weight.data_type);
  ctx.Output("out") = BlobDesc{
      geometry.ActivationShape(geometry.batch, weight.shape.At(0), geometry.output), in.data_type};
}

// Data parallel (batch split); for groups == 1 also model parallel on the filters (output
// channels) and a split of the input channels, whose partial outputs sum; linear in each input.
void GetConvSbp(SbpContext& ctx, int64_t spatial_axes) {
  const std::string data_format = ctx.Attr<std::string>("data_format");
  const int64_t channel_axis = ActivationChannelAxis(data_format, spatial_axes);
  ctx.NewSignature().Split("in", 0).Broadcast("weight").Split("out", 0).Build();
  if (ctx.Attr<int64_t>("groups") == 1) {
    ctx.NewSignature().Broadcast("in").Split("weight", 0).Split("out", channel_axis).Build();
    ctx.NewSignature()
        .Split("in", channel_axis)
        .Split("weight", WeightInChannelAxis(data_format, spatial_axes))
        .PartialSum("out")
        .Build();
  }
  ctx.NewSignature().PartialSum("in").Broadcast("weight").PartialSum("out").Build();
  ctx.NewSignature().Broadcast("in").PartialSum("weight").PartialSum("out").Build();
  ctx.NewSignature().Broadcast("in").Broadcast("weight").Broadcast("out").Build();
}

// Copies the convolution attributes of the forward op onto a gradient op; kernel_size is the
// weight's (the forward op may have left it empty). conv_data_grad and conv_filter_grad also get
// num_spatial_dims (`gradient_op`); conv1d/2d/3d (deconv2d's input gradient) have no such attr.
OpConfBuilder WithConvAttributes(OpConfBuilder builder, GradContext& ctx, int64_t spatial_axes,
                                 bool gradient_op = true) {
  const std::string data_format = ctx.Attr<std::string>("data_format");
  const Shape& weight = ctx.Desc(ctx.Input("weight")).shape;
  const int64_t first_kernel_axis = data_format == "channels_first" ? 2 : 1;
  std::vector<int64_t> kernel_size;
  for (int64_t axis = 0; axis < spatial_axes; ++axis) {
    kernel_size.push_back(weight.At(first_kernel_axis + axis));
  }
  if (gradient_op) { builder.Attr("num_spatial_dims", spatial_axes); }
  builder.Attr("data_format", data_format)
      .Attr("kernel_size", kernel_size)
      .Attr("strides", Int64ListAttr(ctx.op(), "strides"))
      .Attr("dilation_rate", Int64ListAttr(ctx.op(), "dilation_rate"))
      .Attr("padding", ctx.Attr<std::string>("padding"))
      .Attr("padding_before", Int64ListAttr(ctx.op(), "padding_before"))
      .Attr("padding_after", Int64ListAttr(ctx.op(), "padding_after"))
      .Attr("groups", ctx.Attr<int64_t>("groups"));
  return builder;
}

void GenerateConvGrad(GradContext& ctx, int64_t spatial_axes) {
  if (ctx.NeedInputGrad("in")) {
    OpConfBuilder conf = WithConvAttributes(OpConfBuilder("conv_data_grad", "")
                                                .Input("dy", ctx.OutputGrad("out"))
                                                .Input("weight", ctx.Input("weight"))
                                                .Input("x_like", ctx.Input("in")),
                                            ctx, spatial_axes);
    ctx.SetInputGrad("in", ctx.AddOp("in_grad", conf, "dx"));
  }
  if (ctx.NeedInputGrad("weight")) {
    OpConfBuilder conf = WithConvAttributes(OpConfBuilder("conv_filter_grad", "")
                                                .Input("dy", ctx.OutputGrad("out"))
                                                .Input("x", ctx.Input("in")),
                                            ctx, spatial_axes);
    ctx.SetInputGrad("weight", ctx.AddOp("weight_grad", conf, "filter_diff"));
  }
}

int64_t GradSpatialAxes(const std::string& op_type, int64_t num_spatial_dims) {
  if (num_spatial_dims < 1 || num_spatial_dims > 3) {
    throw Error(ErrorKind::kValue) << op_type << ": num_spatial_dims must be 1, 2 or 3, got "
                                   << num_spatial_dims;
  }
  return num_spatial_dims;
}

// dy must have the forward output's shape for input x and weight.
void CheckOutputGradShape(const std::string& op_type, const WindowGeometry& geometry,
                          int64_t filters, const Shape& dy) {
  Shape expected = geometry.ActivationShape(geometry.batch, filters, geometry.output);
  if (dy.dims() != expected.dims()) {
    throw Error(ErrorKind::kValue) << op_type << ": dy must have the forward output's shape "
                                   << expected.ToString() << ", got " << dy.ToString();
  }
}

void InferConvDataGrad(InferContext& ctx) {
  const std::string op_type = "conv_data_grad";
  const int64_t spatial_axes = GradSpatialAxes(op_type, ctx.Attr<int64_t>("num_spatial_dims"));
  const BlobDesc& dy = ctx.Input("dy");
  const BlobDesc& weight = ctx.Input("weight");
  const BlobDesc& x_like = ctx.Input("x_like");
  WindowGeometry geometry = CheckConv(op_type, spatial_axes, ctx.conf(), x_like.shape,
                                      weight.shape, x_like.data_type, weight.data_type);
  CheckSameDataType(op_type, "dy", dy.data_type, "weight", weight.data_type);
  CheckOutputGradShape(op_type, geometry, weight.shape.At(0), dy.shape);
  ctx.Output("dx") = x_like;
}

void InferConvFilterGrad(InferContext& ctx) {
  const std::string op_type = "conv_filter_grad";
  const int64_t spatial_axes = GradSpatialAxes(op_type, ctx.Attr<int64_t>("num_spatial_dims"));
  const BlobDesc& dy = ctx.Input("dy");
  const BlobDesc& x = ctx.Input("x");
  const std::string data_format = ctx.Attr<std::string>("data_format");
  const int64_t groups = ctx.Attr<int64_t>("groups");
  const int64_t channel_axis = ActivationChannelAxis(data_format, spatial_axes);
  if (dy.shape.num_axes() != spatial_axes + 2 || x.shape.num_axes() != spatial_axes + 2) {
    throw Error(ErrorKind::kValue) << op_type << ": dy " << dy.shape.ToString() << " and x "
                                   << x.shape.ToString() << " must have rank "
                                   << spatial_axes + 2;
  }
  const int64_t filters = dy.shape.At(channel_axis);
  std::vector<int64_t> kernel = Int64ListAttr(ctx.conf(), "kernel_size");
  if (static_cast<int64_t>(kernel.size()) != spatial_axes) {
    throw Error(ErrorKind::kValue) << op_type << ": kernel_size must have " << spatial_axes
                                   << " values, got " << ListToString(kernel);
  }
  if (groups <= 0 || x.shape.At(channel_axis) % groups != 0) {
    throw Error(ErrorKind::kValue) << op_type << ": groups=" << groups
                                   << " must be positive and divide the input channels of x "
                                   << x.shape.ToString();
  }
  std::vector<int64_t> weight_dims{filters};
  if (data_format == "channels_first") { weight_dims.push_back(x.shape.At(channel_axis) / groups); }
  weight_dims.insert(weight_dims.end(), kernel.begin(), kernel.end());
  if (data_format != "channels_first") { weight_dims.push_back(x.shape.At(channel_axis) / groups); }
  Shape weight(weight_dims);
  WindowGeometry geometry = CheckConv(op_type, spatial_axes, ctx.conf(), x.shape, weight,
                                      x.data_type, dy.data_type);
  CheckOutputGradShape(op_type, geometry, filters, dy.shape);
  ctx.Output("filter_diff") = BlobDesc{weight, x.data_type};
}

// dx = conv_transpose(dy, weight): batch split; for groups == 1, a split of the filters (dy's
// channels and the weight's first axis) gives partial sums, and a split of the weight's input
// channels gives a split of dx's channels; linear in dy and in the weight.
void GetConvDataGradSbp(SbpContext& ctx) {
  const int64_t spatial_axes = ctx.Attr<int64_t>("num_spatial_dims");
  const std::string data_format = ctx.Attr<std::string>("data_format");
  const int64_t channel_axis = ActivationChannelAxis(data_format, spatial_axes);
  ctx.NewSignature().Split("dy", 0).Broadcast("weight").Split("x_like", 0).Split("dx", 0).Build();
  if (ctx.Attr<int64_t>("groups") == 1) {
    ctx.NewSignature()
        .Split("dy", channel_axis)
        .Split("weight", 0)
        .Broadcast("x_like")
        .PartialSum("dx")
        .Build();
    ctx.NewSignature()
        .Broadcast("dy")
        .Split("weight", WeightInChannelAxis(data_format, spatial_axes))
        .Split("x_like", channel_axis)
        .Split("dx", channel_axis)
        .Build();
  }
  ctx.NewSignature().PartialSum("dy").Broadcast("weight").Broadcast("x_like").PartialSum("dx").Build();
  ctx.NewSignature().Broadcast("dy").PartialSum("weight").Broadcast("x_like").PartialSum("dx").Build();
  ctx.NewSignature().Broadcast("dy").Broadcast("weight").Broadcast("x_like").Broadcast("dx").Build();
}

// dweight = sum over the batch of dy (x) x: a batch split gives partial sums; for groups == 1,
// dy's channel split splits the filters and x's channel split the weight's input channels.
void GetConvFilterGradSbp(SbpContext& ctx) {
  const int64_t spatial_axes = ctx.Attr<int64_t>("num_spatial_dims");
  const std::string data_format = ctx.Attr<std::string>("data_format");
  const int64_t channel_axis = ActivationChannelAxis(data_format, spatial_axes);
  ctx.NewSignature().Split("dy", 0).Split("x", 0).PartialSum("filter_diff").Build();
  if (ctx.Attr<int64_t>("groups") == 1) {
    ctx.NewSignature().Split("dy", channel_axis).Broadcast("x").Split("filter_diff", 0).Build();
    ctx.NewSignature()
        .Broadcast("dy")
        .Split("x", channel_axis)
        .Split("filter_diff", WeightInChannelAxis(data_format, spatial_axes))
        .Build();
  }
  ctx.NewSignature().PartialSum("dy").Broadcast("x").PartialSum("filter_diff").Build();
  ctx.NewSignature().Broadcast("dy").PartialSum("x").PartialSum("filter_diff").Build();
  ctx.NewSignature().Broadcast("dy").Broadcast("x").Broadcast("filter_diff").Build();
}

OpDefBuilder& ConvAttributes(OpDefBuilder& builder) {
  return builder.Attr<std::string>("data_format", "channels_first")
      .Attr<std::vector<int64_t>>("kernel_size", {})
      .Attr<std::vector<int64_t>>("strides", {})
      .Attr<std::vector<int64_t>>("dilation_rate", {})
      .Attr<std::string>("padding", "valid")
      .Attr<std::vector<int64_t>>("padding_before", {})
      .Attr<std::vector<int64_t>>("padding_after", {})
      .Attr<int64_t>("groups", 1);
}

OpDefBuilder ConvOp(int64_t spatial_axes) {
  OpDefBuilder builder(ConvOpType(spatial_axes));
  builder.Input("in").Input("weight").Output("out").Attr<int64_t>("filters", 0);
  ConvAttributes(builder)
      .SetInferFn([spatial_axes](InferContext& ctx) { InferConv(ctx, spatial_axes); })
      .SetSbpFn([spatial_axes](SbpContext& ctx) { GetConvSbp(ctx, spatial_axes); })
      .SetGradFn([spatial_axes](GradContext& ctx) { GenerateConvGrad(ctx, spatial_axes); });
  return builder;
}

OpDefBuilder ConvDataGradOp() {
  OpDefBuilder builder("conv_data_grad");
  builder.Input("dy").Input("weight").Input("x_like").Output("dx").Attr<int64_t>(
      "num_spatial_dims", 2);
  ConvAttributes(builder)
      .Attr<int64_t>("filters", 0)
      .SetInferFn(InferConvDataGrad)
      .SetSbpFn(GetConvDataGradSbp)
      .NonDifferentiable();
  return builder;
}

OpDefBuilder ConvFilterGradOp() {
  OpDefBuilder builder("conv_filter_grad");
  builder.Input("dy").Input("x").Output("filter_diff").Attr<int64_t>("num_spatial_dims", 2);
  ConvAttributes(builder)
      .Attr<int64_t>("filters", 0)
      .SetInferFn(InferConvFilterGrad)
      .SetSbpFn(GetConvFilterGradSbp)
      .NonDifferentiable();
  return builder;
}

// ---------------------------------------------------------------------------------------------
// deconv2d

constexpr int64_t kDeconvSpatialAxes = 2;

// The list attribute `name`, one value per spatial axis (empty: `fill` on every axis).
std::vector<int64_t> DeconvListAttr(const OperatorConf& conf, const std::string& name,
                                    int64_t fill) {
  std::vector<int64_t> values = Int64ListAttr(conf, name);
  if (values.empty()) { values.assign(kDeconvSpatialAxes, fill); }
  if (static_cast<int64_t>(values.size()) != kDeconvSpatialAxes) {
    throw Error(ErrorKind::kValue)
        << "deconv2d: " << name << " must have " << kDeconvSpatialAxes
        << " values (one per spatial axis), got " << ListToString(values);
  }
  return values;
}

void InferDeconv(InferContext& ctx) {
  const std::string op_type = "deconv2d";
  const int64_t spatial_axes = kDeconvSpatialAxes;
  const BlobDesc& in = ctx.Input("in");
  const BlobDesc& weight = ctx.Input("weight");
  CheckFloatingOrHalfDataType(op_type, "in", in.data_type);
  CheckSameDataType(op_type, "in", in.data_type, "weight", weight.data_type);
  if (in.shape.num_axes() != spatial_axes + 2 || weight.shape.num_axes() != spatial_axes + 2) {
    throw Error(ErrorKind::kValue)
        << op_type << ": in " << in.shape.ToString() << " and weight " << weight.shape.ToString()
        << " must both have rank " << spatial_axes + 2;
  }
  WindowAttributes attributes = ConvWindowAttributes(ctx.conf());
  const std::string& data_format = attributes.data_format;
  if (data_format != "channels_first" && data_format != "channels_last") {
    throw Error(ErrorKind::kValue)
        << op_type << ": data_format must be channels_first or channels_last, got '" << data_format
        << "'";
  }
  if (attributes.padding != "valid" && attributes.padding != "customized") {
    throw Error(ErrorKind::kValue)
        << op_type << ": padding must be 'valid' or 'customized' (explicit padding_before / "
        << "padding_after of the equivalent convolution), got '" << attributes.padding << "'";
  }
  const bool channels_first = data_format == "channels_first";
  const int64_t channel_axis = ActivationChannelAxis(data_format, spatial_axes);
  const int64_t first_spatial = channels_first ? 2 : 1;
  std::vector<int64_t> weight_kernel;
  for (int64_t axis = 0; axis < spatial_axes; ++axis) {
    weight_kernel.push_back(weight.shape.At(first_spatial + axis));
  }
  if (attributes.window.empty()) { attributes.window = weight_kernel; }
  if (attributes.window != weight_kernel) {
    throw Error(ErrorKind::kValue)
        << op_type << ": kernel_size " << ListToString(attributes.window)
        << " differs from the weight's kernel axes " << ListToString(weight_kernel) << " (weight "
        << weight.shape.ToString() << ", data_format " << data_format << ")";
  }
  const int64_t groups = ctx.Attr<int64_t>("groups");
  const int64_t in_channels = in.shape.At(channel_axis);
  if (groups <= 0 || in_channels % groups != 0) {
    throw Error(ErrorKind::kValue)
        << op_type << ": groups=" << groups << " must be positive and divide the input channels ("
        << in_channels << ", input " << in.shape.ToString() << ")";
  }
  if (weight.shape.At(0) != in_channels) {
    throw Error(ErrorKind::kValue)
        << op_type << ": the weight " << weight.shape.ToString() << " must have the input's "
        << in_channels << " channels on its first axis (input " << in.shape.ToString()
        << ", data_format " << data_format << "; weight layout "
        << (channels_first ? "(in, out / groups, kh, kw)" : "(in, kh, kw, out / groups)") << ")";
  }
  const int64_t out_channels =
      weight.shape.At(WeightInChannelAxis(data_format, spatial_axes)) * groups;
  const int64_t filters = ctx.Attr<int64_t>("filters");
  if (filters > 0 && filters != out_channels) {
    throw Error(ErrorKind::kValue)
        << op_type << ": filters=" << filters << " differs from the output channels "
        << out_channels << " of the weight " << weight.shape.ToString() << " (groups=" << groups
        << ")";
  }
  const std::vector<int64_t> strides = DeconvListAttr(ctx.conf(), "strides", 1);
  const std::vector<int64_t> dilations = DeconvListAttr(ctx.conf(), "dilation_rate", 1);
  const bool customized = attributes.padding == "customized";
  const std::vector<int64_t> before = customized ? DeconvListAttr(ctx.conf(), "padding_before", 0)
                                                 : std::vector<int64_t>(spatial_axes, 0);
  const std::vector<int64_t> after = customized ? DeconvListAttr(ctx.conf(), "padding_after", 0)
                                                : std::vector<int64_t>(spatial_axes, 0);
  const std::vector<int64_t> output_padding = DeconvListAttr(ctx.conf(), "output_padding", 0);
  std::vector<int64_t> out_spatial;
  for (int64_t axis = 0; axis < spatial_axes; ++axis) {
    if (strides[axis] <= 0 || dilations[axis] <= 0 || before[axis] < 0 || after[axis] < 0) {
      throw Error(ErrorKind::kValue)
          << op_type << ": strides " << ListToString(strides) << " and dilations "
          << ListToString(dilations) << " must be positive, padding_before " << ListToString(before)
          << " and padding_after " << ListToString(after) << " non-negative";
    }
    if (output_padding[axis] < 0 || output_padding[axis] >= strides[axis]) {
      throw Error(ErrorKind::kValue)
          << op_type << ": output_padding " << ListToString(output_padding)
          << " must lie in [0, stride) on each axis (strides " << ListToString(strides) << ")";
    }
    const int64_t window = (weight_kernel[axis] - 1) * dilations[axis] + 1;
    const int64_t size = (in.shape.At(first_spatial + axis) - 1) * strides[axis] + window -
                         before[axis] - after[axis] + output_padding[axis];
    if (size <= 0) {
      throw Error(ErrorKind::kValue)
          << op_type << ": the output would have size " << size << " on spatial axis " << axis
          << " (input " << in.shape.ToString() << ", window " << window << ", stride "
          << strides[axis] << ", padding " << before[axis] << " + " << after[axis]
          << ", output_padding " << output_padding[axis] << ")";
    }
    out_spatial.push_back(size);
  }
  std::vector<int64_t> out_dims{in.shape.At(0)};
  if (channels_first) { out_dims.push_back(out_channels); }
  out_dims.insert(out_dims.end(), out_spatial.begin(), out_spatial.end());
  if (!channels_first) { out_dims.push_back(out_channels); }
  const Shape out(out_dims);
  // The equivalent convolution maps out back to in's spatial sizes.
  WindowGeometry geometry = ComputeWindowGeometry(op_type, out, spatial_axes, attributes);
  for (int64_t axis = 0; axis < spatial_axes; ++axis) {
    OF_CHECK(geometry.output[axis] == in.shape.At(first_spatial + axis));
  }
  ctx.Output("out") = BlobDesc{out, in.data_type};
}

// As conv_data_grad, whose computation this is: batch split; for groups == 1 a split of the
// input channels (the weight's first axis) gives partial sums and a split of the weight's
// output channels splits out's channels; linear in in and in weight.
void GetDeconvSbp(SbpContext& ctx) {
  const int64_t spatial_axes = kDeconvSpatialAxes;
  const std::string data_format = ctx.Attr<std::string>("data_format");
  const int64_t channel_axis = ActivationChannelAxis(data_format, spatial_axes);
  ctx.NewSignature().Split("in", 0).Broadcast("weight").Split("out", 0).Build();
  if (ctx.Attr<int64_t>("groups") == 1) {
    ctx.NewSignature().Split("in", channel_axis).Split("weight", 0).PartialSum("out").Build();
    ctx.NewSignature()
        .Broadcast("in")
        .Split("weight", WeightInChannelAxis(data_format, spatial_axes))
        .Split("out", channel_axis)
        .Build();
  }
  ctx.NewSignature().PartialSum("in").Broadcast("weight").PartialSum("out").Build();
  ctx.NewSignature().Broadcast("in").PartialSum("weight").PartialSum("out").Build();
  ctx.NewSignature().Broadcast("in").Broadcast("weight").Broadcast("out").Build();
}

// d in = conv2d(d out, weight) and d weight = conv_filter_grad(dy = in, x = d out), both with
// the equivalent convolution's attributes.
void GenerateDeconvGrad(GradContext& ctx) {
  const int64_t spatial_axes = kDeconvSpatialAxes;
  if (ctx.NeedInputGrad("in")) {
    OpConfBuilder conf = WithConvAttributes(OpConfBuilder(ConvOpType(spatial_axes), "")
                                                .Input("in", ctx.OutputGrad("out"))
                                                .Input("weight", ctx.Input("weight")),
                                            ctx, spatial_axes, /*gradient_op=*/false);
    ctx.SetInputGrad("in", ctx.AddOp("in_grad", conf, "out"));
  }
  if (ctx.NeedInputGrad("weight")) {
    OpConfBuilder conf = WithConvAttributes(OpConfBuilder("conv_filter_grad", "")
                                                .Input("dy", ctx.Input("in"))
                                                .Input("x", ctx.OutputGrad("out")),
                                            ctx, spatial_axes);
    ctx.SetInputGrad("weight", ctx.AddOp("weight_grad", conf, "filter_diff"));
  }
}

OpDefBuilder DeconvOp() {
  OpDefBuilder builder("deconv2d");
  builder.Input("in")
      .Input("weight")
      .Output("out")
      .Attr<int64_t>("filters", 0)
      .Attr<std::vector<int64_t>>("output_padding", {});
  ConvAttributes(builder)
      .SetInferFn(InferDeconv)
      .SetSbpFn(GetDeconvSbp)
      .SetGradFn(GenerateDeconvGrad);
  return builder;
}

}  // namespace

static OpRegistrar g_conv1d_registrar = ConvOp(1);
static OpRegistrar g_conv2d_registrar = ConvOp(2);
static OpRegistrar g_conv3d_registrar = ConvOp(3);
static OpRegistrar g_conv_data_grad_registrar = ConvDataGradOp();
static OpRegistrar g_conv_filter_grad_registrar = ConvFilterGradOp();
static OpRegistrar g_deconv2d_registrar = DeconvOp();

}  // namespace oneflow
