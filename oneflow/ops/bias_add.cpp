// bias_add: out = a + b broadcast along `axis` of a (b is 1-D of size a.shape[axis]).

#include "oneflow/common/data_type.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"

namespace oneflow {

namespace {

void InferBiasAdd(InferContext& ctx) {
  const BlobDesc& a = ctx.Input("a");
  const BlobDesc& b = ctx.Input("b");
  CheckFloatingOrHalfDataType("bias_add", "a", a.data_type);
  CheckSameDataType("bias_add", "a", a.data_type, "b", b.data_type);
  int64_t axis = NormalizeAxis("bias_add", "axis", ctx.Attr<int64_t>("axis"), a.shape.num_axes());
  if (b.shape.num_axes() != 1 || b.shape.At(0) != a.shape.At(axis)) {
    throw Error(ErrorKind::kValue)
        << "bias_add: b must be 1-D of size a.shape[" << axis << "]=" << a.shape.At(axis)
        << ", got a " << a.shape.ToString() << " and b " << b.shape.ToString();
  }
  ctx.Output("out") = a;
}

void GetBiasAddSbp(SbpContext& ctx) {
  const Shape& a = ctx.LogicalInput("a").shape;
  int64_t axis = ctx.Attr<int64_t>("axis");
  if (axis < 0) { axis += a.num_axes(); }
  for (int64_t split_axis = 0; split_axis < a.num_axes(); ++split_axis) {
    SbpContext::SignatureBuilder builder = ctx.NewSignature();
    builder.Split("a", split_axis).Split("out", split_axis);
    if (split_axis == axis) {
      builder.Split("b", 0);
    } else {
      builder.Broadcast("b");
    }
    builder.Build();
  }
  ctx.NewSignature().PartialSum("a").PartialSum("b").PartialSum("out").Build();
  ctx.NewSignature().Broadcast("a").Broadcast("b").Broadcast("out").Build();
}

void GenerateBiasAddGrad(GradContext& ctx) {
  if (ctx.NeedInputGrad("a")) { ctx.SetInputGrad("a", ctx.OutputGrad("out")); }
  if (ctx.NeedInputGrad("b")) {
    std::string dout = ctx.OutputGrad("out");
    int64_t num_axes = ctx.Desc(dout).shape.num_axes();
    int64_t axis = ctx.Attr<int64_t>("axis");
    if (axis < 0) { axis += num_axes; }
    std::vector<int64_t> reduce_axes;
    for (int64_t other = 0; other < num_axes; ++other) {
      if (other != axis) { reduce_axes.push_back(other); }
    }
    if (reduce_axes.empty()) {
      ctx.SetInputGrad("b", dout);
      return;
    }
    std::string db = ctx.AddOp("b_grad",
                               OpConfBuilder("reduce_sum", "")
                                   .Input("input_tensor", dout)
                                   .Attr("axis", reduce_axes)
                                   .Attr("keepdims", false),
                               "output_tensor");
    ctx.SetInputGrad("b", db);
  }
}

}  // namespace

REGISTER_OP("bias_add")
    .Input("a")
    .Input("b")
    .Output("out")
    .Attr<int64_t>("axis", 1)
    .SetInferFn(InferBiasAdd)
    .SetSbpFn(GetBiasAddSbp)
    .SetGradFn(GenerateBiasAddGrad);

}  // namespace oneflow
