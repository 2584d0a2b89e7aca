// ctc_loss: the Connectionist Temporal Classification loss (Graves et al., 2006) of time-major
// log-probabilities log_probs (T, N, C) against padded targets (N, S), one loss per batch
// element: loss[b] = -log sum over the alignments of targets[b, :target_lengths[b]] to
// log_probs[:input_lengths[b], b, :]. The forward kernel also returns the log-space forward
// variables alpha (N, T, 2S + 1) for its gradient op ctc_loss_grad, which runs the backward
// (beta) recursion and gives d loss / d log_probs as PyTorch and OneFlow do. Reductions are
// composed in Python (python/oneflow/ops/loss_ops.py).

#include "oneflow/common/data_type.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"

namespace oneflow {

namespace {

// The sizes T, N and S of log_probs (T, N, C) and targets (N, S).
struct CtcDims {
  int64_t max_input_length;
  int64_t batch_size;
  int64_t max_target_length;
};

// Checks log_probs (T, N, C), targets (N, S), input_lengths (N,), target_lengths (N,) and
// blank in [0, C): ValueError/TypeError naming `op_type` and the shapes.
CtcDims CheckCtcInputs(const std::string& op_type, const InferContext& ctx) {
  const BlobDesc& log_probs = ctx.Input("log_probs");
  const BlobDesc& targets = ctx.Input("targets");
  const BlobDesc& input_lengths = ctx.Input("input_lengths");
  const BlobDesc& target_lengths = ctx.Input("target_lengths");
  CheckFloatingDataType(op_type, "log_probs", log_probs.data_type);
  CheckDataTypeIn(op_type, "targets", targets.data_type, {kInt32, kInt64});
  CheckDataTypeIn(op_type, "input_lengths", input_lengths.data_type, {kInt32, kInt64});
  CheckDataTypeIn(op_type, "target_lengths", target_lengths.data_type, {kInt32, kInt64});
  if (log_probs.shape.num_axes() != 3) {
    throw Error(ErrorKind::kValue)
        << op_type << ": log_probs must be 3-D (T, N, C) (time, batch, classes), got "
        << log_probs.shape.ToString();
  }
  const int64_t batch_size = log_probs.shape.At(1);
  const int64_t num_classes = log_probs.shape.At(2);
  if (targets.shape.num_axes() != 2 || targets.shape.At(0) != batch_size) {
    throw Error(ErrorKind::kValue)
        << op_type << ": targets must be 2-D (N, S) with N = " << batch_size
        << ", the batch size of log_probs " << log_probs.shape.ToString() << ", got "
        << targets.shape.ToString();
  }
  for (const char* name : {"input_lengths", "target_lengths"}) {
    const Shape& shape = ctx.Input(name).shape;
    if (shape.num_axes() != 1 || shape.At(0) != batch_size) {
      throw Error(ErrorKind::kValue) << op_type << ": " << name << " must have shape ("
                                     << batch_size << ",), the batch size of log_probs "
                                     << log_probs.shape.ToString() << ", got " << shape.ToString();
    }
  }
  const int64_t blank = ctx.Attr<int64_t>("blank");
  if (blank < 0 || blank >= num_classes) {
    throw Error(ErrorKind::kValue)
        << op_type << ": blank " << blank << " is out of range [0, " << num_classes
        << ") for log_probs " << log_probs.shape.ToString() << " with " << num_classes
        << " classes";
  }
  return CtcDims{log_probs.shape.At(0), batch_size, targets.shape.At(1)};
}

Shape AlphaShape(const CtcDims& dims) {
  return Shape({dims.batch_size, dims.max_input_length, 2 * dims.max_target_length + 1});
}

void InferCtcLoss(InferContext& ctx) {
  const CtcDims dims = CheckCtcInputs("ctc_loss", ctx);
  const DataType data_type = ctx.Input("log_probs").data_type;
  ctx.Output("loss") = BlobDesc{Shape({dims.batch_size}), data_type};
  ctx.Output("alpha") = BlobDesc{AlphaShape(dims), data_type};
}

void InferCtcLossGrad(InferContext& ctx) {
  const std::string op_type = "ctc_loss_grad";
  const CtcDims dims = CheckCtcInputs(op_type, ctx);
  const BlobDesc& log_probs = ctx.Input("log_probs");
  const BlobDesc& alpha = ctx.Input("alpha");
  const BlobDesc& dy = ctx.Input("dy");
  CheckSameDataType(op_type, "log_probs", log_probs.data_type, "alpha", alpha.data_type);
  CheckSameDataType(op_type, "log_probs", log_probs.data_type, "dy", dy.data_type);
  if (alpha.shape != AlphaShape(dims)) {
    throw Error(ErrorKind::kValue)
        << op_type << ": alpha " << alpha.shape.ToString() << " must have shape "
        << AlphaShape(dims).ToString() << " (N, T, 2S + 1) for log_probs "
        << log_probs.shape.ToString() << " and targets " << ctx.Input("targets").shape.ToString();
  }
  if (dy.shape != Shape({dims.batch_size})) {
    throw Error(ErrorKind::kValue) << op_type << ": dy " << dy.shape.ToString()
                                   << " must have shape (" << dims.batch_size << ",), one per "
                                   << "batch element of log_probs " << log_probs.shape.ToString();
  }
  ctx.Output("log_probs_diff") = log_probs;
}

// Batch elements are independent: every batch-indexed blob splits on its batch axis (1 for
// log_probs and its diff, 0 for the others).
SbpContext::SignatureBuilder& SplitBatch(SbpContext::SignatureBuilder& builder,
                                         const std::vector<std::string>& batch_first) {
  for (const std::string& argument : batch_first) { builder.Split(argument, 0); }
  return builder;
}

void GenerateCtcLossGrad(GradContext& ctx) {
  if (!ctx.NeedInputGrad("log_probs")) { return; }
  std::string diff = ctx.AddOp("log_probs_grad",
                               OpConfBuilder("ctc_loss_grad", "")
                                   .Input("dy", ctx.OutputGrad("loss"))
                                   .Input("log_probs", ctx.Input("log_probs"))
                                   .Input("targets", ctx.Input("targets"))
                                   .Input("input_lengths", ctx.Input("input_lengths"))
                                   .Input("target_lengths", ctx.Input("target_lengths"))
                                   .Input("alpha", ctx.Output("alpha"))
                                   .Attr<int64_t>("blank", ctx.Attr<int64_t>("blank"))
                                   .Attr<bool>("zero_infinity", ctx.Attr<bool>("zero_infinity")),
                               "log_probs_diff");
  ctx.SetInputGrad("log_probs", diff);
}

}  // namespace

REGISTER_OP("ctc_loss")
    .Input("log_probs")
    .Input("targets")
    .Input("input_lengths")
    .Input("target_lengths")
    .Output("loss")
    .Output("alpha")  // log-space forward variables, read only by ctc_loss_grad
    .Attr<int64_t>("blank", 0)
    .Attr<bool>("zero_infinity", false)  // impossible alignments give loss 0 and gradient 0
    .NoGradInput("targets")
    .NoGradInput("input_lengths")
    .NoGradInput("target_lengths")
    .KernelDataTypeFrom("log_probs")
    .SetInferFn(InferCtcLoss)
    .SetSbpFn([](SbpContext& ctx) {
      auto split = ctx.NewSignature();
      split.Split("log_probs", 1);
      SplitBatch(split, {"targets", "input_lengths", "target_lengths", "loss", "alpha"}).Build();
      ctx.NewSignature().BroadcastAllInputs().BroadcastAllOutputs().Build();
    })
    .SetGradFn(GenerateCtcLossGrad);

REGISTER_OP("ctc_loss_grad")
    .Input("dy")
    .Input("log_probs")
    .Input("targets")
    .Input("input_lengths")
    .Input("target_lengths")
    .Input("alpha")
    .Output("log_probs_diff")
    .Attr<int64_t>("blank", 0)
    .Attr<bool>("zero_infinity", false)
    .KernelDataTypeFrom("log_probs")
    .SetInferFn(InferCtcLossGrad)
    .SetSbpFn([](SbpContext& ctx) {
      auto split = ctx.NewSignature();
      split.Split("log_probs", 1).Split("log_probs_diff", 1);
      SplitBatch(split, {"dy", "targets", "input_lengths", "target_lengths", "alpha"}).Build();
      ctx.NewSignature().BroadcastAllInputs().BroadcastAllOutputs().Build();
      // log_probs_diff is linear in dy (each batch element's row is scaled by dy[b]).
      ctx.NewSignature()
          .PartialSum("dy")
          .Broadcast("log_probs")
          .Broadcast("targets")
          .Broadcast("input_lengths")
          .Broadcast("target_lengths")
          .Broadcast("alpha")
          .PartialSum("log_probs_diff")
          .Build();
    })
    .NonDifferentiable();

}  // namespace oneflow
