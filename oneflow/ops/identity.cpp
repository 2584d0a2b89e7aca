// identity: out = in (a copy). Its gradient passes the output's gradient through.

#include "oneflow/common/data_type.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"
#include "oneflow/sbp/sbp_helpers.h"

namespace oneflow {

REGISTER_OP("identity")
    .Input("in")
    .Output("out")
    .SetInferFn([](InferContext& ctx) {
      InferElementwiseUnary(ctx, "identity", "in", "out",
                            {kFloat, kDouble, kFloat16, kInt8, kInt32, kInt64, kUInt8});
    })
    .SetSbpFn([](SbpContext& ctx) {
      AddElementwiseSignatures(ctx, ctx.LogicalInput("in").shape.num_axes(), true);
    })
    .SetGradFn([](GradContext& ctx) {
      if (ctx.NeedInputGrad("in")) { ctx.SetInputGrad("in", ctx.OutputGrad("out")); }
    });

}  // namespace oneflow
