// Layer normalization (flow.layers.layer_norm, flow.nn.layer_norm; instance norm builds on it).
// x is seen as rows: the axes from begin_norm_axis on are normalised per row,
//   y = (x - mean_row) / sqrt(var_row + epsilon) * gamma + beta,
// with gamma and beta (optional) of shape x.shape[begin_params_axis:], applied by the element's
// flat index modulo their size. Outputs y and, for the gradient, mean and inv_variance per row.
// Backward: "layer_norm_grad" (dx) and "layer_norm_param_grad" (gamma_diff, beta_diff: sums
// over the rows, partial sums when the rows are split over devices).

#include "oneflow/common/data_type.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"

namespace oneflow {

namespace {

struct LayerNormAxes {
  int64_t begin_norm_axis;
  int64_t begin_params_axis;
};

LayerNormAxes NormalizeLayerNormAxes(const std::string& op_type, const OperatorConf& conf,
                                     int64_t num_axes) {
  const int64_t norm = FromAttrValue<int64_t>(conf.attr().at("begin_norm_axis"));
  const int64_t params = FromAttrValue<int64_t>(conf.attr().at("begin_params_axis"));
  return {NormalizeAxis(op_type, "begin_norm_axis", norm, num_axes),
          NormalizeAxis(op_type, "begin_params_axis", params, num_axes)};
}

Shape RowStatShape(const Shape& shape, int64_t begin_norm_axis) {
  std::vector<int64_t> dims;
  for (int64_t a = 0; a < begin_norm_axis; ++a) { dims.push_back(shape.At(a)); }
  return Shape(dims);
}

Shape ParamShape(const Shape& shape, int64_t begin_params_axis) {
  std::vector<int64_t> dims;
  for (int64_t a = begin_params_axis; a < shape.num_axes(); ++a) { dims.push_back(shape.At(a)); }
  return Shape(dims);
}

void CheckParam(InferContext& ctx, const std::string& op_type, const std::string& argument,
                const Shape& param_shape, DataType data_type) {
  if (!ctx.HasInput(argument)) { return; }
  const BlobDesc& desc = ctx.Input(argument);
  if (desc.shape != param_shape) {
    throw Error(ErrorKind::kValue)
        << op_type << ": " << argument << " " << desc.shape.ToString() << " must have shape "
        << param_shape.ToString() << " (x's axes from begin_params_axis on)";
  }
  CheckSameDataType(op_type, "x", data_type, argument, desc.data_type);
}

LayerNormAxes CheckX(InferContext& ctx, const std::string& op_type) {
  const BlobDesc& x = ctx.Input("x");
  CheckFloatingOrHalfDataType(op_type, "x", x.data_type);
  if (x.shape.num_axes() < 1) {
    throw Error(ErrorKind::kValue) << op_type << ": x must have at least 1 axis, got "
                                   << x.shape.ToString();
  }
  return NormalizeLayerNormAxes(op_type, ctx.conf(), x.shape.num_axes());
}

// Rows may be split on any axis before both begin_norm_axis and begin_params_axis: each device
// then holds whole rows and the whole parameters.
void AddLayerNormSignatures(SbpContext& ctx, const std::vector<std::string>& row_args,
                            const std::vector<std::string>& broadcast_args,
                            const std::vector<std::string>& partial_args) {
  const int64_t num_axes = ctx.LogicalInput("x").shape.num_axes();
  LayerNormAxes axes = NormalizeLayerNormAxes("layer_norm", ctx.conf(), num_axes);
  const int64_t limit = std::min(axes.begin_norm_axis, axes.begin_params_axis);
  for (int64_t axis = 0; axis < limit; ++axis) {
    auto builder = ctx.NewSignature();
    for (const std::string& name : row_args) { builder.Split(name, axis); }
    for (const std::string& name : broadcast_args) { builder.Broadcast(name); }
    for (const std::string& name : partial_args) { builder.PartialSum(name); }
    builder.Build();
  }
  ctx.NewSignature().BroadcastAllInputs().BroadcastAllOutputs().Build();
}

void GenerateLayerNormGrad(GradContext& ctx) {
  const std::string dy = ctx.OutputGrad("y");
  auto attrs = [&](OpConfBuilder& builder) {
    builder.Attr<int64_t>("begin_norm_axis", ctx.Attr<int64_t>("begin_norm_axis"))
        .Attr<int64_t>("begin_params_axis", ctx.Attr<int64_t>("begin_params_axis"))
        .Attr<double>("epsilon", ctx.Attr<double>("epsilon"));
  };
  const bool has_gamma = ctx.InputCount("gamma") > 0;
  const bool has_beta = ctx.InputCount("beta") > 0;
  if (ctx.NeedInputGrad("x")) {
    OpConfBuilder builder("layer_norm_grad", "");
    builder.Input("x", ctx.Input("x"))
        .Input("dy", dy)
        .Input("mean", ctx.Output("mean"))
        .Input("inv_variance", ctx.Output("inv_variance"));
    if (has_gamma) { builder.Input("gamma", ctx.Input("gamma")); }
    attrs(builder);
    ctx.SetInputGrad("x", ctx.AddOp("x_grad", builder, "dx"));
  }
  const bool need_gamma = has_gamma && ctx.NeedInputGrad("gamma");
  const bool need_beta = has_beta && ctx.NeedInputGrad("beta");
  if (need_gamma || need_beta) {
    OpConfBuilder builder("layer_norm_param_grad", "");
    builder.Input("x", ctx.Input("x"))
        .Input("dy", dy)
        .Input("mean", ctx.Output("mean"))
        .Input("inv_variance", ctx.Output("inv_variance"));
    attrs(builder);
    std::string gamma_diff = ctx.AddOp("param_grad", builder, "gamma_diff");
    if (need_gamma) { ctx.SetInputGrad("gamma", gamma_diff); }
    if (need_beta) {
      ctx.SetInputGrad("beta", gamma_diff.substr(0, gamma_diff.rfind('/')) + "/beta_diff_0");
    }
  }
}

void InferRowInputs(InferContext& ctx, const std::string& op_type, const LayerNormAxes& axes) {
  const BlobDesc& x = ctx.Input("x");
  if (ctx.Input("dy").shape != x.shape) {
    throw Error(ErrorKind::kValue) << op_type << ": dy " << ctx.Input("dy").shape.ToString()
                                   << " must have x's shape " << x.shape.ToString();
  }
  const Shape rows = RowStatShape(x.shape, axes.begin_norm_axis);
  for (const char* name : {"mean", "inv_variance"}) {
    if (ctx.Input(name).shape != rows) {
      throw Error(ErrorKind::kValue) << op_type << ": " << name << " "
                                     << ctx.Input(name).shape.ToString() << " must have shape "
                                     << rows.ToString();
    }
  }
}

}  // namespace

REGISTER_OP("layer_norm")
    .Input("x")
    .OptionalInput("gamma")
    .OptionalInput("beta")
    .Output("y")
    .Output("mean")
    .Output("inv_variance")
    .Attr<int64_t>("begin_norm_axis", 1)
    .Attr<int64_t>("begin_params_axis", -1)
    .Attr<double>("epsilon", 1e-5)
    .SetInferFn([](InferContext& ctx) {
      const LayerNormAxes axes = CheckX(ctx, "layer_norm");
      const BlobDesc& x = ctx.Input("x");
      const Shape params = ParamShape(x.shape, axes.begin_params_axis);
      CheckParam(ctx, "layer_norm", "gamma", params, x.data_type);
      CheckParam(ctx, "layer_norm", "beta", params, x.data_type);
      if (ctx.Attr<double>("epsilon") < 0) {
        throw Error(ErrorKind::kValue) << "layer_norm: epsilon must be >= 0, got "
                                       << ctx.Attr<double>("epsilon");
      }
      ctx.Output("y") = x;
      const BlobDesc rows{RowStatShape(x.shape, axes.begin_norm_axis), x.data_type};
      ctx.Output("mean") = rows;
      ctx.Output("inv_variance") = rows;
    })
    .SetSbpFn([](SbpContext& ctx) {
      AddLayerNormSignatures(ctx, {"x", "y", "mean", "inv_variance"}, {"gamma", "beta"}, {});
    })
    .SetGradFn(GenerateLayerNormGrad);

REGISTER_OP("layer_norm_grad")
    .Input("x")
    .Input("dy")
    .Input("mean")
    .Input("inv_variance")
    .OptionalInput("gamma")
    .Output("dx")
    .Attr<int64_t>("begin_norm_axis", 1)
    .Attr<int64_t>("begin_params_axis", -1)
    .Attr<double>("epsilon", 1e-5)
    .SetInferFn([](InferContext& ctx) {
      const LayerNormAxes axes = CheckX(ctx, "layer_norm_grad");
      InferRowInputs(ctx, "layer_norm_grad", axes);
      const BlobDesc& x = ctx.Input("x");
      CheckParam(ctx, "layer_norm_grad", "gamma", ParamShape(x.shape, axes.begin_params_axis),
                 x.data_type);
      ctx.Output("dx") = x;
    })
    .SetSbpFn([](SbpContext& ctx) {
      AddLayerNormSignatures(ctx, {"x", "dy", "mean", "inv_variance", "dx"}, {"gamma"}, {});
    })
    .NonDifferentiable();

REGISTER_OP("layer_norm_param_grad")
    .Input("x")
    .Input("dy")
    .Input("mean")
    .Input("inv_variance")
    .Output("gamma_diff")
    .Output("beta_diff")
    .Attr<int64_t>("begin_norm_axis", 1)
    .Attr<int64_t>("begin_params_axis", -1)
    .Attr<double>("epsilon", 1e-5)
    .SetInferFn([](InferContext& ctx) {
      const LayerNormAxes axes = CheckX(ctx, "layer_norm_param_grad");
      InferRowInputs(ctx, "layer_norm_param_grad", axes);
      const BlobDesc& x = ctx.Input("x");
      const BlobDesc params{ParamShape(x.shape, axes.begin_params_axis), x.data_type};
      ctx.Output("gamma_diff") = params;
      ctx.Output("beta_diff") = params;
    })
    .SetSbpFn([](SbpContext& ctx) {
      AddLayerNormSignatures(ctx, {"x", "dy", "mean", "inv_variance"}, {},
                             {"gamma_diff", "beta_diff"});
    })
    .NonDifferentiable();

}  // namespace oneflow
