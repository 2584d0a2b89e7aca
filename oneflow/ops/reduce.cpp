// The reductions other than reduce_sum: reduce_max, reduce_min, reduce_prod (differentiable) and
// reduce_any, reduce_all (int8 truth values, not differentiable), declared from one table. Each
// reduces input_tensor over `axis` (normalised; empty: all axes), keeping reduced axes as 1 when
// keepdims. reduce_mean, reduce_std, reduce_variance, reduce_logsumexp and
// reduce_euclidean_norm are composites in python/oneflow/ops/reduce_ops.py.
//
// SBP: a split on a kept axis stays a split of the output; a split on a reduced axis is not
// declared (a max of per-device maxima would need a "partial max" layout, which SBP lacks), so
// the compiler gathers that axis first; all broadcast.

#include <algorithm>

#include "oneflow/common/data_type.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"
#include "oneflow/sbp/sbp_helpers.h"

namespace oneflow {

namespace {

const std::vector<DataType> kNumericDataTypes = {kFloat, kDouble, kInt8, kInt32, kInt64, kUInt8};

std::vector<int64_t> ReduceAxes(const std::string& op_type, const OperatorConf& conf,
                                int64_t num_axes) {
  return NormalizeReduceAxes(op_type, Int64ListAttr(conf, "axis"), num_axes);
}

// `truth_value`: the output is int8 0/1 (any, all), else the input's dtype.
InferFn MakeReduceInfer(const std::string& op_type, std::vector<DataType> allowed,
                        bool truth_value) {
  return [op_type, allowed, truth_value](InferContext& ctx) {
    const BlobDesc& input = ctx.Input("input_tensor");
    CheckDataTypeIn(op_type, "input_tensor", input.data_type, allowed);
    std::vector<int64_t> axes = ReduceAxes(op_type, ctx.conf(), input.shape.num_axes());
    ctx.Output("output_tensor") =
        BlobDesc{ReduceShape(input.shape, axes, ctx.Attr<bool>("keepdims")),
                 truth_value ? kInt8 : input.data_type,
                 input.is_dynamic && static_cast<int64_t>(axes.size()) < input.shape.num_axes()};
  };
}

// Splits on kept axes pass through; all broadcast.
void AddKeptAxisSignatures(SbpContext& ctx, const std::string& input,
                           const std::vector<std::string>& same_as_input,
                           const std::vector<std::string>& reduced_like, int64_t num_axes,
                           const std::vector<int64_t>& axes, bool keepdims) {
  int64_t reduced_before = 0;
  for (int64_t axis = 0; axis < num_axes; ++axis) {
    if (std::binary_search(axes.begin(), axes.end(), axis)) {
      ++reduced_before;
      continue;
    }
    SbpContext::SignatureBuilder builder = ctx.NewSignature();
    builder.Split(input, axis);
    for (const std::string& argument : same_as_input) { builder.Split(argument, axis); }
    for (const std::string& argument : reduced_like) {
      builder.Split(argument, keepdims ? axis : axis - reduced_before);
    }
    builder.Build();
  }
  ctx.NewSignature().BroadcastAllInputs().BroadcastAllOutputs().Build();
}

void GetReduceSbp(SbpContext& ctx) {
  int64_t num_axes = ctx.LogicalInput("input_tensor").shape.num_axes();
  std::vector<int64_t> axes = ReduceAxes(ctx.conf().op_type(), ctx.conf(), num_axes);
  AddKeptAxisSignatures(ctx, "input_tensor", {}, {"output_tensor"}, num_axes, axes,
                        ctx.Attr<bool>("keepdims"));
}

// OneFlow's (and TensorFlow's) rule for max and min: the gradient goes to every element equal
// to the result, shared equally among ties: dx = dy * (x == y) / count(x == y).
void GenerateMaxMinGrad(GradContext& ctx) {
  if (!ctx.NeedInputGrad("input_tensor")) { return; }
  std::string x = ctx.Input("input_tensor");
  const BlobDesc& x_desc = ctx.Desc(x);
  std::vector<int64_t> axes = ReduceAxes(ctx.op().op_type(), ctx.op(), x_desc.shape.num_axes());
  auto broadcast = [&](const std::string& suffix, const std::string& lbn) {
    return ctx.AddOp(suffix,
                     OpConfBuilder("broadcast_like", "")
                         .Input("x", lbn)
                         .Input("like", x)
                         .Attr("broadcast_axes", axes),
                     "y");
  };
  std::string y = broadcast("y_broadcast", ctx.Output("output_tensor"));
  std::string equal = ctx.AddOp(
      "mask", OpConfBuilder("broadcast_equal", "").Input("x", x).Input("y", y), "z");
  std::string mask = ctx.AddOp(
      "mask_cast", OpConfBuilder("cast", "").Input("in", equal).Attr("dtype", x_desc.data_type));
  std::string count = ctx.AddOp("count",
                                OpConfBuilder("reduce_sum", "")
                                    .Input("input_tensor", mask)
                                    .Attr("axis", axes)
                                    .Attr("keepdims", ctx.Attr<bool>("keepdims")),
                                "output_tensor");
  std::string share = ctx.AddOp(
      "share",
      OpConfBuilder("broadcast_div", "").Input("x", ctx.OutputGrad("output_tensor")).Input("y",
                                                                                          count),
      "z");
  // count and share have dy's shape; broadcast the share back to x's.
  std::string share_broadcast = broadcast("share_broadcast", share);
  std::string dx = ctx.AddOp(
      "input_tensor_grad",
      OpConfBuilder("broadcast_mul", "").Input("x", share_broadcast).Input("y", mask), "z");
  ctx.SetInputGrad("input_tensor", dx);
}

void GenerateProdGrad(GradContext& ctx) {
  if (!ctx.NeedInputGrad("input_tensor")) { return; }
  std::string dx = ctx.AddOp("input_tensor_grad",
                             OpConfBuilder("reduce_prod_grad", "")
                                 .Input("x", ctx.Input("input_tensor"))
                                 .Input("dy", ctx.OutputGrad("output_tensor"))
                                 .Attr("axis", Int64ListAttr(ctx.op(), "axis"))
                                 .Attr("keepdims", ctx.Attr<bool>("keepdims")),
                             "dx");
  ctx.SetInputGrad("input_tensor", dx);
}

struct ReduceOpEntry {
  const char* op_type;
  std::vector<DataType> allowed;
  GradFn grad;  // empty: not differentiable
};

const std::vector<ReduceOpEntry>& ReduceOpTable() {
  static const std::vector<ReduceOpEntry> table = {
      {"reduce_max", {kFloat, kDouble, kInt8, kInt32, kInt64}, GenerateMaxMinGrad},
      {"reduce_min", {kFloat, kDouble, kInt8, kInt32, kInt64}, GenerateMaxMinGrad},
      {"reduce_prod", {kFloat, kDouble, kInt32, kInt64}, GenerateProdGrad},
      {"reduce_any", kNumericDataTypes, {}},
      {"reduce_all", kNumericDataTypes, {}},
  };
  return table;
}

const bool kReduceOpsRegistered = [] {
  for (const ReduceOpEntry& entry : ReduceOpTable()) {
    OpDefBuilder builder(entry.op_type);
    builder.Input("input_tensor")
        .Output("output_tensor")
        .Attr<std::vector<int64_t>>("axis", {})
        .Attr<bool>("keepdims", false)
        .SetInferFn(MakeReduceInfer(entry.op_type, entry.allowed, !entry.grad))
        .InfersDynamic()
        .SetSbpFn(GetReduceSbp);
    if (entry.grad) {
      builder.SetGradFn(entry.grad);
    } else {
      builder.NonDifferentiable().KernelDataTypeFrom("input_tensor");
    }
    OpRegistry::Instance().Register(builder.def());
  }
  return true;
}();

// dx of reduce_prod: dy times the product of the other reduced elements, computed without
// dividing by x so that zeros are exact (one zero: only it gets a gradient; two: none does).
void InferReduceProdGrad(InferContext& ctx) {
  const BlobDesc& x = ctx.Input("x");
  const BlobDesc& dy = ctx.Input("dy");
  CheckFloatingDataType("reduce_prod_grad", "x", x.data_type);
  CheckSameDataType("reduce_prod_grad", "x", x.data_type, "dy", dy.data_type);
  std::vector<int64_t> axes = ReduceAxes("reduce_prod_grad", ctx.conf(), x.shape.num_axes());
  Shape expected = ReduceShape(x.shape, axes, ctx.Attr<bool>("keepdims"));
  if (dy.shape != expected) {
    throw Error(ErrorKind::kValue) << "reduce_prod_grad: dy has shape " << dy.shape.ToString()
                                   << ", expected " << expected.ToString();
  }
  ctx.Output("dx") = x;
}

void GetReduceProdGradSbp(SbpContext& ctx) {
  int64_t num_axes = ctx.LogicalInput("x").shape.num_axes();
  std::vector<int64_t> axes = ReduceAxes("reduce_prod_grad", ctx.conf(), num_axes);
  AddKeptAxisSignatures(ctx, "x", {"dx"}, {"dy"}, num_axes, axes, ctx.Attr<bool>("keepdims"));
  ctx.NewSignature().Broadcast("x").PartialSum("dy").PartialSum("dx").Build();  // linear in dy
}

}  // namespace

REGISTER_OP("reduce_prod_grad")
    .Input("x")
    .Input("dy")
    .Output("dx")
    .Attr<std::vector<int64_t>>("axis", {})
    .Attr<bool>("keepdims", false)
    .SetInferFn(InferReduceProdGrad)
    .SetSbpFn(GetReduceProdGradSbp)
    .NonDifferentiable();

}  // namespace oneflow
