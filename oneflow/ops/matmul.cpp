// matmul: out = alpha * op(a) * op(b) for 2-D a and b, where op transposes when asked.

#include "oneflow/common/data_type.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"
#include "oneflow/sbp/sbp_helpers.h"

namespace oneflow {

namespace {

const char* BoolText(bool value) { return value ? "true" : "false"; }

void InferMatmul(InferContext& ctx) {
  const BlobDesc& a = ctx.Input("a");
  const BlobDesc& b = ctx.Input("b");
  bool transpose_a = ctx.Attr<bool>("transpose_a");
  bool transpose_b = ctx.Attr<bool>("transpose_b");
  if (a.shape.num_axes() != 2 || b.shape.num_axes() != 2) {
    throw Error(ErrorKind::kValue) << "matmul: only 2-D operands are supported, got a "
                                   << a.shape.ToString() << " and b " << b.shape.ToString();
  }
  CheckFloatingDataType("matmul", "a", a.data_type);
  CheckSameDataType("matmul", "a", a.data_type, "b", b.data_type);
  int64_t a_inner_axis = transpose_a ? 0 : 1;
  int64_t b_inner_axis = transpose_b ? 1 : 0;
  if (a.shape.At(a_inner_axis) != b.shape.At(b_inner_axis)) {
    throw Error(ErrorKind::kValue)
        << "matmul: a " << a.shape.ToString() << " and b " << b.shape.ToString()
        << " cannot be multiplied: a.shape[" << a_inner_axis << "]=" << a.shape.At(a_inner_axis)
        << " != b.shape[" << b_inner_axis << "]=" << b.shape.At(b_inner_axis)
        << " (transpose_a=" << BoolText(transpose_a) << ", transpose_b=" << BoolText(transpose_b)
        << ")";
  }
  ctx.Output("out") =
      BlobDesc{Shape({a.shape.At(1 - a_inner_axis), b.shape.At(1 - b_inner_axis)}), a.data_type};
}

void GetMatmulSbp(SbpContext& ctx) {
  AddMatmulSignatures(ctx, "a", "b", "out", ctx.Attr<bool>("transpose_a"),
                      ctx.Attr<bool>("transpose_b"));
}

OpConfBuilder MatmulConf(const std::string& a, const std::string& b, bool transpose_a,
                         bool transpose_b, double alpha) {
  return OpConfBuilder("matmul", "")
      .Input("a", a)
      .Input("b", b)
      .Attr("transpose_a", transpose_a)
      .Attr("transpose_b", transpose_b)
      .Attr("alpha", alpha);
}

// With out = op(a) op(b): d op(a) = dout op(b)^T and d op(b) = op(a)^T dout; transposing back
// when a or b was stored transposed gives the four cases below.
void GenerateMatmulGrad(GradContext& ctx) {
  bool transpose_a = ctx.Attr<bool>("transpose_a");
  bool transpose_b = ctx.Attr<bool>("transpose_b");
  double alpha = ctx.Attr<double>("alpha");
  std::string a = ctx.Input("a");
  std::string b = ctx.Input("b");
  if (ctx.NeedInputGrad("a")) {
    std::string dout = ctx.OutputGrad("out");
    OpConfBuilder conf = !transpose_a ? MatmulConf(dout, b, false, !transpose_b, alpha)
                                      : MatmulConf(b, dout, transpose_b, true, alpha);
    ctx.SetInputGrad("a", ctx.AddOp("a_grad", conf));
  }
  if (ctx.NeedInputGrad("b")) {
    std::string dout = ctx.OutputGrad("out");
    OpConfBuilder conf = !transpose_b ? MatmulConf(a, dout, !transpose_a, false, alpha)
                                      : MatmulConf(dout, a, true, transpose_a, alpha);
    ctx.SetInputGrad("b", ctx.AddOp("b_grad", conf));
  }
}

}  // namespace

REGISTER_OP("matmul")
    .Input("a")
    .Input("b")
    .Output("out")
    .Attr<bool>("transpose_a", false)
    .Attr<bool>("transpose_b", false)
    .Attr<double>("alpha", 1.0)
    .SetInferFn(InferMatmul)
    .SetSbpFn(GetMatmulSbp)
    .SetGradFn(GenerateMatmulGrad);

}  // namespace oneflow
