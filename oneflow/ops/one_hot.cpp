// one_hot: out = indices.shape + [depth], on_value where the last coordinate equals the index
// and off_value elsewhere (the Python wrapper moves the new axis for axis != -1). The values
// are attributes in floating and integral form; `dtype` is out's dtype. Not differentiable.

#include "oneflow/common/data_type.h"
#include "oneflow/framework/index_functions.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"

namespace oneflow {

REGISTER_OP("one_hot")
    .Input("indices")
    .Output("out")
    .RequiredAttr<int64_t>("depth")
    .Attr<double>("floating_on_value", 1.0)
    .Attr<double>("floating_off_value", 0.0)
    .Attr<int64_t>("integer_on_value", 1)
    .Attr<int64_t>("integer_off_value", 0)
    .RequiredAttr<DataType>("dtype")
    .SetInferFn([](InferContext& ctx) {
      const BlobDesc& indices = ctx.Input("indices");
      CheckDataTypeIn("one_hot", "indices", indices.data_type, IndexDataTypes());
      const DataType data_type = ctx.Attr<DataType>("dtype");
      CheckDataTypeIn("one_hot", "dtype", data_type, MovableDataTypes());
      const int64_t depth = ctx.Attr<int64_t>("depth");
      if (depth <= 0) {
        throw Error(ErrorKind::kValue) << "one_hot: depth " << depth << " must be positive";
      }
      std::vector<int64_t> dims = indices.shape.dims();
      dims.push_back(depth);
      ctx.Output("out") = BlobDesc{Shape(dims), data_type};
    })
    .SetSbpFn([](SbpContext& ctx) {
      const int64_t num_axes = ctx.LogicalInput("indices").shape.num_axes();
      for (int64_t axis = 0; axis < num_axes; ++axis) {
        ctx.NewSignature().Split("indices", axis).Split("out", axis).Build();
      }
      ctx.NewSignature().Broadcast("indices").Broadcast("out").Build();
    })
    .NonDifferentiable();

}  // namespace oneflow
