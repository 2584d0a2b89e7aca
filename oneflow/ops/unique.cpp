// unique_with_counts (OneFlow 0.3's flow.experimental.unique_with_counts, TensorFlow's
// tf.unique_with_counts): for a 1-D x of n elements, y holds its distinct values in the order
// they first appear, idx[i] the position of x[i] in y, count[j] how often y[j] occurs, and
// num_unique their number. y and count keep n entries (static shapes), zero beyond num_unique.
// idx, count and num_unique have the out_idx dtype (int32 or int64).

#include "oneflow/common/data_type.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"

namespace oneflow {

REGISTER_OP("unique_with_counts")
    .Input("x")
    .Output("y")
    .Output("idx")
    .Output("count")
    .Output("num_unique")
    .Attr<DataType>("out_idx", kInt32)
    .KernelDataTypeFrom("x")
    .SetInferFn([](InferContext& ctx) {
      const std::string op_type = "unique_with_counts";
      const BlobDesc& x = ctx.Input("x");
      CheckDataTypeIn(op_type, "x", x.data_type, {kFloat, kDouble, kInt8, kInt32, kInt64, kUInt8});
      const DataType out_idx = ctx.Attr<DataType>("out_idx");
      CheckDataTypeIn(op_type, "out_idx", out_idx, {kInt32, kInt64});
      if (x.shape.num_axes() != 1) {
        throw Error(ErrorKind::kValue) << op_type << ": x must be 1-D, got shape "
                                       << x.shape.ToString();
      }
      ctx.Output("y") = x;
      ctx.Output("idx") = BlobDesc{x.shape, out_idx};
      ctx.Output("count") = BlobDesc{x.shape, out_idx};
      ctx.Output("num_unique") = BlobDesc{Shape({1}), out_idx};
    })
    .SetSbpFn([](SbpContext& ctx) {
      ctx.NewSignature().BroadcastAllInputs().BroadcastAllOutputs().Build();
    })
    .NonDifferentiable();

}  // namespace oneflow
