// reshape: out has the attribute `shape` (one dimension may be -1, inferred) and in's elements
// in row-major order. reshape_like: out takes like's shape; like gets no gradient.

#include "oneflow/common/data_type.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"

namespace oneflow {

namespace {

const std::vector<DataType> kReshapeDataTypes = {kFloat, kDouble, kFloat16, kInt8,
                                                 kInt32, kInt64,  kUInt8};

std::string ElementCountText(int64_t count) {
  return std::to_string(count) + (count == 1 ? " element" : " elements");
}

// The product of `dims`, or -1 when it overflows int64.
int64_t CheckedProduct(const std::vector<int64_t>& dims) {
  int64_t product = 1;
  for (int64_t dim : dims) {
    if (__builtin_mul_overflow(product, dim, &product)) { return -1; }
  }
  return product;
}

Shape ResolveReshape(const Shape& in, const Shape& requested) {
  int64_t inferred_axis = -1;
  std::vector<int64_t> known;
  for (int64_t axis = 0; axis < requested.num_axes(); ++axis) {
    int64_t dim = requested.At(axis);
    if (dim == -1 && inferred_axis < 0) {
      inferred_axis = axis;
    } else if (dim < 0) {
      throw Error(ErrorKind::kValue) << "reshape: invalid target shape " << requested.ToString()
                                     << ": only one dimension may be -1 and none may be negative";
    } else {
      known.push_back(dim);
    }
  }
  const int64_t known_count = CheckedProduct(known);
  if (known_count < 0) {
    throw Error(ErrorKind::kValue)
        << "reshape: cannot reshape " << in.ToString() << " (" << ElementCountText(in.elem_count())
        << ") into " << requested.ToString() << ": its dimensions multiply to more than 2^63 "
        << "elements";
  }
  Shape resolved = requested;
  if (inferred_axis >= 0) {
    if (known_count == 0 || in.elem_count() % known_count != 0) {
      throw Error(ErrorKind::kValue)
          << "reshape: cannot reshape " << in.ToString() << " ("
          << ElementCountText(in.elem_count()) << ") into " << requested.ToString()
          << ": the other dimensions (" << ElementCountText(known_count)
          << ") do not divide the element count";
    }
    resolved.Set(inferred_axis, in.elem_count() / known_count);
  }
  if (resolved.elem_count() != in.elem_count()) {
    throw Error(ErrorKind::kValue)
        << "reshape: cannot reshape " << in.ToString() << " (" << ElementCountText(in.elem_count())
        << ") into " << resolved.ToString() << " (" << ElementCountText(resolved.elem_count())
        << ")";
  }
  return resolved;
}

void InferReshape(InferContext& ctx) {
  const BlobDesc& in = ctx.Input("in");
  CheckDataTypeIn("reshape", "in", in.data_type, kReshapeDataTypes);
  ctx.Output("out") = BlobDesc{ResolveReshape(in.shape, ctx.Attr<Shape>("shape")), in.data_type};
}

void InferReshapeLike(InferContext& ctx) {
  const BlobDesc& in = ctx.Input("in");
  const BlobDesc& like = ctx.Input("like");
  CheckDataTypeIn("reshape_like", "in", in.data_type, kReshapeDataTypes);
  if (in.shape.elem_count() != like.shape.elem_count()) {
    throw Error(ErrorKind::kValue)
        << "reshape_like: cannot reshape " << in.shape.ToString() << " ("
        << ElementCountText(in.shape.elem_count()) << ") like " << like.shape.ToString() << " ("
        << ElementCountText(like.shape.elem_count()) << ")";
  }
  ctx.Output("out") = BlobDesc{like.shape, in.data_type, like.is_dynamic};
}

// Splitting in on axis i and out on axis j keeps every device's slice contiguous and identical
// when both shapes have the same element count before those axes and the same size there.
void AddReshapeSignatures(SbpContext& ctx, const Shape& in, const Shape& out, bool has_like) {
  for (int64_t in_axis = 0; in_axis < in.num_axes(); ++in_axis) {
    if (in.At(in_axis) <= 1) { continue; }
    for (int64_t out_axis = 0; out_axis < out.num_axes(); ++out_axis) {
      if (in.At(in_axis) != out.At(out_axis) || in.Count(0, in_axis) != out.Count(0, out_axis)) {
        continue;
      }
      SbpContext::SignatureBuilder builder = ctx.NewSignature();
      builder.Split("in", in_axis).Split("out", out_axis);
      if (has_like) { builder.Split("like", out_axis); }
      builder.Build();
    }
  }
  SbpContext::SignatureBuilder partial = ctx.NewSignature();
  partial.PartialSum("in").PartialSum("out");
  if (has_like) { partial.Broadcast("like"); }
  partial.Build();
  ctx.NewSignature().BroadcastAllInputs().BroadcastAllOutputs().Build();
}

void GenerateReshapeGrad(GradContext& ctx) {
  if (!ctx.NeedInputGrad("in")) { return; }
  std::string din = ctx.AddOp("in_grad", OpConfBuilder("reshape_like", "")
                                             .Input("in", ctx.OutputGrad("out"))
                                             .Input("like", ctx.Input("in")));
  ctx.SetInputGrad("in", din);
}

}  // namespace

REGISTER_OP("reshape")
    .Input("in")
    .Output("out")
    .RequiredAttr<Shape>("shape")
    .SetInferFn(InferReshape)
    .SetSbpFn([](SbpContext& ctx) {
      const Shape& in = ctx.LogicalInput("in").shape;
      AddReshapeSignatures(ctx, in, ResolveReshape(in, ctx.Attr<Shape>("shape")), false);
    })
    .SetGradFn(GenerateReshapeGrad);

REGISTER_OP("reshape_like")
    .Input("in")
    .Input("like")
    .Output("out")
    .NoGradInput("like")
    .SetInferFn(InferReshapeLike)
    .InfersDynamic()
    .SetSbpFn([](SbpContext& ctx) {
      AddReshapeSignatures(ctx, ctx.LogicalInput("in").shape, ctx.LogicalInput("like").shape, true);
    })
    .SetGradFn(GenerateReshapeGrad);

}  // namespace oneflow
