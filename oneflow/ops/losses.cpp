// Fused losses (flow.nn.softmax_cross_entropy_with_logits, sigmoid_cross_entropy_with_logits,
// flow.smooth_l1_loss; the other losses are composed in python/oneflow/ops/loss_ops.py). Labels
// get no gradient, as in OneFlow.
//   softmax_cross_entropy(prediction (N..., C), label like it) -> prob, out (N...):
//       out = -sum_c label_c log softmax(prediction)_c;  d prediction = (prob sum(label) - label) dy
//   sigmoid_cross_entropy(prediction, label) -> out, elementwise, stable for any logit:
//       out = max(x, 0) - x z + log(1 + exp(-|x|));       d prediction = (sigmoid(x) - z) dy
//   smooth_l1_loss(prediction, label; beta) -> loss, elementwise with d = prediction - label:
//       0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (beta = 0: |d|)

#include "oneflow/common/data_type.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"
#include "oneflow/sbp/sbp_helpers.h"

namespace oneflow {

namespace {

void CheckSameShapeFloating(const std::string& op_type, const BlobDesc& prediction,
                            const BlobDesc& label) {
  CheckFloatingOrHalfDataType(op_type, "prediction", prediction.data_type);
  CheckSameDataType(op_type, "prediction", prediction.data_type, "label", label.data_type);
  if (prediction.shape != label.shape) {
    throw Error(ErrorKind::kValue) << op_type << ": label " << label.shape.ToString()
                                   << " must have prediction's shape "
                                   << prediction.shape.ToString();
  }
}

void CheckDy(const std::string& op_type, const BlobDesc& dy, const Shape& expected,
             DataType data_type) {
  CheckSameDataType(op_type, "prediction", data_type, "dy", dy.data_type);
  if (dy.shape != expected) {
    throw Error(ErrorKind::kValue) << op_type << ": dy " << dy.shape.ToString()
                                   << " must have shape " << expected.ToString();
  }
}

Shape WithoutLastAxis(const Shape& shape) {
  std::vector<int64_t> dims;
  for (int64_t a = 0; a + 1 < shape.num_axes(); ++a) { dims.push_back(shape.At(a)); }
  return Shape(dims);
}

// Example axes (all but the class axis) may be split; the per-example output with them.
void AddExampleSignatures(SbpContext& ctx, int64_t num_example_axes) {
  for (int64_t axis = 0; axis < num_example_axes; ++axis) {
    ctx.NewSignature().SplitAllInputs(axis).SplitAllOutputs(axis).Build();
  }
  ctx.NewSignature().BroadcastAllInputs().BroadcastAllOutputs().Build();
}

// Gradient rule of an op with inputs (prediction, label) and one loss output `output`: emits
// `grad_type`(extra, label, dy) -> prediction_diff, `extra` being the input or output named.
GradFn LossGrad(const std::string& grad_type, const std::string& first_argument,
                bool first_is_output, const std::string& output,
                const std::vector<std::string>& copied_attrs = {}) {
  return [=](GradContext& ctx) {
    if (!ctx.NeedInputGrad("prediction")) { return; }
    OpConfBuilder builder(grad_type, "");
    builder.Input(first_argument, first_is_output ? ctx.Output(first_argument)
                                                  : ctx.Input(first_argument))
        .Input("label", ctx.Input("label"))
        .Input("dy", ctx.OutputGrad(output));
    for (const std::string& attr : copied_attrs) {
      builder.Attr<double>(attr, ctx.Attr<double>(attr));
    }
    ctx.SetInputGrad("prediction", ctx.AddOp("prediction_grad", builder, "prediction_diff"));
  };
}

}  // namespace

REGISTER_OP("softmax_cross_entropy")
    .Input("prediction")
    .Input("label")
    .Output("prob")
    .Output("out")
    .NoGradInput("label")
    .SetInferFn([](InferContext& ctx) {
      const BlobDesc& prediction = ctx.Input("prediction");
      CheckSameShapeFloating("softmax_cross_entropy", prediction, ctx.Input("label"));
      if (prediction.shape.num_axes() < 1) {
        throw Error(ErrorKind::kValue)
            << "softmax_cross_entropy: prediction must have at least 1 axis (the classes)";
      }
      ctx.Output("prob") = prediction;
      ctx.Output("out") = BlobDesc{WithoutLastAxis(prediction.shape), prediction.data_type};
    })
    .SetSbpFn([](SbpContext& ctx) {
      AddExampleSignatures(ctx, ctx.LogicalInput("prediction").shape.num_axes() - 1);
    })
    .SetGradFn(LossGrad("softmax_cross_entropy_grad", "prob", true, "out"));

REGISTER_OP("softmax_cross_entropy_grad")
    .Input("prob")
    .Input("label")
    .Input("dy")
    .Output("prediction_diff")
    .SetInferFn([](InferContext& ctx) {
      const BlobDesc& prob = ctx.Input("prob");
      CheckSameShapeFloating("softmax_cross_entropy_grad", prob, ctx.Input("label"));
      CheckDy("softmax_cross_entropy_grad", ctx.Input("dy"), WithoutLastAxis(prob.shape),
              prob.data_type);
      ctx.Output("prediction_diff") = prob;
    })
    .SetSbpFn([](SbpContext& ctx) {
      AddExampleSignatures(ctx, ctx.LogicalInput("prob").shape.num_axes() - 1);
    })
    .NonDifferentiable();

REGISTER_OP("sigmoid_cross_entropy")
    .Input("prediction")
    .Input("label")
    .Output("out")
    .NoGradInput("label")
    .SetInferFn([](InferContext& ctx) {
      CheckSameShapeFloating("sigmoid_cross_entropy", ctx.Input("prediction"), ctx.Input("label"));
      ctx.Output("out") = ctx.Input("prediction");
    })
    .SetSbpFn([](SbpContext& ctx) {
      AddElementwiseSignatures(ctx, ctx.LogicalInput("prediction").shape.num_axes(), false);
    })
    .SetGradFn(LossGrad("sigmoid_cross_entropy_grad", "prediction", false, "out"));

REGISTER_OP("sigmoid_cross_entropy_grad")
    .Input("prediction")
    .Input("label")
    .Input("dy")
    .Output("prediction_diff")
    .SetInferFn([](InferContext& ctx) {
      const BlobDesc& prediction = ctx.Input("prediction");
      CheckSameShapeFloating("sigmoid_cross_entropy_grad", prediction, ctx.Input("label"));
      CheckDy("sigmoid_cross_entropy_grad", ctx.Input("dy"), prediction.shape,
              prediction.data_type);
      ctx.Output("prediction_diff") = prediction;
    })
    .SetSbpFn([](SbpContext& ctx) {
      AddElementwiseSignatures(ctx, ctx.LogicalInput("prediction").shape.num_axes(), false);
    })
    .NonDifferentiable();

REGISTER_OP("smooth_l1_loss")
    .Input("prediction")
    .Input("label")
    .Output("loss")
    .Attr<double>("beta", 1.0)
    .NoGradInput("label")
    .SetInferFn([](InferContext& ctx) {
      CheckSameShapeFloating("smooth_l1_loss", ctx.Input("prediction"), ctx.Input("label"));
      if (ctx.Attr<double>("beta") < 0) {
        throw Error(ErrorKind::kValue) << "smooth_l1_loss: beta must be >= 0, got "
                                       << ctx.Attr<double>("beta");
      }
      ctx.Output("loss") = ctx.Input("prediction");
    })
    .SetSbpFn([](SbpContext& ctx) {
      AddElementwiseSignatures(ctx, ctx.LogicalInput("prediction").shape.num_axes(), false);
    })
    .SetGradFn(LossGrad("smooth_l1_loss_grad", "prediction", false, "loss", {"beta"}));

REGISTER_OP("smooth_l1_loss_grad")
    .Input("prediction")
    .Input("label")
    .Input("dy")
    .Output("prediction_diff")
    .Attr<double>("beta", 1.0)
    .SetInferFn([](InferContext& ctx) {
      const BlobDesc& prediction = ctx.Input("prediction");
      CheckSameShapeFloating("smooth_l1_loss_grad", prediction, ctx.Input("label"));
      CheckDy("smooth_l1_loss_grad", ctx.Input("dy"), prediction.shape, prediction.data_type);
      ctx.Output("prediction_diff") = prediction;
    })
    .SetSbpFn([](SbpContext& ctx) {
      AddElementwiseSignatures(ctx, ctx.LogicalInput("prediction").shape.num_axes(), false);
    })
    .NonDifferentiable();

}  // namespace oneflow
