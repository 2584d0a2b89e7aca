// matmul: out = alpha * op(a) * op(b), where op transposes the last two axes when asked.
//   a (m, k) and b (k, n): the 2-D product (m, n);
//   a (..., m, k) and b (..., k, n) with equal leading (batch) dims: one product per batch index;
//   a (..., m, k) and b (k, n) ("broadcast matmul"): a's leading dims are flattened into rows, so
//   out is (..., m, n); transpose_a must be false there.

#include "oneflow/common/data_type.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"
#include "oneflow/sbp/sbp_helpers.h"

namespace oneflow {

namespace {

const char* BoolText(bool value) { return value ? "true" : "false"; }

// a has rank > 2 and b is 2-D: one GEMM over a's flattened rows.
bool IsBroadcastMatmul(const Shape& a, const Shape& b) {
  return a.num_axes() > 2 && b.num_axes() == 2;
}

void CheckMatmulRanks(const Shape& a, const Shape& b, bool transpose_a) {
  if (a.num_axes() >= 2 && a.num_axes() == b.num_axes()) {
    for (int64_t axis = 0; axis + 2 < a.num_axes(); ++axis) {
      if (a.At(axis) != b.At(axis)) {
        throw Error(ErrorKind::kValue)
            << "matmul: batch dimensions of a " << a.ToString() << " and b " << b.ToString()
            << " differ: a.shape[" << axis << "]=" << a.At(axis) << " != b.shape[" << axis
            << "]=" << b.At(axis) << " (batch matmul needs equal leading dimensions)";
      }
    }
    return;
  }
  if (IsBroadcastMatmul(a, b)) {
    if (transpose_a) {
      throw Error(ErrorKind::kValue)
          << "matmul: a " << a.ToString() << " has rank " << a.num_axes() << " and b "
          << b.ToString() << " is 2-D, so a's leading dimensions are flattened into rows; "
          << "transpose_a must be false there";
    }
    return;
  }
  throw Error(ErrorKind::kValue)
      << "matmul: unsupported ranks: a " << a.ToString() << " (rank " << a.num_axes() << ") and b "
      << b.ToString() << " (rank " << b.num_axes()
      << "); expected both 2-D, both of the same rank > 2 (batch matmul), or a of rank > 2 with a "
         "2-D b (broadcast matmul)";
}

void InferMatmul(InferContext& ctx) {
  const BlobDesc& a = ctx.Input("a");
  const BlobDesc& b = ctx.Input("b");
  bool transpose_a = ctx.Attr<bool>("transpose_a");
  bool transpose_b = ctx.Attr<bool>("transpose_b");
  CheckMatmulRanks(a.shape, b.shape, transpose_a);
  CheckFloatingOrHalfDataType("matmul", "a", a.data_type);
  CheckSameDataType("matmul", "a", a.data_type, "b", b.data_type);
  int64_t a_offset = a.shape.num_axes() - 2;
  int64_t b_offset = b.shape.num_axes() - 2;
  int64_t a_inner_axis = a_offset + (transpose_a ? 0 : 1);
  int64_t b_inner_axis = b_offset + (transpose_b ? 1 : 0);
  if (a.shape.At(a_inner_axis) != b.shape.At(b_inner_axis)) {
    throw Error(ErrorKind::kValue)
        << "matmul: a " << a.shape.ToString() << " and b " << b.shape.ToString()
        << " cannot be multiplied: a.shape[" << a_inner_axis << "]=" << a.shape.At(a_inner_axis)
        << " != b.shape[" << b_inner_axis << "]=" << b.shape.At(b_inner_axis)
        << " (transpose_a=" << BoolText(transpose_a) << ", transpose_b=" << BoolText(transpose_b)
        << ")";
  }
  std::vector<int64_t> out_dims(a.shape.dims().begin(), a.shape.dims().begin() + a_offset);
  out_dims.push_back(a.shape.At(a_offset + (transpose_a ? 1 : 0)));
  out_dims.push_back(b.shape.At(b_offset + (transpose_b ? 0 : 1)));
  ctx.Output("out") = BlobDesc{Shape(out_dims), a.data_type};
}

// Batch and broadcast matmul: the 2-D signatures on the last two axes, plus splits of the
// leading axes (of a and out; of b too when it has them).
void AddBatchedMatmulSignatures(SbpContext& ctx, const Shape& a, const Shape& b, bool transpose_a,
                                bool transpose_b) {
  int64_t a_offset = a.num_axes() - 2;
  int64_t b_offset = b.num_axes() - 2;
  bool broadcast = IsBroadcastMatmul(a, b);
  for (int64_t axis = 0; axis < a_offset; ++axis) {
    SbpContext::SignatureBuilder builder = ctx.NewSignature();
    builder.Split("a", axis).Split("out", axis);
    if (broadcast) {
      builder.Broadcast("b");
    } else {
      builder.Split("b", axis);
    }
    builder.Build();
  }
  int64_t a_row_axis = a_offset + (transpose_a ? 1 : 0);
  int64_t a_inner_axis = a_offset + (transpose_a ? 0 : 1);
  int64_t b_inner_axis = b_offset + (transpose_b ? 1 : 0);
  int64_t b_column_axis = b_offset + (transpose_b ? 0 : 1);
  int64_t out_row_axis = a_offset;
  ctx.NewSignature().Split("a", a_row_axis).Broadcast("b").Split("out", out_row_axis).Build();
  ctx.NewSignature()
      .Broadcast("a")
      .Split("b", b_column_axis)
      .Split("out", out_row_axis + 1)
      .Build();
  ctx.NewSignature().Split("a", a_inner_axis).Split("b", b_inner_axis).PartialSum("out").Build();
  ctx.NewSignature().PartialSum("a").Broadcast("b").PartialSum("out").Build();
  ctx.NewSignature().Broadcast("a").PartialSum("b").PartialSum("out").Build();
  ctx.NewSignature().Broadcast("a").Broadcast("b").Broadcast("out").Build();
}

void GetMatmulSbp(SbpContext& ctx) {
  const Shape& a = ctx.LogicalInput("a").shape;
  const Shape& b = ctx.LogicalInput("b").shape;
  bool transpose_a = ctx.Attr<bool>("transpose_a");
  bool transpose_b = ctx.Attr<bool>("transpose_b");
  if (a.num_axes() == 2 && b.num_axes() == 2) {
    AddMatmulSignatures(ctx, "a", "b", "out", transpose_a, transpose_b);
  } else {
    AddBatchedMatmulSignatures(ctx, a, b, transpose_a, transpose_b);
  }
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

// Emits a reshape of `lbn` (shape `shape`) to 2-D (rows, shape[-1]); returns the new lbn.
std::string FlattenTo2D(GradContext& ctx, const std::string& suffix, const std::string& lbn,
                        const Shape& shape) {
  int64_t columns = shape.At(shape.num_axes() - 1);
  Shape flat({shape.Count(0, shape.num_axes() - 1), columns});
  return ctx.AddOp(suffix, OpConfBuilder("reshape", "").Input("in", lbn).Attr("shape", flat));
}

// With out = op(a) op(b): d op(a) = dout op(b)^T and d op(b) = op(a)^T dout; transposing back
// when a or b was stored transposed gives the four cases below. They hold batchwise for batch
// matmul and, for broadcast matmul, for da (again a broadcast matmul). The broadcast case's db
// sums over all of a's rows, i.e. a 2-D product of a and dout flattened to rows.
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
    if (IsBroadcastMatmul(ctx.Desc(a).shape, ctx.Desc(b).shape)) {
      a = FlattenTo2D(ctx, "a_flat", a, ctx.Desc(a).shape);
      dout = FlattenTo2D(ctx, "out_grad_flat", dout, ctx.Desc(dout).shape);
    }
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
