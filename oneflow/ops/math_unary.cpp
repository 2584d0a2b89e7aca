// The unary math family (flow.math.exp, flow.math.abs, flow.nn.leaky_relu, ...): y = f(x),
// declared from one table. Each differentiable op `f` has a gradient op `f_grad` (x, dy -> dx,
// with f's attributes) whose kernel evaluates f'(x) * dy; ceil, floor, rint, round and sign have
// a zero gradient, as in OneFlow 0.3; logical_not gives int8 and has no gradient. Kernels: oneflow/kernels/cpu/math_unary.cpp.

#include <functional>
#include <vector>

#include "oneflow/common/data_type.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"
#include "oneflow/sbp/sbp_helpers.h"

namespace oneflow {

namespace {

enum class UnaryGradient {
  kGradOp,  // "<op>_grad" computes dx from x and dy
  kZero,    // piecewise constant: dx = 0
  kLogical,  // int8 output (1 or 0) of any input dtype; not differentiable
};

struct FloatAttr {
  const char* name;
  double default_value;
};

struct UnaryOpSpec {
  const char* op_type;
  bool allows_integers;  // also int32 and int64 (forward only: integers get no gradient)
  UnaryGradient gradient;
  std::vector<FloatAttr> attrs;
  // Throws ValueError when the attributes break the op's rule; may be empty.
  std::function<void(const InferContext&)> check_attrs;
};

void CheckHardTanhBounds(const InferContext& ctx) {
  const double min_val = ctx.Attr<double>("min_val");
  const double max_val = ctx.Attr<double>("max_val");
  if (!(min_val < max_val)) {
    throw Error(ErrorKind::kValue) << "hardtanh: min_val must be less than max_val, got min_val="
                                   << min_val << " and max_val=" << max_val;
  }
}

const std::vector<UnaryOpSpec>& UnaryOpSpecs() {
  using G = UnaryGradient;
  static const std::vector<UnaryOpSpec> specs = {
      {"abs", true, G::kGradOp, {}, {}},
      {"acos", false, G::kGradOp, {}, {}},
      {"acosh", false, G::kGradOp, {}, {}},
      {"asin", false, G::kGradOp, {}, {}},
      {"asinh", false, G::kGradOp, {}, {}},
      {"atan", false, G::kGradOp, {}, {}},
      {"atanh", false, G::kGradOp, {}, {}},
      {"ceil", false, G::kZero, {}, {}},
      {"cos", false, G::kGradOp, {}, {}},
      {"cosh", false, G::kGradOp, {}, {}},
      {"erf", false, G::kGradOp, {}, {}},
      {"erfc", false, G::kGradOp, {}, {}},
      {"exp", false, G::kGradOp, {}, {}},
      {"expm1", false, G::kGradOp, {}, {}},
      {"floor", false, G::kZero, {}, {}},
      {"lgamma", false, G::kGradOp, {}, {}},
      {"log", false, G::kGradOp, {}, {}},
      {"log1p", false, G::kGradOp, {}, {}},
      {"log_sigmoid", false, G::kGradOp, {}, {}},
      {"negative", true, G::kGradOp, {}, {}},
      {"reciprocal", false, G::kGradOp, {}, {}},
      {"reciprocal_no_nan", false, G::kGradOp, {}, {}},
      {"rint", false, G::kZero, {}, {}},
      {"round", false, G::kZero, {}, {}},
      {"rsqrt", false, G::kGradOp, {}, {}},
      {"sigmoid_v2", false, G::kGradOp, {}, {}},
      {"sign", true, G::kZero, {}, {}},
      {"sin", false, G::kGradOp, {}, {}},
      {"sinh", false, G::kGradOp, {}, {}},
      {"softplus", false, G::kGradOp, {}, {}},
      {"sqrt", false, G::kGradOp, {}, {}},
      {"tan", false, G::kGradOp, {}, {}},
      {"gelu", false, G::kGradOp, {}, {}},
      {"hardsigmoid", false, G::kGradOp, {}, {}},
      {"hardswish", false, G::kGradOp, {}, {}},
      {"hardtanh", false, G::kGradOp, {{"min_val", -1.0}, {"max_val", 1.0}}, CheckHardTanhBounds},
      {"leaky_relu", false, G::kGradOp, {{"alpha", 0.2}}, {}},
      {"elu", false, G::kGradOp, {{"alpha", 1.0}}, {}},
      {"logical_not", true, G::kLogical, {}, {}},
  };
  return specs;
}

void AddAttrs(OpDefBuilder& builder, const UnaryOpSpec& spec) {
  for (const FloatAttr& attr : spec.attrs) { builder.Attr<double>(attr.name, attr.default_value); }
}

GradFn MakeGradFn(const UnaryOpSpec& spec) {
  const std::string grad_type = std::string(spec.op_type) + "_grad";
  const std::vector<FloatAttr> attrs = spec.attrs;
  if (spec.gradient == UnaryGradient::kZero) {
    return [](GradContext& ctx) {
      if (!ctx.NeedInputGrad("x")) { return; }
      ctx.SetInputGrad("x", ctx.AddOp("x_grad", OpConfBuilder("constant_like", "")
                                                    .Input("like", ctx.Input("x"))
                                                    .Attr("value", 0.0)));
    };
  }
  return [grad_type, attrs](GradContext& ctx) {
    if (!ctx.NeedInputGrad("x")) { return; }
    OpConfBuilder builder(grad_type, "");
    builder.Input("x", ctx.Input("x")).Input("dy", ctx.OutputGrad("y"));
    for (const FloatAttr& attr : attrs) { builder.Attr(attr.name, ctx.Attr<double>(attr.name)); }
    ctx.SetInputGrad("x", ctx.AddOp("x_grad", builder, "dx"));
  };
}

void RegisterUnaryOp(const UnaryOpSpec& spec) {
  const std::string op_type = spec.op_type;
  const bool logical = spec.gradient == UnaryGradient::kLogical;
  // float16: GPU kernels compute it; CPU devices through float32 (half_via_float_kernel.h).
  std::vector<DataType> data_types = {kFloat, kDouble, kFloat16};
  if (spec.allows_integers) { data_types.insert(data_types.end(), {kInt32, kInt64}); }
  if (logical) { data_types.push_back(kInt8); }
  auto check_attrs = spec.check_attrs;

  OpDefBuilder forward(op_type);
  forward.Input("x").Output("y").KernelDataTypeFrom("x");
  AddAttrs(forward, spec);
  forward
      .SetInferFn([op_type, data_types, check_attrs, logical](InferContext& ctx) {
        InferElementwiseUnary(ctx, op_type, "x", "y", data_types);
        if (logical) { ctx.Output("y").data_type = kInt8; }
        if (check_attrs) { check_attrs(ctx); }
      })
      .SetSbpFn([](SbpContext& ctx) {
        AddElementwiseSignatures(ctx, ctx.LogicalInput("x").shape.num_axes(), false);
      });
  if (logical) {
    forward.NonDifferentiable();
  } else {
    forward.SetGradFn(MakeGradFn(spec));
  }
  OpRegistrar{forward};

  if (spec.gradient != UnaryGradient::kGradOp) { return; }
  const std::string grad_type = op_type + "_grad";
  OpDefBuilder backward(grad_type);
  backward.Input("x").Input("dy").Output("dx");
  AddAttrs(backward, spec);
  backward.SetInferFn([grad_type](InferContext& ctx) { InferActivationGrad(ctx, grad_type, "x"); })
      .SetSbpFn([](SbpContext& ctx) {
        AddElementwiseSignatures(ctx, ctx.LogicalInput("x").shape.num_axes(), false);
        // Linear in dy for a fixed x.
        ctx.NewSignature().Broadcast("x").PartialSum("dy").PartialSum("dx").Build();
      })
      .NonDifferentiable();
  OpRegistrar{backward};
}

const bool kUnaryOpsRegistered = [] {
  for (const UnaryOpSpec& spec : UnaryOpSpecs()) { RegisterUnaryOp(spec); }
  return true;
}();

}  // namespace

}  // namespace oneflow
