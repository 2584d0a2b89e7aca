// sync_dynamic_resize: out = the first size[0] entries of `in` along `axis`, a dynamic blob (its
// shape depends on the data: `size`, a (1,) integer blob, is read when the job runs; OneFlow 0.3
// synchronised with the device to read it, hence the name). Its compiled shape, `in`'s, is the
// bound; a size outside [0, in.shape[axis]] fails when the job runs.

#include "oneflow/framework/index_functions.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"

namespace oneflow {

REGISTER_OP("sync_dynamic_resize")
    .Input("in")
    .Input("size")
    .Output("out")
    .Attr<int64_t>("axis", 0)
    .NoGradInput("size")
    .KernelDataTypeFrom("in")
    .InfersDynamic()
    .SetInferFn([](InferContext& ctx) {
      const BlobDesc& in = ctx.Input("in");
      const BlobDesc& size = ctx.Input("size");
      CheckDataTypeIn("sync_dynamic_resize", "in", in.data_type,
                      {kFloat, kDouble, kInt8, kInt32, kInt64, kUInt8});
      CheckDataTypeIn("sync_dynamic_resize", "size", size.data_type, IndexDataTypes());
      if (size.shape.elem_count() != 1) {
        throw Error(ErrorKind::kValue) << "sync_dynamic_resize: size must hold one value, got "
                                       << size.shape.ToString();
      }
      const int64_t axis = ctx.Attr<int64_t>("axis");
      if (axis < 0 || axis >= in.shape.num_axes()) {
        throw Error(ErrorKind::kValue) << "sync_dynamic_resize: axis " << axis
                                       << " is out of range for in " << in.shape.ToString();
      }
      ctx.Output("out") = BlobDesc{in.shape, in.data_type, true};
    })
    .SetSbpFn([](SbpContext& ctx) {
      ctx.NewSignature().BroadcastAllInputs().BroadcastAllOutputs().Build();
    })
    .NonDifferentiable();

}  // namespace oneflow
