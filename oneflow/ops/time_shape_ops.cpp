// The ops that change a blob's time shape (framework/time_shape.h): repeat, acc, unpack, pack,
// and acc_tick (the compiler's; it passes on every N-th tick of a control edge). Their
// gradients are one another's: repeat <-> acc, unpack <-> pack.

#include "oneflow/common/data_type.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"
#include "oneflow/sbp/sbp_helpers.h"

namespace oneflow {

namespace {

const std::vector<DataType> kMovedDataTypes = {kFloat, kDouble, kFloat16, kInt8,
                                               kInt32, kInt64,  kUInt8};
const std::vector<DataType> kSummedDataTypes = {kFloat, kDouble, kInt8, kInt32, kInt64};

int64_t CycleLength(const InferContext& ctx, const std::string& attr) {
  const int64_t n = ctx.Attr<int64_t>(attr);
  if (n < 1) {
    throw Error(ErrorKind::kValue) << ctx.conf().op_type() << ": " << attr
                                   << " must be at least 1, got " << n;
  }
  return n;
}

// unpack / pack: dim 0 of `in` divided (multiplied) by N. Dim 0 is what they cut, so it stays
// whole on each device: the other axes may be split, and a partial sum stays one.
void InferRows(InferContext& ctx, bool unpack) {
  const std::string op_type = unpack ? "unpack" : "pack";
  const int64_t n = CycleLength(ctx, unpack ? "unpack_num" : "pack_num");
  InferElementwiseUnary(ctx, op_type, "in", "out", kMovedDataTypes);
  const Shape& in = ctx.Input("in").shape;
  if (in.num_axes() == 0) {
    throw Error(ErrorKind::kValue) << op_type << ": input must have at least one axis, got a "
                                   << "scalar";
  }
  std::vector<int64_t> dims = in.dims();
  if (unpack) {
    if (dims[0] % n != 0) {
      throw Error(ErrorKind::kValue)
          << "unpack: dim 0 of input " << in.ToString() << " must be divisible by unpack_num "
          << n;
    }
    dims[0] /= n;
  } else {
    dims[0] *= n;
  }
  ctx.Output("out").shape = Shape(dims);
}

void AddRowSignatures(SbpContext& ctx) {
  const int64_t num_axes = ctx.LogicalInput("in").shape.num_axes();
  for (int64_t axis = 1; axis < num_axes; ++axis) {
    ctx.NewSignature().Split("in", axis).Split("out", axis).Build();
  }
  ctx.NewSignature().PartialSum("in").PartialSum("out").Build();
  ctx.NewSignature().Broadcast("in").Broadcast("out").Build();
}

// The gradient of a time-shape op: the op of type `grad_type` with count attribute
// `grad_attr` = this op's N.
GradFn TimeShapeGrad(const std::string& grad_type, const std::string& attr,
                     const std::string& grad_attr) {
  return [=](GradContext& ctx) {
    if (!ctx.NeedInputGrad("in")) { return; }
    ctx.SetInputGrad("in", ctx.AddOp("in_grad", OpConfBuilder(grad_type, "")
                                                    .Input("in", ctx.OutputGrad("out"))
                                                    .Attr(grad_attr, ctx.Attr<int64_t>(attr))));
  };
}

}  // namespace

REGISTER_OP("repeat")
    .Input("in")
    .Output("out")
    .RequiredAttr<int64_t>("repeat_num")
    .SetInferFn([](InferContext& ctx) {
      CycleLength(ctx, "repeat_num");
      InferElementwiseUnary(ctx, "repeat", "in", "out", kMovedDataTypes);
    })
    .SetSbpFn([](SbpContext& ctx) {
      AddElementwiseSignatures(ctx, ctx.LogicalInput("in").shape.num_axes(), true);
    })
    .SetGradFn(TimeShapeGrad("acc", "repeat_num", "max_acc_num"));

REGISTER_OP("acc")
    .Input("in")
    .Output("out")
    .RequiredAttr<int64_t>("max_acc_num")
    .SetInferFn([](InferContext& ctx) {
      CycleLength(ctx, "max_acc_num");
      InferElementwiseUnary(ctx, "acc", "in", "out", kSummedDataTypes);
    })
    .SetSbpFn([](SbpContext& ctx) {
      AddElementwiseSignatures(ctx, ctx.LogicalInput("in").shape.num_axes(), true);
    })
    .SetGradFn(TimeShapeGrad("repeat", "max_acc_num", "repeat_num"));

REGISTER_OP("unpack")
    .Input("in")
    .Output("out")
    .RequiredAttr<int64_t>("unpack_num")
    .SetInferFn([](InferContext& ctx) { InferRows(ctx, true); })
    .SetSbpFn(AddRowSignatures)
    .SetGradFn(TimeShapeGrad("pack", "unpack_num", "pack_num"));

REGISTER_OP("pack")
    .Input("in")
    .Output("out")
    .RequiredAttr<int64_t>("pack_num")
    .SetInferFn([](InferContext& ctx) { InferRows(ctx, false); })
    .SetSbpFn(AddRowSignatures)
    .SetGradFn(TimeShapeGrad("unpack", "pack_num", "unpack_num"));

// Reads only control inputs; its (1,) int8 output is a tick.
REGISTER_OP("acc_tick")
    .Output("out")
    .RequiredAttr<int64_t>("max_acc_num")
    .SetInferFn([](InferContext& ctx) {
      CycleLength(ctx, "max_acc_num");
      ctx.Output("out").shape = Shape({1});
      ctx.Output("out").data_type = kInt8;
    })
    .SetSbpFn([](SbpContext& ctx) { ctx.NewSignature().BroadcastAllOutputs().Build(); })
    .NonDifferentiable();

}  // namespace oneflow
