// Quantization-aware training (OneFlow 0.3's flow.quantization): observers that choose the
// quantization parameters of a blob, and fake_quantization, which rounds a blob to the values
// its quantized form can hold while keeping it floating point.
//
// quantization_formula "google": scale (and zero_point for the "affine" scheme) map values to
// intX ("symmetric": scale = max|x| / (2^(bit-1) - 1), zero_point 0) or uintX ("affine": scale =
// (max - min) / (2^bit - 1), zero_point = -min / scale, not rounded). "cambricon": scale is a shift,
// the power of two floor(log2(max|x|)) - (bit - 2), and zero_point is 0.
//
// min_max_observer: scale and zero_point of x, shape (1,) per layer, or (x.shape[0],) per
// channel (google only: cambricon is per layer whatever per_layer_quantization says, as in
// OneFlow). moving_average_min_max_observer: the same from moving averages of the
// maximum and minimum kept in the variables moving_max and moving_min (updated in training; the
// first batch sets them). fake_quantization: round(x / scale + zero_point) clamped to the
// integer range ([-(2^(bit-1) - 1), 2^(bit-1) - 1], or [0, 2^bit - 1] for affine), minus
// zero_point, times scale, per channel when scale has one entry per x.shape[0]; its gradient
// passes straight through. These follow OneFlow 0.3's kernels and tests (a later OneFlow rounds
// the zero point and lets symmetric values reach -2^(bit-1)).

#include <string>

#include "oneflow/common/data_type.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"

namespace oneflow {

namespace {

// Observers choose 2- to 8-bit parameters, as OneFlow's; fake_quantization also rounds to up to
// 32 bits (the quantization_aware_training pass's int32 convolution biases).
void CheckQuantizationAttrs(InferContext& ctx, const std::string& op_type, int64_t max_bit = 8) {
  const int64_t bit = ctx.Attr<int64_t>("quantization_bit");
  if (bit < 2 || bit > max_bit) {
    throw Error(ErrorKind::kValue) << op_type << ": quantization_bit must be in [2, " << max_bit
                                   << "], got " << bit;
  }
  const std::string scheme = ctx.Attr<std::string>("quantization_scheme");
  if (scheme != "symmetric" && scheme != "affine") {
    throw Error(ErrorKind::kValue) << op_type
                                   << ": quantization_scheme must be \"symmetric\" or \"affine\", "
                                   << "got \"" << scheme << "\"";
  }
  const std::string formula = ctx.Attr<std::string>("quantization_formula");
  if (formula != "google" && formula != "cambricon") {
    throw Error(ErrorKind::kValue)
        << op_type << ": quantization_formula must be \"google\" or \"cambricon\", got \""
        << formula << "\"";
  }
}

const BlobDesc& CheckObservedInput(InferContext& ctx, const std::string& op_type) {
  const BlobDesc& in = ctx.Input("in");
  CheckFloatingDataType(op_type, "in", in.data_type);
  if (in.shape.elem_count() == 0) {
    throw Error(ErrorKind::kValue) << op_type << ": cannot observe an empty blob "
                                   << in.shape.ToString();
  }
  return in;
}

void CheckStateVariable(InferContext& ctx, const std::string& op_type, const std::string& name,
                        DataType data_type) {
  const BlobDesc& state = ctx.Input(name);
  if (state.shape != Shape({1}) || state.data_type != data_type) {
    throw Error(ErrorKind::kValue) << op_type << ": " << name << " must be a (1,) "
                                   << DataTypeName(data_type) << " variable, got "
                                   << state.shape.ToString() << " "
                                   << DataTypeName(state.data_type);
  }
}

void BroadcastEverything(SbpContext& ctx) {
  ctx.NewSignature().BroadcastAllInputs().BroadcastAllOutputs().Build();
}

}  // namespace

REGISTER_OP("min_max_observer")
    .Input("in")
    .Output("scale")
    .Output("zero_point")
    .Attr<int64_t>("quantization_bit", 8)
    .Attr<std::string>("quantization_scheme", "symmetric")
    .Attr<std::string>("quantization_formula", "google")
    .Attr<bool>("per_layer_quantization", true)
    .SetInferFn([](InferContext& ctx) {
      const std::string op_type = "min_max_observer";
      CheckQuantizationAttrs(ctx, op_type);
      const BlobDesc& in = CheckObservedInput(ctx, op_type);
      int64_t channels = 1;
      // The cambricon formula quantizes per layer whatever per_layer_quantization says.
      if (!ctx.Attr<bool>("per_layer_quantization") &&
          ctx.Attr<std::string>("quantization_formula") == "google") {
        if (in.shape.num_axes() == 0) {
          throw Error(ErrorKind::kValue) << op_type << ": per-channel quantization needs a "
                                         << "channel axis (axis 0), got a 0-d blob";
        }
        channels = in.shape.At(0);
      }
      ctx.Output("scale") = BlobDesc{Shape({channels}), in.data_type};
      ctx.Output("zero_point") = BlobDesc{Shape({channels}), in.data_type};
    })
    .SetSbpFn(BroadcastEverything)
    .NonDifferentiable();

REGISTER_OP("moving_average_min_max_observer")
    .Input("in")
    .Input("current_train_step")
    .Input("moving_max")
    .Input("moving_min")
    .MutableInput("moving_max")
    .MutableInput("moving_min")
    .Output("scale")
    .Output("zero_point")
    .Attr<bool>("training", false)
    // The moving averages are updated while current_train_step <= stop_update_after_iters.
    .Attr<int64_t>("stop_update_after_iters", 1)
    .Attr<int64_t>("quantization_bit", 8)
    .Attr<std::string>("quantization_scheme", "symmetric")
    .Attr<std::string>("quantization_formula", "google")
    .Attr<double>("momentum", 0.95)
    .KernelDataTypeFrom("in")
    .SetInferFn([](InferContext& ctx) {
      const std::string op_type = "moving_average_min_max_observer";
      CheckQuantizationAttrs(ctx, op_type);
      const BlobDesc& in = CheckObservedInput(ctx, op_type);
      CheckStateVariable(ctx, op_type, "current_train_step", kInt64);
      CheckStateVariable(ctx, op_type, "moving_max", in.data_type);
      CheckStateVariable(ctx, op_type, "moving_min", in.data_type);
      const double momentum = ctx.Attr<double>("momentum");
      if (!(momentum >= 0.0 && momentum <= 1.0)) {
        throw Error(ErrorKind::kValue) << op_type << ": momentum must be in [0, 1], got "
                                       << momentum;
      }
      ctx.Output("scale") = BlobDesc{Shape({1}), in.data_type};
      ctx.Output("zero_point") = BlobDesc{Shape({1}), in.data_type};
    })
    .SetSbpFn(BroadcastEverything)
    .NonDifferentiable();

REGISTER_OP("fake_quantization")
    .Input("in")
    .Input("scale")
    .Input("zero_point")
    .NoGradInput("scale")
    .NoGradInput("zero_point")
    .Output("out")
    .Attr<int64_t>("quantization_bit", 8)
    .Attr<std::string>("quantization_scheme", "symmetric")
    .Attr<std::string>("quantization_formula", "google")
    .KernelDataTypeFrom("in")
    .SetInferFn([](InferContext& ctx) {
      const std::string op_type = "fake_quantization";
      CheckQuantizationAttrs(ctx, op_type, /*max_bit=*/32);
      const BlobDesc& in = ctx.Input("in");
      CheckFloatingDataType(op_type, "in", in.data_type);
      const BlobDesc& scale = ctx.Input("scale");
      const BlobDesc& zero_point = ctx.Input("zero_point");
      const int64_t channels = scale.shape.elem_count();
      const bool per_channel_fits = in.shape.num_axes() > 0 && in.shape.At(0) == channels;
      if (scale.shape.num_axes() != 1 || (channels != 1 && !per_channel_fits)) {
        throw Error(ErrorKind::kValue)
            << op_type << ": scale must have shape (1,) (per layer) or (" 
            << (in.shape.num_axes() > 0 ? std::to_string(in.shape.At(0)) : std::string("C"))
            << ",) (per channel, axis 0 of in " << in.shape.ToString() << "), got "
            << scale.shape.ToString();
      }
      if (channels != 1 && ctx.Attr<std::string>("quantization_formula") == "cambricon") {
        throw Error(ErrorKind::kValue) << op_type << ": the cambricon formula quantizes per "
                                       << "layer only; scale must have shape (1,), got "
                                       << scale.shape.ToString();
      }
      if (zero_point.shape != scale.shape || scale.data_type != in.data_type ||
          zero_point.data_type != in.data_type) {
        throw Error(ErrorKind::kValue)
            << op_type << ": scale and zero_point must both be " << DataTypeName(in.data_type)
            << " blobs of one shape (as min_max_observer makes them), got scale "
            << scale.shape.ToString() << " " << DataTypeName(scale.data_type) << " and zero_point "
            << zero_point.shape.ToString() << " " << DataTypeName(zero_point.data_type);
      }
      ctx.Output("out") = BlobDesc{in.shape, in.data_type};
    })
    .SetSbpFn(BroadcastEverything)
    .SetGradFn([](GradContext& ctx) {
      // Straight through: rounding counts as the identity.
      if (ctx.NeedInputGrad("in")) { ctx.SetInputGrad("in", ctx.OutputGrad("out")); }
    });

}  // namespace oneflow
