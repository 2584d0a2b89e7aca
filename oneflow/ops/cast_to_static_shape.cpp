// cast_to_static_shape: out = in, a static blob. Its input may be dynamic (its shape depends on
// the data); as in OneFlow 0.3 it must then have its full (upper-bound) shape when the job runs,
// which the compute actor checks for every static output (oneflow/runtime/actors/).

#include "oneflow/framework/op_registry.h"
#include "oneflow/sbp/sbp_helpers.h"

namespace oneflow {

REGISTER_OP("cast_to_static_shape")
    .Input("in")
    .Output("out")
    .InfersDynamic()
    .SetInferFn([](InferContext& ctx) {
      const BlobDesc& in = ctx.Input("in");
      ctx.Output("out") = BlobDesc{in.shape, in.data_type, false};
    })
    .SetSbpFn([](SbpContext& ctx) {
      AddElementwiseSignatures(ctx, ctx.LogicalInput("in").shape.num_axes(), true);
    })
    .SetGradFn([](GradContext& ctx) {
      if (ctx.NeedInputGrad("in")) { ctx.SetInputGrad("in", ctx.OutputGrad("out")); }
    });

}  // namespace oneflow
