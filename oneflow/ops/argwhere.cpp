// argwhere: the indices of the non-zero elements of `input`, one row of its ndim coordinates
// per element, in row-major order (numpy.argwhere). How many there are depends on the data, so
// `out` is allocated for the most, (elem_count, ndim) of `dtype` (int32 or int64), and `size`
// ((1,) int64) says how many of its first rows are valid; the rest are zero. On one device `out`
// is a dynamic blob (its shape in each iteration has only the valid rows) that other ops read;
// on more, only the valid rows are handed back to Python (flow.argwhere, flow.where).

#include "oneflow/common/data_type.h"
#include "oneflow/framework/index_functions.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"

namespace oneflow {

REGISTER_OP("argwhere")
    .Input("input")
    .Output("out")
    .Output("size")
    .Attr<DataType>("dtype", kInt32)
    .KernelDataTypeFrom("input")
    .InfersDynamic()
    .SetInferFn([](InferContext& ctx) {
      const BlobDesc& input = ctx.Input("input");
      CheckDataTypeIn("argwhere", "input", input.data_type,
                      {kFloat, kDouble, kInt8, kInt32, kInt64, kUInt8});
      const DataType dtype = ctx.Attr<DataType>("dtype");
      CheckDataTypeIn("argwhere", "dtype", dtype, IndexDataTypes());
      ctx.Output("out") =
          BlobDesc{Shape({input.shape.elem_count(), input.shape.num_axes()}), dtype, true};
      ctx.Output("size") = BlobDesc{Shape({1}), kInt64};
    })
    .SetSbpFn([](SbpContext& ctx) {
      ctx.NewSignature().BroadcastAllInputs().BroadcastAllOutputs().Build();
    })
    .NonDifferentiable();

}  // namespace oneflow
