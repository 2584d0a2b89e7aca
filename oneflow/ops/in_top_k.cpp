// in_top_k (flow.math.in_top_k): out[i] = 1 when class targets[i] is among the k largest of
// predictions[i, :], else 0, as TensorFlow's and OneFlow's: ties with the target count in its
// favour (it is in when fewer than k classes score strictly higher), and a target outside
// [0, classes) or a row with a non-finite prediction gives 0. targets (N,) int32 or int64,
// predictions (N, classes) float32 or float64, k >= 0; out (N,) int8. Not differentiable.
// Kernel: oneflow/kernels/cpu/in_top_k.cpp.

#include "oneflow/common/data_type.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"

namespace oneflow {

namespace {

void InferInTopK(InferContext& ctx) {
  const BlobDesc& targets = ctx.Input("targets");
  const BlobDesc& predictions = ctx.Input("predictions");
  CheckDataTypeIn("in_top_k", "targets", targets.data_type, {kInt32, kInt64});
  CheckFloatingDataType("in_top_k", "predictions", predictions.data_type);
  if (targets.shape.num_axes() != 1 || predictions.shape.num_axes() != 2 ||
      targets.shape.At(0) != predictions.shape.At(0)) {
    throw Error(ErrorKind::kValue) << "in_top_k: targets must have shape (N,) and predictions "
                                   << "(N, classes), got " << targets.shape.ToString() << " and "
                                   << predictions.shape.ToString();
  }
  if (ctx.Attr<int64_t>("k") < 0) {
    throw Error(ErrorKind::kValue)
        << "in_top_k: k must be non-negative, got " << ctx.Attr<int64_t>("k");
  }
  ctx.Output("out") = BlobDesc{targets.shape, kInt8};
}

}  // namespace

REGISTER_OP("in_top_k")
    .Input("targets")
    .Input("predictions")
    .Output("out")
    .RequiredAttr<int64_t>("k")
    .KernelDataTypeFrom("predictions")
    .SetInferFn(InferInTopK)
    .SetSbpFn([](SbpContext& ctx) {
      ctx.NewSignature().Split("targets", 0).Split("predictions", 0).Split("out", 0).Build();
      ctx.NewSignature().Broadcast("targets").Broadcast("predictions").Broadcast("out").Build();
    })
    .NonDifferentiable();

}  // namespace oneflow
