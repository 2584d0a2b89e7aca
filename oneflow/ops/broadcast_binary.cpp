// The broadcast binary family: z = x (op) y with numpy broadcasting, declared from one table.
// Arithmetic (add, sub, mul, div, pow, maximum, minimum, floor_mod, floordiv, and the floating
// atan2, xdivy, xlogy) keeps x's dtype;
// comparisons and logical and/or give int8 (1 or 0), as in OneFlow 0.3, and have no gradient.
// Gradients are built from existing ops; reduce_sum_like sums a gradient back to an input's
// shape where that input was broadcast.

#include <set>

#include "oneflow/common/data_type.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"
#include "oneflow/sbp/sbp_helpers.h"

namespace oneflow {

namespace {

std::function<void(SbpContext&)> MakeBroadcastSbp(PartialSumRule rule) {
  return [rule](SbpContext& ctx) {
    AddBroadcastBinarySignatures(ctx, "x", "y", "z", ctx.LogicalInput("x").shape,
                                 ctx.LogicalInput("y").shape, rule);
  };
}

// Sums `grad` (shaped like z) back to the shape of input `argument` when it was broadcast.
std::string ReduceToInput(GradContext& ctx, const std::string& grad, const std::string& argument,
                          const std::string& suffix) {
  std::string input = ctx.Input(argument);
  if (ctx.Desc(input).shape == ctx.Desc(grad).shape) { return grad; }
  return ctx.AddOp(suffix,
                   OpConfBuilder("reduce_sum_like", "")
                       .Input("x", grad)
                       .Input("like", input)
                       .Attr("axis", std::vector<int64_t>()),
                   "y");
}

std::string Binary(GradContext& ctx, const std::string& suffix, const std::string& op_type,
                   const std::string& x, const std::string& y) {
  return ctx.AddOp(suffix, OpConfBuilder(op_type, "").Input("x", x).Input("y", y), "z");
}

std::string Negate(GradContext& ctx, const std::string& suffix, const std::string& in) {
  return ctx.AddOp(suffix, OpConfBuilder("scalar_mul", "").Input("in", in).Attr("operand", -1.0));
}

void GenerateAddGrad(GradContext& ctx) {
  if (ctx.NeedInputGrad("x")) {
    ctx.SetInputGrad("x", ReduceToInput(ctx, ctx.OutputGrad("z"), "x", "x_grad"));
  }
  if (ctx.NeedInputGrad("y")) {
    ctx.SetInputGrad("y", ReduceToInput(ctx, ctx.OutputGrad("z"), "y", "y_grad"));
  }
}

void GenerateSubGrad(GradContext& ctx) {
  if (ctx.NeedInputGrad("x")) {
    ctx.SetInputGrad("x", ReduceToInput(ctx, ctx.OutputGrad("z"), "x", "x_grad"));
  }
  if (ctx.NeedInputGrad("y")) {
    std::string reduced = ReduceToInput(ctx, ctx.OutputGrad("z"), "y", "y_grad_sum");
    ctx.SetInputGrad("y", Negate(ctx, "y_grad", reduced));
  }
}

void GenerateMulGrad(GradContext& ctx) {
  if (ctx.NeedInputGrad("x")) {
    std::string product =
        Binary(ctx, "x_grad_mul", "broadcast_mul", ctx.OutputGrad("z"), ctx.Input("y"));
    ctx.SetInputGrad("x", ReduceToInput(ctx, product, "x", "x_grad"));
  }
  if (ctx.NeedInputGrad("y")) {
    std::string product =
        Binary(ctx, "y_grad_mul", "broadcast_mul", ctx.OutputGrad("z"), ctx.Input("x"));
    ctx.SetInputGrad("y", ReduceToInput(ctx, product, "y", "y_grad"));
  }
}

// z = x / y: dx = dz / y and dy = -dz * z / y.
void GenerateDivGrad(GradContext& ctx) {
  if (ctx.NeedInputGrad("x")) {
    std::string quotient =
        Binary(ctx, "x_grad_div", "broadcast_div", ctx.OutputGrad("z"), ctx.Input("y"));
    ctx.SetInputGrad("x", ReduceToInput(ctx, quotient, "x", "x_grad"));
  }
  if (ctx.NeedInputGrad("y")) {
    std::string product =
        Binary(ctx, "y_grad_mul", "broadcast_mul", ctx.OutputGrad("z"), ctx.Output("z"));
    std::string quotient = Binary(ctx, "y_grad_div", "broadcast_div", product, ctx.Input("y"));
    std::string reduced = ReduceToInput(ctx, quotient, "y", "y_grad_sum");
    ctx.SetInputGrad("y", Negate(ctx, "y_grad", reduced));
  }
}

std::string Unary(GradContext& ctx, const std::string& suffix, const std::string& op_type,
                  const std::string& x) {
  return ctx.AddOp(suffix, OpConfBuilder(op_type, "").Input("x", x), "y");
}

std::string ZerosLike(GradContext& ctx, const std::string& suffix, const std::string& like) {
  return ctx.AddOp(suffix, OpConfBuilder("constant_like", "").Input("like", like).Attr("value", 0.0));
}

std::string Where(GradContext& ctx, const std::string& suffix, const std::string& condition,
                  const std::string& x, const std::string& y) {
  return ctx.AddOp(suffix,
                   OpConfBuilder("where", "").Input("condition", condition).Input("x", x).Input(
                       "y", y));
}

// z = x ^ y: dx = dz * y * x ^ (y - 1) and dy = dz * z * log(x).
void GeneratePowGrad(GradContext& ctx) {
  if (ctx.NeedInputGrad("x")) {
    std::string exponent = ctx.AddOp(
        "x_grad_exponent",
        OpConfBuilder("scalar_add", "").Input("in", ctx.Input("y")).Attr("operand", -1.0));
    std::string power = Binary(ctx, "x_grad_pow", "broadcast_pow", ctx.Input("x"), exponent);
    std::string scaled = Binary(ctx, "x_grad_scale", "broadcast_mul", power, ctx.Input("y"));
    std::string product = Binary(ctx, "x_grad_mul", "broadcast_mul", ctx.OutputGrad("z"), scaled);
    ctx.SetInputGrad("x", ReduceToInput(ctx, product, "x", "x_grad"));
  }
  if (ctx.NeedInputGrad("y")) {
    std::string log = Unary(ctx, "y_grad_log", "log", ctx.Input("x"));
    std::string scaled = Binary(ctx, "y_grad_scale", "broadcast_mul", ctx.Output("z"), log);
    std::string product = Binary(ctx, "y_grad_mul", "broadcast_mul", ctx.OutputGrad("z"), scaled);
    ctx.SetInputGrad("y", ReduceToInput(ctx, product, "y", "y_grad"));
  }
}

// maximum (minimum): the gradient goes to x where x >= y (x <= y), else to y.
GradFn MakeSelectGrad(const std::string& compare_type) {
  return [compare_type](GradContext& ctx) {
    std::string chose_x = Binary(ctx, "grad_mask", compare_type, ctx.Input("x"), ctx.Input("y"));
    std::string dz = ctx.OutputGrad("z");
    std::string zeros = ZerosLike(ctx, "grad_zeros", dz);
    if (ctx.NeedInputGrad("x")) {
      std::string routed = Where(ctx, "x_grad_where", chose_x, dz, zeros);
      ctx.SetInputGrad("x", ReduceToInput(ctx, routed, "x", "x_grad"));
    }
    if (ctx.NeedInputGrad("y")) {
      std::string routed = Where(ctx, "y_grad_where", chose_x, zeros, dz);
      ctx.SetInputGrad("y", ReduceToInput(ctx, routed, "y", "y_grad"));
    }
  };
}

// z = x - floor(x / y) * y: dx = dz, dy = -dz * floor(x / y).
void GenerateFloorModGrad(GradContext& ctx) {
  if (ctx.NeedInputGrad("x")) {
    ctx.SetInputGrad("x", ReduceToInput(ctx, ctx.OutputGrad("z"), "x", "x_grad"));
  }
  if (ctx.NeedInputGrad("y")) {
    std::string quotient =
        Binary(ctx, "y_grad_floordiv", "broadcast_floordiv", ctx.Input("x"), ctx.Input("y"));
    std::string product = Binary(ctx, "y_grad_mul", "broadcast_mul", ctx.OutputGrad("z"), quotient);
    std::string reduced = ReduceToInput(ctx, product, "y", "y_grad_sum");
    ctx.SetInputGrad("y", Negate(ctx, "y_grad", reduced));
  }
}

// z = atan2(x, y): dx = dz * y / (x^2 + y^2) and dy = -dz * x / (x^2 + y^2).
void GenerateAtan2Grad(GradContext& ctx) {
  std::string x_square = Unary(ctx, "grad_x_square", "square", ctx.Input("x"));
  std::string y_square = Unary(ctx, "grad_y_square", "square", ctx.Input("y"));
  std::string radius_square = Binary(ctx, "grad_radius", "broadcast_add", x_square, y_square);
  if (ctx.NeedInputGrad("x")) {
    std::string product =
        Binary(ctx, "x_grad_mul", "broadcast_mul", ctx.OutputGrad("z"), ctx.Input("y"));
    std::string quotient = Binary(ctx, "x_grad_div", "broadcast_div", product, radius_square);
    ctx.SetInputGrad("x", ReduceToInput(ctx, quotient, "x", "x_grad"));
  }
  if (ctx.NeedInputGrad("y")) {
    std::string product =
        Binary(ctx, "y_grad_mul", "broadcast_mul", ctx.OutputGrad("z"), ctx.Input("x"));
    std::string quotient = Binary(ctx, "y_grad_div", "broadcast_div", product, radius_square);
    std::string reduced = ReduceToInput(ctx, quotient, "y", "y_grad_sum");
    ctx.SetInputGrad("y", Negate(ctx, "y_grad", reduced));
  }
}

// 1 where x != 0, else 0 (sign(|x|)): xdivy and xlogy are 0 where x == 0, and so are their
// gradients, as in OneFlow 0.3 and TensorFlow.
std::string NonzeroIndicator(GradContext& ctx) {
  std::string magnitude = Unary(ctx, "grad_x_abs", "abs", ctx.Input("x"));
  return Unary(ctx, "grad_x_nonzero", "sign", magnitude);
}

// z = xdivy(x, y): dx = xdivy(x != 0, y) * dz and dy = -xdivy(x, y^2) * dz.
void GenerateXdivyGrad(GradContext& ctx) {
  if (ctx.NeedInputGrad("x")) {
    std::string partial =
        Binary(ctx, "x_grad_partial", "broadcast_xdivy", NonzeroIndicator(ctx), ctx.Input("y"));
    std::string product = Binary(ctx, "x_grad_mul", "broadcast_mul", ctx.OutputGrad("z"), partial);
    ctx.SetInputGrad("x", ReduceToInput(ctx, product, "x", "x_grad"));
  }
  if (ctx.NeedInputGrad("y")) {
    std::string y_square = Unary(ctx, "y_grad_square", "square", ctx.Input("y"));
    std::string partial =
        Binary(ctx, "y_grad_partial", "broadcast_xdivy", ctx.Input("x"), y_square);
    std::string product = Binary(ctx, "y_grad_mul", "broadcast_mul", ctx.OutputGrad("z"), partial);
    std::string reduced = ReduceToInput(ctx, product, "y", "y_grad_sum");
    ctx.SetInputGrad("y", Negate(ctx, "y_grad", reduced));
  }
}

// z = xlogy(x, y): dx = xlogy(x != 0, y) * dz and dy = xdivy(x, y) * dz.
void GenerateXlogyGrad(GradContext& ctx) {
  if (ctx.NeedInputGrad("x")) {
    std::string partial =
        Binary(ctx, "x_grad_partial", "broadcast_xlogy", NonzeroIndicator(ctx), ctx.Input("y"));
    std::string product = Binary(ctx, "x_grad_mul", "broadcast_mul", ctx.OutputGrad("z"), partial);
    ctx.SetInputGrad("x", ReduceToInput(ctx, product, "x", "x_grad"));
  }
  if (ctx.NeedInputGrad("y")) {
    std::string partial =
        Binary(ctx, "y_grad_partial", "broadcast_xdivy", ctx.Input("x"), ctx.Input("y"));
    std::string product = Binary(ctx, "y_grad_mul", "broadcast_mul", ctx.OutputGrad("z"), partial);
    ctx.SetInputGrad("y", ReduceToInput(ctx, product, "y", "y_grad"));
  }
}

// Piecewise constant in both inputs.
void GenerateZeroGrad(GradContext& ctx) {
  for (const char* argument : {"x", "y"}) {
    if (ctx.NeedInputGrad(argument)) {
      ctx.SetInputGrad(argument,
                       ZerosLike(ctx, std::string(argument) + "_grad", ctx.Input(argument)));
    }
  }
}

enum class BinaryKind {
  kArithmetic,  // float32/64, int8/32/64 unless floating_only; z has x's dtype
  kCompare,     // float32/64, int8/32/64; z is int8
};

struct BinaryOpSpec {
  const char* op_type;
  BinaryKind kind;
  bool floating_only;
  PartialSumRule partial_sum_rule;
  GradFn grad;  // empty: not differentiable
};

const std::vector<BinaryOpSpec>& BinaryOpSpecs() {
  using K = BinaryKind;
  using P = PartialSumRule;
  static const std::vector<BinaryOpSpec> specs = {
      {"broadcast_add", K::kArithmetic, false, P::kBothPartial, GenerateAddGrad},
      {"broadcast_sub", K::kArithmetic, false, P::kBothPartial, GenerateSubGrad},
      {"broadcast_mul", K::kArithmetic, false, P::kEitherPartial, GenerateMulGrad},
      {"broadcast_div", K::kArithmetic, true, P::kFirstPartial, GenerateDivGrad},
      {"broadcast_pow", K::kArithmetic, true, P::kNone, GeneratePowGrad},
      {"broadcast_maximum", K::kArithmetic, false, P::kNone,
       MakeSelectGrad("broadcast_greater_equal")},
      {"broadcast_minimum", K::kArithmetic, false, P::kNone,
       MakeSelectGrad("broadcast_less_equal")},
      {"broadcast_floor_mod", K::kArithmetic, false, P::kNone, GenerateFloorModGrad},
      {"broadcast_floordiv", K::kArithmetic, false, P::kNone, GenerateZeroGrad},
      {"broadcast_atan2", K::kArithmetic, true, P::kNone, GenerateAtan2Grad},
      {"broadcast_xdivy", K::kArithmetic, true, P::kNone, GenerateXdivyGrad},
      {"broadcast_xlogy", K::kArithmetic, true, P::kNone, GenerateXlogyGrad},
      {"broadcast_equal", K::kCompare, false, P::kNone, {}},
      {"broadcast_not_equal", K::kCompare, false, P::kNone, {}},
      {"broadcast_greater", K::kCompare, false, P::kNone, {}},
      {"broadcast_greater_equal", K::kCompare, false, P::kNone, {}},
      {"broadcast_less", K::kCompare, false, P::kNone, {}},
      {"broadcast_less_equal", K::kCompare, false, P::kNone, {}},
      {"broadcast_logical_and", K::kCompare, false, P::kNone, {}},
      {"broadcast_logical_or", K::kCompare, false, P::kNone, {}},
  };
  return specs;
}

InferFn MakeBroadcastInfer(const BinaryOpSpec& spec) {
  const std::string op_type = spec.op_type;
  const bool compare = spec.kind == BinaryKind::kCompare;
  // float16: GPU kernels compute it; CPU devices through float32 (half_via_float_kernel.h).
  std::vector<DataType> allowed = {kFloat, kDouble, kFloat16};
  if (!spec.floating_only) { allowed.insert(allowed.end(), {kInt8, kInt32, kInt64}); }
  return [op_type, compare, allowed](InferContext& ctx) {
    const BlobDesc& x = ctx.Input("x");
    const BlobDesc& y = ctx.Input("y");
    CheckSameDataType(op_type, "x", x.data_type, "y", y.data_type);
    CheckDataTypeIn(op_type, "x", x.data_type, allowed);
    ctx.Output("z") =
        BlobDesc{BroadcastShapes(op_type, x.shape, y.shape), compare ? kInt8 : x.data_type};
  };
}

const bool kBinaryOpsRegistered = [] {
  for (const BinaryOpSpec& spec : BinaryOpSpecs()) {
    OpDefBuilder builder(spec.op_type);
    builder.Input("x").Input("y").Output("z").KernelDataTypeFrom("x");
    builder.SetInferFn(MakeBroadcastInfer(spec)).SetSbpFn(MakeBroadcastSbp(spec.partial_sum_rule));
    if (spec.grad) {
      builder.SetGradFn(spec.grad);
    } else {
      builder.NonDifferentiable();
    }
    OpRegistrar{builder};
  }
  return true;
}();

}  // namespace

}  // namespace oneflow
