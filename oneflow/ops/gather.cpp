// gather: out = params indexed on `axis` by `indices` (int32/int64); with batch_dims = b the
// first b axes of params and indices are matched element by element (batch gather):
//   out[o..., i..., r...] = in[o..., indices[b..., i...], r...], out = in[:axis] + indices[b:] +
//   in[axis + 1:].
// unsorted_segment_sum(_like): the transpose of gather: out[o..., k, r...] is the sum of
// data[o..., i..., r...] over the positions i with segment_ids[i] = k. gather's gradient is
// unsorted_segment_sum_like(dy, indices, like=params): a scatter-add of dy's rows into zeros,
// never a dense one-hot product.
//
// Model parallelism: params split on the gather axis, indices broadcast gives a partial-sum
// output (each device looks up the indices in its own rows and writes zeros for the others);
// symmetrically a segment sum may split its output on the segment axis, each device summing
// only its own segments.

#include "oneflow/common/data_type.h"
#include "oneflow/framework/index_functions.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"

namespace oneflow {

namespace {

void InferGather(InferContext& ctx) {
  const BlobDesc& in = ctx.Input("in");
  const BlobDesc& indices = ctx.Input("indices");
  CheckDataTypeIn("gather", "params", in.data_type, MovableDataTypes());
  CheckDataTypeIn("gather", "indices", indices.data_type, IndexDataTypes());
  int64_t axis = ctx.Attr<int64_t>("axis");
  ctx.Output("out") = BlobDesc{
      GatherShape("gather", in.shape, indices.shape, &axis, ctx.Attr<int64_t>("batch_dims")),
      in.data_type};
}

void GetGatherSbp(SbpContext& ctx) {
  const Shape& in = ctx.LogicalInput("in").shape;
  const Shape& indices = ctx.LogicalInput("indices").shape;
  const int64_t batch_dims = ctx.Attr<int64_t>("batch_dims");
  const int64_t axis = NormalizeAxis("gather", "axis", ctx.Attr<int64_t>("axis"), in.num_axes());
  const int64_t gathered = indices.num_axes() - batch_dims;  // axes of out from indices
  for (int64_t dim = 0; dim < batch_dims; ++dim) {
    ctx.NewSignature().Split("in", dim).Split("indices", dim).Split("out", dim).Build();
  }
  for (int64_t dim = batch_dims; dim < indices.num_axes(); ++dim) {
    ctx.NewSignature()
        .Broadcast("in")
        .Split("indices", dim)
        .Split("out", axis + dim - batch_dims)
        .Build();
  }
  for (int64_t dim = batch_dims; dim < in.num_axes(); ++dim) {
    SbpContext::SignatureBuilder builder = ctx.NewSignature();
    builder.Split("in", dim).Broadcast("indices");
    if (dim == axis) {
      builder.PartialSum("out");
    } else {
      builder.Split("out", dim < axis ? dim : dim + gathered - 1);
    }
    builder.Build();
  }
  ctx.NewSignature().PartialSum("in").Broadcast("indices").PartialSum("out").Build();
  ctx.NewSignature().BroadcastAllInputs().BroadcastAllOutputs().Build();
}

void GenerateGatherGrad(GradContext& ctx) {
  if (!ctx.NeedInputGrad("in")) { return; }
  std::string din = ctx.AddOp("in_grad",
                              OpConfBuilder("unsorted_segment_sum_like", "")
                                  .Input("data", ctx.OutputGrad("out"))
                                  .Input("segment_ids", ctx.Input("indices"))
                                  .Input("like", ctx.Input("in"))
                                  .Attr("axis", ctx.Attr<int64_t>("axis"))
                                  .Attr("batch_dims", ctx.Attr<int64_t>("batch_dims")));
  ctx.SetInputGrad("in", din);
}

// The output shape of a segment sum with `num_segments` segments, checking data against it.
Shape InferSegmentSum(const std::string& op_type, const BlobDesc& data,
                      const BlobDesc& segment_ids, int64_t* axis, int64_t batch_dims,
                      int64_t num_segments) {
  CheckDataTypeIn(op_type, "data", data.data_type, {kFloat, kDouble, kFloat16, kInt32, kInt64});
  CheckDataTypeIn(op_type, "segment_ids", segment_ids.data_type, IndexDataTypes());
  const Shape& ids = segment_ids.shape;
  const int64_t gathered = ids.num_axes() - batch_dims;
  if (batch_dims < 0 || gathered < 0) {
    throw Error(ErrorKind::kValue) << op_type << ": batch_dims " << batch_dims
                                   << " must be in [0, rank of segment_ids " << ids.num_axes()
                                   << "]";
  }
  const int64_t rank = data.shape.num_axes() - gathered + 1;
  if (rank < 1) {
    throw Error(ErrorKind::kValue) << op_type << ": data " << data.shape.ToString()
                                   << " has fewer axes than segment_ids " << ids.ToString();
  }
  *axis = NormalizeAxis(op_type, "axis", *axis, rank);
  bool matches = *axis >= batch_dims;
  for (int64_t dim = 0; matches && dim < batch_dims; ++dim) {
    matches = data.shape.At(dim) == ids.At(dim);
  }
  for (int64_t dim = 0; matches && dim < gathered; ++dim) {
    matches = data.shape.At(*axis + dim) == ids.At(batch_dims + dim);
  }
  if (!matches) {
    throw Error(ErrorKind::kValue)
        << op_type << ": segment_ids " << ids.ToString() << " must match data "
        << data.shape.ToString() << " on axes [" << *axis << ", " << *axis + gathered
        << ") (and on the first batch_dims=" << batch_dims << " axes)";
  }
  if (num_segments < 0) {
    throw Error(ErrorKind::kValue) << op_type << ": num_segments " << num_segments
                                   << " must be non-negative";
  }
  std::vector<int64_t> dims(data.shape.dims().begin(), data.shape.dims().begin() + *axis);
  dims.push_back(num_segments);
  dims.insert(dims.end(), data.shape.dims().begin() + *axis + gathered, data.shape.dims().end());
  return Shape(dims);
}

void GetSegmentSumSbp(SbpContext& ctx, bool has_like) {
  const Shape& data = ctx.LogicalInput("data").shape;
  const Shape& ids = ctx.LogicalInput("segment_ids").shape;
  const int64_t batch_dims = ctx.Attr<int64_t>("batch_dims");
  const int64_t gathered = ids.num_axes() - batch_dims;
  const int64_t out_rank = data.num_axes() - gathered + 1;
  const int64_t axis = NormalizeAxis("unsorted_segment_sum", "axis", ctx.Attr<int64_t>("axis"),
                                     out_rank);
  auto like = [&](SbpContext::SignatureBuilder& builder, const SbpParallel& out) {
    if (!has_like) { return; }
    if (out.has_split_parallel()) {
      builder.Split("like", out.split_parallel().axis());
    } else {
      builder.Broadcast("like");
    }
  };
  SbpParallel partial;
  partial.mutable_partial_sum_parallel();
  SbpParallel broadcast;
  broadcast.mutable_broadcast_parallel();
  for (int64_t dim = 0; dim < batch_dims; ++dim) {
    SbpContext::SignatureBuilder builder = ctx.NewSignature();
    builder.Split("data", dim).Split("segment_ids", dim).Split("out", dim);
    if (has_like) { builder.Split("like", dim); }
    builder.Build();
  }
  // Ids split along their own axes: each device sums part of the addends.
  for (int64_t dim = batch_dims; dim < ids.num_axes(); ++dim) {
    SbpContext::SignatureBuilder builder = ctx.NewSignature();
    builder.Split("data", axis + dim - batch_dims).Split("segment_ids", dim).PartialSum("out");
    like(builder, partial);
    builder.Build();
  }
  // Data split on an axis of its own rows: out split on the same axis.
  for (int64_t dim = batch_dims; dim < data.num_axes(); ++dim) {
    if (dim >= axis && dim < axis + gathered) { continue; }
    const int64_t out_axis = dim < axis ? dim : dim - gathered + 1;
    SbpContext::SignatureBuilder builder = ctx.NewSignature();
    builder.Split("data", dim).Broadcast("segment_ids").Split("out", out_axis);
    if (has_like) { builder.Split("like", out_axis); }
    builder.Build();
  }
  // Each device sums only the segments of its part of out.
  {
    SbpContext::SignatureBuilder builder = ctx.NewSignature();
    builder.Broadcast("data").Broadcast("segment_ids").Split("out", axis);
    if (has_like) { builder.Split("like", axis); }
    builder.Build();
  }
  {
    SbpContext::SignatureBuilder builder = ctx.NewSignature();
    builder.PartialSum("data").Broadcast("segment_ids").PartialSum("out");
    like(builder, partial);
    builder.Build();
  }
  SbpContext::SignatureBuilder builder = ctx.NewSignature();
  builder.Broadcast("data").Broadcast("segment_ids").Broadcast("out");
  like(builder, broadcast);
  builder.Build();
}

void GenerateSegmentSumGrad(GradContext& ctx) {
  if (!ctx.NeedInputGrad("data")) { return; }
  std::string ddata = ctx.AddOp("data_grad",
                                OpConfBuilder("gather", "")
                                    .Input("in", ctx.OutputGrad("out"))
                                    .Input("indices", ctx.Input("segment_ids"))
                                    .Attr("axis", ctx.Attr<int64_t>("axis"))
                                    .Attr("batch_dims", ctx.Attr<int64_t>("batch_dims")));
  ctx.SetInputGrad("data", ddata);
}

}  // namespace

REGISTER_OP("gather")
    .Input("in")
    .Input("indices")
    .Output("out")
    .Attr<int64_t>("axis", 0)
    .Attr<int64_t>("batch_dims", 0)
    .NoGradInput("indices")
    .SetInferFn(InferGather)
    .SetSbpFn(GetGatherSbp)
    .SetGradFn(GenerateGatherGrad);

REGISTER_OP("unsorted_segment_sum")
    .Input("data")
    .Input("segment_ids")
    .Output("out")
    .Attr<int64_t>("axis", 0)
    .Attr<int64_t>("batch_dims", 0)
    .RequiredAttr<int64_t>("num_segments")
    .NoGradInput("segment_ids")
    .SetInferFn([](InferContext& ctx) {
      const BlobDesc& data = ctx.Input("data");
      int64_t axis = ctx.Attr<int64_t>("axis");
      ctx.Output("out") = BlobDesc{
          InferSegmentSum("unsorted_segment_sum", data, ctx.Input("segment_ids"), &axis,
                          ctx.Attr<int64_t>("batch_dims"), ctx.Attr<int64_t>("num_segments")),
          data.data_type};
    })
    .InfersDynamic()  // num_segments rows, whatever the data's
    .SetSbpFn([](SbpContext& ctx) { GetSegmentSumSbp(ctx, false); })
    .SetGradFn(GenerateSegmentSumGrad);

REGISTER_OP("unsorted_segment_sum_like")
    .Input("data")
    .Input("segment_ids")
    .Input("like")
    .Output("out")
    .Attr<int64_t>("axis", 0)
    .Attr<int64_t>("batch_dims", 0)
    .NoGradInput("segment_ids")
    .NoGradInput("like")
    .SetInferFn([](InferContext& ctx) {
      const BlobDesc& data = ctx.Input("data");
      const BlobDesc& like = ctx.Input("like");
      int64_t axis = ctx.Attr<int64_t>("axis");
      if (axis < -like.shape.num_axes() || axis >= like.shape.num_axes()) {
        NormalizeAxis("unsorted_segment_sum_like", "axis", axis, like.shape.num_axes());
      }
      const int64_t segments = like.shape.At(axis < 0 ? axis + like.shape.num_axes() : axis);
      Shape out = InferSegmentSum("unsorted_segment_sum_like", data, ctx.Input("segment_ids"),
                                  &axis, ctx.Attr<int64_t>("batch_dims"), segments);
      if (out != like.shape) {
        throw Error(ErrorKind::kValue)
            << "unsorted_segment_sum_like: the sum of data " << data.shape.ToString()
            << " has shape " << out.ToString() << ", not like's " << like.shape.ToString();
      }
      CheckSameDataType("unsorted_segment_sum_like", "data", data.data_type, "like",
                        like.data_type);
      ctx.Output("out") = BlobDesc{out, data.data_type, like.is_dynamic};
    })
    .InfersDynamic()
    .SetSbpFn([](SbpContext& ctx) { GetSegmentSumSbp(ctx, true); })
    .SetGradFn(GenerateSegmentSumGrad);

}  // namespace oneflow
