// Interface ops: how values enter and leave a job. "input" is a placeholder whose value is pushed
// from Python for each call; "return" hands its input back to Python; "watch" hands a blob to a
// Python handler while the job runs.
//
// A `dynamic` input is a mirrored placeholder whose devices get values of different shapes in
// one call (a ListNumpy argument with a different array per device, each within the declared
// bound): its output is dynamic, each device's register carrying its own value's shape. A return
// op reading a mirrored blob hands back each device's value on its own (used for dynamic ones,
// whose per-device shapes cannot be stacked), and a watch op reading one reports each device's
// value to a handler of its own (kernels/cpu/interface.cpp).
#include "oneflow/framework/op_registry.h"

namespace oneflow {
namespace {

void InferInput(InferContext& ctx) {
  BlobDesc& out = ctx.Output("out");
  out.shape = ctx.Attr<Shape>("shape");
  out.data_type = ctx.Attr<DataType>("dtype");
  out.is_dynamic = ctx.Attr<bool>("dynamic");
}

void GetInputSbp(SbpContext& ctx) {
  const int64_t batch_axis = ctx.Attr<int64_t>("batch_axis");
  if (batch_axis >= 0 && batch_axis < ctx.Attr<Shape>("shape").num_axes()) {
    ctx.NewSignature().Split("out", batch_axis).Build();
  } else {
    ctx.NewSignature().Broadcast("out").Build();
  }
}

// Each device of a return op writes its part of the result: any split, or broadcast.
void GetReturnSbp(SbpContext& ctx) {
  for (int64_t axis = 0; axis < ctx.LogicalInput("in").shape.num_axes(); ++axis) {
    ctx.NewSignature().Split("in", axis).Build();
  }
  ctx.NewSignature().BroadcastAllInputs().Build();
}

// A watch op hands the whole logical blob to Python, from one device.
void GetWholeInputSbp(SbpContext& ctx) { ctx.NewSignature().BroadcastAllInputs().Build(); }

}  // namespace

REGISTER_OP("input")
    .Output("out")
    .RequiredAttr<Shape>("shape")
    .RequiredAttr<DataType>("dtype")
    .Attr<int64_t>("batch_axis", 0)
    .Attr<bool>("dynamic", false)
    .InfersDynamic()
    .SetInferFn(InferInput)
    .SetSbpFn(GetInputSbp)
    .NonDifferentiable();

// No output: the kernel copies its input straight into the call's result.
REGISTER_OP("return")
    .Input("in")
    .SetInferFn([](InferContext&) {})
    .SetSbpFn(GetReturnSbp)
    .NonDifferentiable();

REGISTER_OP("watch")
    .Input("in")
    .Attr<int64_t>("handler_id", 0)
    .SetInferFn([](InferContext&) {})
    .SetSbpFn(GetWholeInputSbp)
    .NonDifferentiable();

}  // namespace oneflow
