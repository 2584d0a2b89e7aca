// copy_hd: a system op the compiler inserts where a blob crosses between host and GPU memory
// (never added from Python). It runs on the GPU's thread, on its stream: "h2d" copies a host
// (pinned) register into device memory, "d2h" a device register into pinned host memory. The
// output is the input, byte for byte.
#include "oneflow/framework/op_registry.h"

namespace oneflow {

REGISTER_OP("copy_hd")
    .Input("in")
    .Output("out")
    .RequiredAttr<std::string>("direction")
    .SetInferFn([](InferContext& ctx) {
      const std::string direction = ctx.Attr<std::string>("direction");
      OF_CHECK(direction == "h2d" || direction == "d2h")
          << "copy_hd: direction must be 'h2d' or 'd2h', not '" << direction << "'";
      ctx.Output("out") = ctx.Input("in");
    })
    .NonDifferentiable();

}  // namespace oneflow
