// transpose: out[i_0, ..., i_{r-1}] = in[j] with j[perm[d]] = i_d, i.e. out's axis d is in's axis
// perm[d] (numpy.transpose). Its gradient is the transpose by the inverse permutation.

#include "oneflow/common/data_type.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"

namespace oneflow {

namespace {

const std::vector<DataType> kTransposeDataTypes = {kFloat, kDouble, kFloat16, kInt8,
                                                   kInt32, kInt64,  kUInt8};

// Throws ValueError unless `perm` holds each of 0..rank-1 exactly once.
void CheckPermutation(const std::vector<int64_t>& perm, const Shape& in) {
  int64_t num_axes = in.num_axes();
  bool valid = static_cast<int64_t>(perm.size()) == num_axes;
  std::vector<bool> seen(num_axes, false);
  for (size_t index = 0; valid && index < perm.size(); ++index) {
    int64_t axis = perm[index];
    valid = axis >= 0 && axis < num_axes && !seen[axis];
    if (valid) { seen[axis] = true; }
  }
  if (!valid) {
    throw Error(ErrorKind::kValue)
        << "transpose: perm " << AxesToString(perm) << " is not a permutation of the " << num_axes
        << " axes of in " << in.ToString() << " (expected each of 0.." << num_axes - 1
        << " exactly once)";
  }
}

std::vector<int64_t> InversePermutation(const std::vector<int64_t>& perm) {
  std::vector<int64_t> inverse(perm.size());
  for (size_t index = 0; index < perm.size(); ++index) {
    inverse[perm[index]] = static_cast<int64_t>(index);
  }
  return inverse;
}

void InferTranspose(InferContext& ctx) {
  const BlobDesc& in = ctx.Input("in");
  CheckDataTypeIn("transpose", "in", in.data_type, kTransposeDataTypes);
  std::vector<int64_t> perm = Int64ListAttr(ctx.conf(), "perm");
  CheckPermutation(perm, in.shape);
  std::vector<int64_t> out_dims(perm.size());
  for (size_t axis = 0; axis < perm.size(); ++axis) { out_dims[axis] = in.shape.At(perm[axis]); }
  ctx.Output("out") = BlobDesc{Shape(out_dims), in.data_type};
}

// A split of in's axis i is a split of out's axis perm.index(i); transpose is linear, so
// partial sums pass through.
void GetTransposeSbp(SbpContext& ctx) {
  std::vector<int64_t> perm = Int64ListAttr(ctx.conf(), "perm");
  for (size_t out_axis = 0; out_axis < perm.size(); ++out_axis) {
    ctx.NewSignature().Split("in", perm[out_axis]).Split("out", out_axis).Build();
  }
  ctx.NewSignature().PartialSum("in").PartialSum("out").Build();
  ctx.NewSignature().Broadcast("in").Broadcast("out").Build();
}

void GenerateTransposeGrad(GradContext& ctx) {
  if (!ctx.NeedInputGrad("in")) { return; }
  std::string din =
      ctx.AddOp("in_grad", OpConfBuilder("transpose", "")
                               .Input("in", ctx.OutputGrad("out"))
                               .Attr("perm", InversePermutation(Int64ListAttr(ctx.op(), "perm"))));
  ctx.SetInputGrad("in", din);
}

}  // namespace

REGISTER_OP("transpose")
    .Input("in")
    .Output("out")
    .RequiredAttr<std::vector<int64_t>>("perm")
    .SetInferFn(InferTranspose)
    .SetSbpFn(GetTransposeSbp)
    .SetGradFn(GenerateTransposeGrad);

}  // namespace oneflow
