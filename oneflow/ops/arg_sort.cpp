// Index-valued ops along one axis: argmax, argmin, top_k (indices of the k largest, OneFlow's
// top_k returns only indices), argsort, and sort (values). Indices are int32, as in OneFlow.
// Ties resolve to the lowest index (argmax/argmin: the first occurrence; top_k and the stable
// sorts: in index order). NaN counts as larger than any number. None is differentiable:
// OneFlow 0.3 declares no gradient for sort either.
//
// SBP: every row along `axis` is independent, so a split on any other axis passes through
// (argmax/argmin drop `axis`, so later output axes shift down by one); all broadcast.

#include "oneflow/common/data_type.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"
#include "oneflow/sbp/sbp_helpers.h"

namespace oneflow {

namespace {

const std::vector<DataType> kSortableDataTypes = {kFloat, kDouble, kFloat16, kInt8, kInt32, kInt64};

int64_t SortAxis(InferContext& ctx, const std::string& op_type) {
  const Shape& shape = ctx.Input("in").shape;
  if (shape.num_axes() == 0) {
    throw Error(ErrorKind::kValue) << op_type << ": needs a blob with at least one axis";
  }
  return NormalizeAxis(op_type, "axis", ctx.Attr<int64_t>("axis"), shape.num_axes());
}

// `drops_axis`: the output lacks `axis` (argmax, argmin), else it has the input's rank.
SbpFn MakeAlongAxisSbp(bool drops_axis) {
  return [drops_axis](SbpContext& ctx) {
    const Shape& shape = ctx.LogicalInput("in").shape;
    int64_t axis = ctx.Attr<int64_t>("axis");
    if (axis < 0) { axis += shape.num_axes(); }
    for (int64_t other = 0; other < shape.num_axes(); ++other) {
      if (other == axis) { continue; }
      int64_t out_axis = drops_axis && other > axis ? other - 1 : other;
      ctx.NewSignature().Split("in", other).Split("out", out_axis).Build();
    }
    ctx.NewSignature().Broadcast("in").Broadcast("out").Build();
  };
}

InferFn MakeArgInfer(const std::string& op_type) {
  return [op_type](InferContext& ctx) {
    const BlobDesc& in = ctx.Input("in");
    CheckDataTypeIn(op_type, "in", in.data_type, kSortableDataTypes);
    int64_t axis = SortAxis(ctx, op_type);
    if (in.shape.At(axis) == 0) {
      throw Error(ErrorKind::kValue) << op_type << ": axis " << axis << " of " << in.shape.ToString()
                                     << " is empty, so it has no " << op_type.substr(3);
    }
    std::vector<int64_t> dims = in.shape.dims();
    dims.erase(dims.begin() + axis);
    if (dims.empty()) { dims.push_back(1); }  // OneFlow's: the index of a 1-D input is (1,)
    ctx.Output("out") = BlobDesc{Shape(dims), kInt32};
  };
}

void InferTopK(InferContext& ctx) {
  const BlobDesc& in = ctx.Input("in");
  CheckDataTypeIn("top_k", "in", in.data_type, kSortableDataTypes);
  int64_t axis = SortAxis(ctx, "top_k");
  int64_t k = ctx.Attr<int64_t>("k");
  if (k < 1 || k > in.shape.At(axis)) {
    throw Error(ErrorKind::kValue) << "top_k: k = " << k << " must be in [1, " << in.shape.At(axis)
                                   << "], the size of axis " << axis << " of "
                                   << in.shape.ToString();
  }
  Shape out = in.shape;
  out.Set(axis, k);
  ctx.Output("out") = BlobDesc{out, kInt32};
}

InferFn MakeSortInfer(const std::string& op_type, bool indices) {
  return [op_type, indices](InferContext& ctx) {
    const BlobDesc& in = ctx.Input("in");
    CheckDataTypeIn(op_type, "in", in.data_type, kSortableDataTypes);
    SortAxis(ctx, op_type);
    const std::string direction = ctx.Attr<std::string>("direction");
    if (direction != "ASCENDING" && direction != "DESCENDING") {
      throw Error(ErrorKind::kValue) << op_type << ": direction must be \"ASCENDING\" or "
                                     << "\"DESCENDING\", got \"" << direction << "\"";
    }
    ctx.Output("out") = BlobDesc{in.shape, indices ? kInt32 : in.data_type};
  };
}

}  // namespace

REGISTER_OP("argmax")
    .Input("in")
    .Output("out")
    .Attr<int64_t>("axis", -1)
    .SetInferFn(MakeArgInfer("argmax"))
    .SetSbpFn(MakeAlongAxisSbp(true))
    .KernelDataTypeFrom("in")
    .NonDifferentiable();

REGISTER_OP("argmin")
    .Input("in")
    .Output("out")
    .Attr<int64_t>("axis", -1)
    .SetInferFn(MakeArgInfer("argmin"))
    .SetSbpFn(MakeAlongAxisSbp(true))
    .KernelDataTypeFrom("in")
    .NonDifferentiable();

REGISTER_OP("top_k")
    .Input("in")
    .Output("out")
    .Attr<int64_t>("axis", -1)
    .RequiredAttr<int64_t>("k")
    .Attr<bool>("sorted", true)
    .SetInferFn(InferTopK)
    .SetSbpFn(MakeAlongAxisSbp(false))
    .KernelDataTypeFrom("in")
    .NonDifferentiable();

REGISTER_OP("sort")
    .Input("in")
    .Output("out")
    .Attr<int64_t>("axis", -1)
    .Attr<std::string>("direction", "ASCENDING")
    .SetInferFn(MakeSortInfer("sort", false))
    .SetSbpFn(MakeAlongAxisSbp(false))
    .NonDifferentiable();

REGISTER_OP("argsort")
    .Input("in")
    .Output("out")
    .Attr<int64_t>("axis", -1)
    .Attr<std::string>("direction", "ASCENDING")
    .SetInferFn(MakeSortInfer("argsort", true))
    .SetSbpFn(MakeAlongAxisSbp(false))
    .KernelDataTypeFrom("in")
    .NonDifferentiable();

}  // namespace oneflow
