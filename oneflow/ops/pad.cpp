// pad: y = x surrounded on each axis by padding_before / padding_after elements of a constant
// (floating_constant_value for float blobs, integral_constant_value for integer ones); its
// gradient is the slice of dy that x filled.
// reflection_pad2d / replication_pad2d: NCHW blobs padded on H and W (padding = [left, right,
// top, bottom]) by mirroring the border (excluding it) or repeating it; their gradient ops add
// each padded element's dy back onto the element it copied.

#include "oneflow/common/data_type.h"
#include "oneflow/framework/index_functions.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"

namespace oneflow {

namespace {

void CheckPaddings(const Shape& x, const std::vector<int64_t>& before,
                   const std::vector<int64_t>& after) {
  if (static_cast<int64_t>(before.size()) != x.num_axes() ||
      static_cast<int64_t>(after.size()) != x.num_axes()) {
    throw Error(ErrorKind::kValue) << "pad: paddings must have one (before, after) pair per axis "
                                   << "of x " << x.ToString() << ", got " << before.size()
                                   << " and " << after.size() << " values";
  }
  for (int64_t axis = 0; axis < x.num_axes(); ++axis) {
    if (before[axis] < 0 || after[axis] < 0) {
      throw Error(ErrorKind::kValue) << "pad: paddings of axis " << axis << " are ("
                                     << before[axis] << ", " << after[axis]
                                     << "); paddings must be non-negative";
    }
  }
}

void InferPad(InferContext& ctx) {
  const BlobDesc& x = ctx.Input("x");
  CheckDataTypeIn("pad", "x", x.data_type, MovableDataTypes());
  std::vector<int64_t> before = Int64ListAttr(ctx.conf(), "padding_before");
  std::vector<int64_t> after = Int64ListAttr(ctx.conf(), "padding_after");
  CheckPaddings(x.shape, before, after);
  std::vector<int64_t> dims = x.shape.dims();
  for (size_t axis = 0; axis < dims.size(); ++axis) { dims[axis] += before[axis] + after[axis]; }
  ctx.Output("y") = BlobDesc{Shape(dims), x.data_type};
}

bool PadsWithZero(const OperatorConf& conf, DataType data_type) {
  return IsFloatingDataType(data_type)
             ? FromAttrValue<double>(conf.attr().at("floating_constant_value")) == 0.0
             : FromAttrValue<int64_t>(conf.attr().at("integral_constant_value")) == 0;
}

// Unpadded axes split; partial sums pass only when the padding is 0 (else the constant would
// be added once per device).
void GetPadSbp(SbpContext& ctx) {
  const BlobDesc& x = ctx.LogicalInput("x");
  std::vector<int64_t> before = Int64ListAttr(ctx.conf(), "padding_before");
  std::vector<int64_t> after = Int64ListAttr(ctx.conf(), "padding_after");
  for (int64_t axis = 0; axis < x.shape.num_axes(); ++axis) {
    if (before[axis] != 0 || after[axis] != 0) { continue; }
    ctx.NewSignature().Split("x", axis).Split("y", axis).Build();
  }
  if (PadsWithZero(ctx.conf(), x.data_type)) {
    ctx.NewSignature().PartialSum("x").PartialSum("y").Build();
  }
  ctx.NewSignature().Broadcast("x").Broadcast("y").Build();
}

void GeneratePadGrad(GradContext& ctx) {
  if (!ctx.NeedInputGrad("x")) { return; }
  const Shape& x = ctx.Desc(ctx.Input("x")).shape;
  std::vector<int64_t> start = Int64ListAttr(ctx.op(), "padding_before");
  std::vector<int64_t> stop(x.num_axes());
  for (int64_t axis = 0; axis < x.num_axes(); ++axis) { stop[axis] = start[axis] + x.At(axis); }
  std::string dx = ctx.AddOp("x_grad",
                             OpConfBuilder("slice", "")
                                 .Input("x", ctx.OutputGrad("y"))
                                 .Attr("start", start)
                                 .Attr("stop", stop)
                                 .Attr("step", std::vector<int64_t>(x.num_axes(), 1)),
                             "y");
  ctx.SetInputGrad("x", dx);
}

// padding = [left, right, top, bottom]: checked against x (NCHW) for `op_type`; each pad of a
// reflection must be smaller than its dim (the border itself is not repeated).
std::vector<int64_t> CheckPadding2d(const std::string& op_type, const Shape& x,
                                    const std::vector<int64_t>& padding, bool reflect) {
  if (x.num_axes() != 4) {
    throw Error(ErrorKind::kValue) << op_type << ": x must be a 4-d NCHW blob, got "
                                   << x.ToString();
  }
  if (padding.size() != 4) {
    throw Error(ErrorKind::kValue) << op_type
                                   << ": padding must be [left, right, top, bottom], got "
                                   << AxesToString(padding);
  }
  const int64_t height = x.At(2);
  const int64_t width = x.At(3);
  for (size_t index = 0; index < 4; ++index) {
    const int64_t dim = index < 2 ? width : height;
    const int64_t limit = reflect ? dim - 1 : (dim == 0 ? -1 : INT64_MAX);
    if (padding[index] < 0 || padding[index] > limit) {
      throw Error(ErrorKind::kValue)
          << op_type << ": padding " << AxesToString(padding) << " does not fit x "
          << x.ToString() << ": each padding must be >= 0"
          << (reflect ? " and smaller than the padded dim (W for left/right, H for top/bottom)"
                      : " and the padded dim non-empty");
    }
  }
  return {x.At(0), x.At(1), height + padding[2] + padding[3], width + padding[0] + padding[1]};
}

void InferPad2d(InferContext& ctx, const std::string& op_type, bool reflect) {
  const BlobDesc& x = ctx.Input("x");
  CheckFloatingOrHalfDataType(op_type, "x", x.data_type);
  Shape y(CheckPadding2d(op_type, x.shape, Int64ListAttr(ctx.conf(), "padding"), reflect));
  ctx.Output("y") = BlobDesc{y, x.data_type};
}

void InferPad2dGrad(InferContext& ctx, const std::string& op_type, bool reflect) {
  const BlobDesc& dy = ctx.Input("dy");
  const BlobDesc& like = ctx.Input("like");
  CheckFloatingOrHalfDataType(op_type, "dy", dy.data_type);
  Shape y(CheckPadding2d(op_type, like.shape, Int64ListAttr(ctx.conf(), "padding"), reflect));
  if (y != dy.shape) {
    throw Error(ErrorKind::kValue) << op_type << ": dy " << dy.shape.ToString()
                                   << " must be like " << like.shape.ToString() << " padded, "
                                   << y.ToString();
  }
  ctx.Output("dx") = BlobDesc{like.shape, dy.data_type};
}

// Batch and channel axes split; the ops are linear, so partial sums pass through.
void GetPad2dSbp(SbpContext& ctx, bool is_grad) {
  for (int64_t axis = 0; axis < 2; ++axis) {
    ctx.NewSignature().SplitAllInputs(axis).SplitAllOutputs(axis).Build();
  }
  if (is_grad) {
    ctx.NewSignature().PartialSum("dy").Broadcast("like").PartialSum("dx").Build();
  } else {
    ctx.NewSignature().PartialSum("x").PartialSum("y").Build();
  }
  ctx.NewSignature().BroadcastAllInputs().BroadcastAllOutputs().Build();
}

GradFn Pad2dGrad(const std::string& grad_op_type) {
  return [grad_op_type](GradContext& ctx) {
    if (!ctx.NeedInputGrad("x")) { return; }
    std::string dx = ctx.AddOp("x_grad",
                               OpConfBuilder(grad_op_type, "")
                                   .Input("dy", ctx.OutputGrad("y"))
                                   .Input("like", ctx.Input("x"))
                                   .Attr("padding", Int64ListAttr(ctx.op(), "padding")),
                               "dx");
    ctx.SetInputGrad("x", dx);
  };
}

}  // namespace

REGISTER_OP("pad")
    .Input("x")
    .Output("y")
    .RequiredAttr<std::vector<int64_t>>("padding_before")
    .RequiredAttr<std::vector<int64_t>>("padding_after")
    .Attr<double>("floating_constant_value", 0.0)
    .Attr<int64_t>("integral_constant_value", 0)
    .SetInferFn(InferPad)
    .SetSbpFn(GetPadSbp)
    .SetGradFn(GeneratePadGrad);

REGISTER_OP("reflection_pad2d")
    .Input("x")
    .Output("y")
    .RequiredAttr<std::vector<int64_t>>("padding")
    .SetInferFn([](InferContext& ctx) { InferPad2d(ctx, "reflection_pad2d", true); })
    .SetSbpFn([](SbpContext& ctx) { GetPad2dSbp(ctx, false); })
    .SetGradFn(Pad2dGrad("reflection_pad2d_grad"));

REGISTER_OP("reflection_pad2d_grad")
    .Input("dy")
    .Input("like")
    .Output("dx")
    .RequiredAttr<std::vector<int64_t>>("padding")
    .NoGradInput("like")
    .SetInferFn([](InferContext& ctx) { InferPad2dGrad(ctx, "reflection_pad2d_grad", true); })
    .SetSbpFn([](SbpContext& ctx) { GetPad2dSbp(ctx, true); })
    .NonDifferentiable();

REGISTER_OP("replication_pad2d")
    .Input("x")
    .Output("y")
    .RequiredAttr<std::vector<int64_t>>("padding")
    .SetInferFn([](InferContext& ctx) { InferPad2d(ctx, "replication_pad2d", false); })
    .SetSbpFn([](SbpContext& ctx) { GetPad2dSbp(ctx, false); })
    .SetGradFn(Pad2dGrad("replication_pad2d_grad"));

REGISTER_OP("replication_pad2d_grad")
    .Input("dy")
    .Input("like")
    .Output("dx")
    .RequiredAttr<std::vector<int64_t>>("padding")
    .NoGradInput("like")
    .SetInferFn([](InferContext& ctx) { InferPad2dGrad(ctx, "replication_pad2d_grad", false); })
    .SetSbpFn([](SbpContext& ctx) { GetPad2dSbp(ctx, true); })
    .NonDifferentiable();

}  // namespace oneflow
