// "assign": writes `value` into the variable `ref` in place (flow.assign(ref, value)).
// "logical_slice_assign": writes `value` into the slice start:stop:step of the logical `ref`
// (flow.experimental.logical_slice_assign); each device writes the part of the slice it holds.
// Neither has outputs; the variable_ordering pass runs them after every other reader of `ref` in
// the same iteration (and several of them in job order), so readers see the value from before
// the assignment and the next iteration sees the new one. Not differentiable: a gradient never
// flows through an assignment.
#include "oneflow/framework/index_functions.h"
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

void InferLogicalSliceAssign(InferContext& ctx) {
  const std::string op_type = "logical_slice_assign";
  const BlobDesc& ref = ctx.Input("ref");
  const BlobDesc& value = ctx.Input("value");
  CheckSameDataType(op_type, "ref", ref.data_type, "value", value.data_type);
  const SliceSpec spec{ctx.Attr<std::vector<int64_t>>("start"),
                       ctx.Attr<std::vector<int64_t>>("stop"),
                       ctx.Attr<std::vector<int64_t>>("step")};
  for (int64_t step : spec.step) {
    if (step <= 0) {
      throw Error(ErrorKind::kValue) << op_type << ": steps must be positive, got " << step;
    }
  }
  const Shape sliced(SlicedDims(op_type, ref.shape, spec));
  if (value.shape != sliced) {
    throw Error(ErrorKind::kValue) << op_type << ": value " << value.shape.ToString()
                                   << " must have the shape of the slice of ref "
                                   << ref.shape.ToString() << ", which is " << sliced.ToString();
  }
}

// ref keeps its variable's layout, however it is split; every device gets all of value and
// writes what falls in its part.
void GetLogicalSliceAssignSbp(SbpContext& ctx) {
  const int64_t num_axes = ctx.LogicalInput("ref").shape.num_axes();
  for (int64_t axis = 0; axis < num_axes; ++axis) {
    ctx.NewSignature().Split("ref", axis).Broadcast("value").Build();
  }
  ctx.NewSignature().BroadcastAllInputs().Build();
}

}  // namespace

REGISTER_OP("logical_slice_assign")
    .Input("ref")
    .Input("value")
    .MutableInput("ref")
    .RequiredAttr<std::vector<int64_t>>("start")
    .RequiredAttr<std::vector<int64_t>>("stop")
    .RequiredAttr<std::vector<int64_t>>("step")
    .KernelDataTypeFrom("ref")
    .SetInferFn(InferLogicalSliceAssign)
    .SetSbpFn(GetLogicalSliceAssignSbp)
    .NonDifferentiable();

REGISTER_OP("assign")
    .Input("ref")
    .Input("value")
    .MutableInput("ref")
    .KernelDataTypeFrom("ref")
    .SetInferFn(InferAssign)
    .SetSbpFn(GetAssignSbp)
    .NonDifferentiable();

}  // namespace oneflow
