// ctc_greedy_decoder: best-path decoding of time-major log-probabilities log_probs (T, N, C)
// (OneFlow's flow.nn.ctc_greedy_decoder, TensorFlow's tf.nn.ctc_greedy_decoder): per batch
// element b, the most likely class at each of the first input_lengths[b] steps; with
// merge_repeated a class equal to the previous step's is dropped; the blank, class C - 1, is
// dropped. decoded (N, T) int64 holds the remaining classes from the left, zero-padded;
// neg_sum_logits (N, 1) is minus the sum of the maximal log-probabilities over those steps.

#include "oneflow/common/data_type.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"

namespace oneflow {

REGISTER_OP("ctc_greedy_decoder")
    .Input("log_probs")
    .Input("input_lengths")
    .Output("decoded")
    .Output("neg_sum_logits")
    .Attr<bool>("merge_repeated", true)
    .KernelDataTypeFrom("log_probs")
    .SetInferFn([](InferContext& ctx) {
      const std::string op_type = "ctc_greedy_decoder";
      const BlobDesc& log_probs = ctx.Input("log_probs");
      const BlobDesc& input_lengths = ctx.Input("input_lengths");
      CheckFloatingDataType(op_type, "log_probs", log_probs.data_type);
      CheckDataTypeIn(op_type, "input_lengths", input_lengths.data_type, {kInt32, kInt64});
      if (log_probs.shape.num_axes() != 3 || log_probs.shape.At(2) < 1) {
        throw Error(ErrorKind::kValue)
            << op_type << ": log_probs must be 3-D (T, N, C) (time, batch, classes) with C >= 1, "
            << "got " << log_probs.shape.ToString();
      }
      const int64_t batch_size = log_probs.shape.At(1);
      if (input_lengths.shape != Shape({batch_size})) {
        throw Error(ErrorKind::kValue)
            << op_type << ": input_lengths must have shape (" << batch_size
            << ",), the batch size of log_probs " << log_probs.shape.ToString() << ", got "
            << input_lengths.shape.ToString();
      }
      ctx.Output("decoded") = BlobDesc{Shape({batch_size, log_probs.shape.At(0)}), kInt64};
      ctx.Output("neg_sum_logits") = BlobDesc{Shape({batch_size, 1}), log_probs.data_type};
    })
    .SetSbpFn([](SbpContext& ctx) {
      ctx.NewSignature()
          .Split("log_probs", 1)
          .Split("input_lengths", 0)
          .Split("decoded", 0)
          .Split("neg_sum_logits", 0)
          .Build();
      ctx.NewSignature().BroadcastAllInputs().BroadcastAllOutputs().Build();
    })
    .NonDifferentiable();

}  // namespace oneflow
