// slice_boxing: a system op the compiler inserts to convert a blob between two layouts (never
// added from Python). Its output is one box (`out_slice`) of the logical blob; each input holds
// the box listed for it in `in_slices` (begin..., extent... per input). The kernel writes the
// part of each input that falls inside `out_slice`; with `sum` the inputs are partial values of
// the whole output and are added; with `zero_fill` whatever no input covers is zero (a
// partial-sum part that holds nothing).
#include "oneflow/framework/op_registry.h"

namespace oneflow {

REGISTER_OP("slice_boxing")
    .VariadicInput("in", /*optional=*/true)
    .Output("out")
    .RequiredAttr<Shape>("logical_shape")
    .RequiredAttr<DataType>("dtype")
    .Attr<std::vector<int64_t>>("in_slices", {})
    .Attr<std::vector<int64_t>>("out_slice", {})
    .Attr<bool>("sum", false)
    .Attr<bool>("zero_fill", false)
    .SetInferFn([](InferContext& ctx) {
      const Shape logical = ctx.Attr<Shape>("logical_shape");
      const std::vector<int64_t> out_slice = ctx.Attr<std::vector<int64_t>>("out_slice");
      OF_CHECK(static_cast<int64_t>(out_slice.size()) == 2 * logical.num_axes())
          << "slice_boxing: out_slice has " << out_slice.size() << " values for "
          << logical.ToString();
      BlobDesc& out = ctx.Output("out");
      out.shape =
          Shape(std::vector<int64_t>(out_slice.begin() + logical.num_axes(), out_slice.end()));
      out.data_type = ctx.Attr<DataType>("dtype");
    })
    .NonDifferentiable();

}  // namespace oneflow
