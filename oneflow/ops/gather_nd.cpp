// gather_nd: indices (..., K) address the first K axes of params; out = indices[:-1] +
// params[K:], each output row the params row at its index tuple.
// scatter_nd / scatter_nd_like: the transpose: out (of `shape`, or like's shape) is zero except
// at the rows the index tuples address, where the matching rows of updates are added
// (duplicates sum). gather_nd's gradient is scatter_nd_like(indices, dy, like=params);
// scatter_nd's gradient for updates is gather_nd(dy, indices).
// tensor_scatter_nd_update: params with the addressed rows replaced by the rows of updates (a
// row addressed twice takes the later one). Its gradient is dy with those rows zeroed for params
// (tensor_scatter_nd_update(dy, indices, zeros)) and gather_nd(dy, indices) for updates, as in
// OneFlow 0.3 and TensorFlow (a duplicate's overwritten row gets the gradient too).

#include "oneflow/common/data_type.h"
#include "oneflow/framework/index_functions.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"

namespace oneflow {

namespace {

// Checks indices against `params` (the gathered, or the scattered-into, shape); returns K.
int64_t CheckNdIndices(const std::string& op_type, const Shape& params, const BlobDesc& indices) {
  CheckDataTypeIn(op_type, "indices", indices.data_type, IndexDataTypes());
  if (indices.shape.num_axes() == 0) {
    throw Error(ErrorKind::kValue) << op_type << ": indices must have at least one axis (the "
                                   << "last one holds the index tuples)";
  }
  const int64_t depth = indices.shape.At(indices.shape.num_axes() - 1);
  if (depth > params.num_axes()) {
    throw Error(ErrorKind::kValue) << op_type << ": index tuples of indices "
                                   << indices.shape.ToString() << " have " << depth
                                   << " entries but params " << params.ToString() << " has only "
                                   << params.num_axes() << " axes";
  }
  return depth;
}

// indices[:-1] + params[K:].
Shape NdRowsShape(const Shape& params, const Shape& indices, int64_t depth) {
  std::vector<int64_t> dims(indices.dims().begin(), indices.dims().end() - 1);
  dims.insert(dims.end(), params.dims().begin() + depth, params.dims().end());
  return Shape(dims);
}

void InferGatherNd(InferContext& ctx) {
  const BlobDesc& params = ctx.Input("params");
  CheckDataTypeIn("gather_nd", "params", params.data_type, MovableDataTypes());
  const BlobDesc& indices = ctx.Input("indices");
  int64_t depth = CheckNdIndices("gather_nd", params.shape, indices);
  ctx.Output("out") = BlobDesc{NdRowsShape(params.shape, indices.shape, depth), params.data_type};
}

void InferScatterNd(InferContext& ctx, const std::string& op_type, const Shape& shape) {
  const BlobDesc& updates = ctx.Input("updates");
  CheckDataTypeIn(op_type, "updates", updates.data_type, {kFloat, kDouble, kInt32, kInt64});
  const BlobDesc& indices = ctx.Input("indices");
  int64_t depth = CheckNdIndices(op_type, shape, indices);
  Shape expected = NdRowsShape(shape, indices.shape, depth);
  if (updates.shape != expected) {
    throw Error(ErrorKind::kValue) << op_type << ": updates " << updates.shape.ToString()
                                   << " must have shape indices[:-1] + shape[K:] = "
                                   << expected.ToString() << " for indices "
                                   << indices.shape.ToString() << " and shape "
                                   << shape.ToString();
  }
  ctx.Output("out") = BlobDesc{shape, updates.data_type};
}

void InferTensorScatterNdUpdate(InferContext& ctx) {
  const std::string op_type = "tensor_scatter_nd_update";
  const BlobDesc& params = ctx.Input("params");
  const BlobDesc& updates = ctx.Input("updates");
  CheckDataTypeIn(op_type, "params", params.data_type, MovableDataTypes());
  CheckSameDataType(op_type, "params", params.data_type, "updates", updates.data_type);
  const BlobDesc& indices = ctx.Input("indices");
  int64_t depth = CheckNdIndices(op_type, params.shape, indices);
  Shape expected = NdRowsShape(params.shape, indices.shape, depth);
  if (updates.shape != expected) {
    throw Error(ErrorKind::kValue)
        << op_type << ": updates " << updates.shape.ToString()
        << " must have shape indices[:-1] + params[K:] = " << expected.ToString() << " for indices "
        << indices.shape.ToString() << " and params " << params.shape.ToString();
  }
  ctx.Output("out") = params;
}

void GetGatherNdSbp(SbpContext& ctx) {
  const Shape& params = ctx.LogicalInput("params").shape;
  const Shape& indices = ctx.LogicalInput("indices").shape;
  const int64_t depth = indices.At(indices.num_axes() - 1);
  const int64_t rows = indices.num_axes() - 1;
  for (int64_t dim = 0; dim < rows; ++dim) {
    ctx.NewSignature().Broadcast("params").Split("indices", dim).Split("out", dim).Build();
  }
  for (int64_t dim = depth; dim < params.num_axes(); ++dim) {
    ctx.NewSignature()
        .Split("params", dim)
        .Broadcast("indices")
        .Split("out", rows + dim - depth)
        .Build();
  }
  ctx.NewSignature().PartialSum("params").Broadcast("indices").PartialSum("out").Build();
  ctx.NewSignature().BroadcastAllInputs().BroadcastAllOutputs().Build();
}

void GetScatterNdSbp(SbpContext& ctx, bool has_like) {
  const Shape& updates = ctx.LogicalInput("updates").shape;
  const Shape& indices = ctx.LogicalInput("indices").shape;
  const int64_t depth = indices.At(indices.num_axes() - 1);
  const int64_t rows = indices.num_axes() - 1;
  for (int64_t dim = 0; dim < rows; ++dim) {
    SbpContext::SignatureBuilder builder = ctx.NewSignature();
    builder.Split("indices", dim).Split("updates", dim).PartialSum("out");
    if (has_like) { builder.Broadcast("like"); }
    builder.Build();
  }
  for (int64_t dim = rows; dim < updates.num_axes(); ++dim) {
    SbpContext::SignatureBuilder builder = ctx.NewSignature();
    builder.Broadcast("indices").Split("updates", dim).Split("out", depth + dim - rows);
    if (has_like) { builder.Split("like", depth + dim - rows); }
    builder.Build();
  }
  SbpContext::SignatureBuilder partial = ctx.NewSignature();
  partial.Broadcast("indices").PartialSum("updates").PartialSum("out");
  if (has_like) { partial.Broadcast("like"); }
  partial.Build();
  ctx.NewSignature().BroadcastAllInputs().BroadcastAllOutputs().Build();
}

// A split of an axis the index tuples do not address splits params, updates and out alike;
// out is linear in (params, updates) together, so both partial sums give a partial sum.
void GetTensorScatterNdUpdateSbp(SbpContext& ctx) {
  const Shape& params = ctx.LogicalInput("params").shape;
  const Shape& indices = ctx.LogicalInput("indices").shape;
  const int64_t depth = indices.At(indices.num_axes() - 1);
  const int64_t rows = indices.num_axes() - 1;
  for (int64_t dim = depth; dim < params.num_axes(); ++dim) {
    ctx.NewSignature()
        .Split("params", dim)
        .Broadcast("indices")
        .Split("updates", rows + dim - depth)
        .Split("out", dim)
        .Build();
  }
  ctx.NewSignature()
      .PartialSum("params")
      .Broadcast("indices")
      .PartialSum("updates")
      .PartialSum("out")
      .Build();
  ctx.NewSignature().BroadcastAllInputs().BroadcastAllOutputs().Build();
}

void GenerateTensorScatterNdUpdateGrad(GradContext& ctx) {
  if (ctx.NeedInputGrad("params")) {
    std::string zeros = ctx.AddOp(
        "params_grad_zeros",
        OpConfBuilder("constant_like", "").Input("like", ctx.Input("updates")).Attr("value", 0.0));
    std::string dparams = ctx.AddOp("params_grad", OpConfBuilder("tensor_scatter_nd_update", "")
                                                       .Input("params", ctx.OutputGrad("out"))
                                                       .Input("indices", ctx.Input("indices"))
                                                       .Input("updates", zeros));
    ctx.SetInputGrad("params", dparams);
  }
  if (ctx.NeedInputGrad("updates")) {
    std::string dupdates = ctx.AddOp("updates_grad", OpConfBuilder("gather_nd", "")
                                                         .Input("params", ctx.OutputGrad("out"))
                                                         .Input("indices", ctx.Input("indices")));
    ctx.SetInputGrad("updates", dupdates);
  }
}

void GenerateGatherNdGrad(GradContext& ctx) {
  if (!ctx.NeedInputGrad("params")) { return; }
  std::string dparams = ctx.AddOp("params_grad", OpConfBuilder("scatter_nd_like", "")
                                                     .Input("indices", ctx.Input("indices"))
                                                     .Input("updates", ctx.OutputGrad("out"))
                                                     .Input("like", ctx.Input("params")));
  ctx.SetInputGrad("params", dparams);
}

void GenerateScatterNdGrad(GradContext& ctx) {
  if (!ctx.NeedInputGrad("updates")) { return; }
  std::string dupdates = ctx.AddOp("updates_grad", OpConfBuilder("gather_nd", "")
                                                       .Input("params", ctx.OutputGrad("out"))
                                                       .Input("indices", ctx.Input("indices")));
  ctx.SetInputGrad("updates", dupdates);
}

}  // namespace

REGISTER_OP("gather_nd")
    .Input("params")
    .Input("indices")
    .Output("out")
    .NoGradInput("indices")
    .SetInferFn(InferGatherNd)
    .SetSbpFn(GetGatherNdSbp)
    .SetGradFn(GenerateGatherNdGrad);

REGISTER_OP("scatter_nd")
    .Input("indices")
    .Input("updates")
    .Output("out")
    .RequiredAttr<Shape>("shape")
    .NoGradInput("indices")
    .KernelDataTypeFrom("updates")
    .SetInferFn([](InferContext& ctx) {
      Shape shape = ctx.Attr<Shape>("shape");
      for (int64_t dim : shape.dims()) {
        if (dim < 0) {
          throw Error(ErrorKind::kValue)
              << "scatter_nd: shape " << shape.ToString() << " has a negative dimension";
        }
      }
      InferScatterNd(ctx, "scatter_nd", shape);
    })
    .InfersDynamic()
    .SetSbpFn([](SbpContext& ctx) { GetScatterNdSbp(ctx, false); })
    .SetGradFn(GenerateScatterNdGrad);

REGISTER_OP("scatter_nd_like")
    .Input("indices")
    .Input("updates")
    .Input("like")
    .Output("out")
    .NoGradInput("indices")
    .NoGradInput("like")
    .KernelDataTypeFrom("updates")
    .SetInferFn([](InferContext& ctx) {
      InferScatterNd(ctx, "scatter_nd_like", ctx.Input("like").shape);
      ctx.Output("out").is_dynamic = ctx.Input("like").is_dynamic;
    })
    .InfersDynamic()
    .SetSbpFn([](SbpContext& ctx) { GetScatterNdSbp(ctx, true); })
    .SetGradFn(GenerateScatterNdGrad);

REGISTER_OP("tensor_scatter_nd_update")
    .Input("params")
    .Input("indices")
    .Input("updates")
    .Output("out")
    .NoGradInput("indices")
    .SetInferFn(InferTensorScatterNdUpdate)  // shaped like params, dynamic or not
    .InfersDynamic()
    .SetSbpFn(GetTensorScatterNdUpdateSbp)
    .SetGradFn(GenerateTensorScatterNdUpdateGrad);

}  // namespace oneflow
