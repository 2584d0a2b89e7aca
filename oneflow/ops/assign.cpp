// "assign": writes `value` into the variable `ref` in place (flow.assign(ref, value)). It has no
// outputs; the variable_ordering pass runs it after every other reader of `ref` in the same
// iteration, so readers see the value from before the assignment and the next iteration sees
// the new one. Not differentiable: a gradient never flows through an assignment.
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"

namespace oneflow {
namespace {

void InferAssign(InferContext& ctx) {
  const BlobDesc& ref = ctx.Input("ref");
  const BlobDesc& value = ctx.Input("value");
  CheckSameDataType("assign", "ref", ref.data_type, "value", value.data_type);
  if (value.shape != ref.shape) {
    throw Error(ErrorKind::kValue) << "assign: value " << value.shape.ToString()
                                   << " must have ref's shape " << ref.shape.ToString();
  }
}

// ref keeps its variable's layout (it is updated in place); value is laid out alike, so each
// device copies its own part.
void GetAssignSbp(SbpContext& ctx) {
  const int64_t num_axes = ctx.LogicalInput("ref").shape.num_axes();
  for (int64_t axis = 0; axis < num_axes; ++axis) {
    ctx.NewSignature().SplitAllInputs(axis).Build();
  }
  ctx.NewSignature().BroadcastAllInputs().Build();
}

}  // namespace

REGISTER_OP("assign")
    .Input("ref")
    .Input("value")
    .MutableInput("ref")
    .KernelDataTypeFrom("ref")
    .SetInferFn(InferAssign)
    .SetSbpFn(GetAssignSbp)
    .NonDifferentiable();

}  // namespace oneflow
