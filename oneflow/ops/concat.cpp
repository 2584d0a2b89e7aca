// concat: joins its inputs along `axis`; all other dims must agree. Each input's gradient is
// the slice of dy that the input filled (split_like when an input is dynamic: the slices follow
// the run's sizes). `max_dim_size` (OneFlow 0.3's, 0: none) bounds the result's axis: the
// static inputs must fit in it, and with a dynamic input it is the result's (upper-bound) size;
// each run's inputs must fit in it too.
// split_like: the inverse: out[i] is the next like[i].shape[axis] entries of `in` along `axis`
// (the likes give only those sizes, which must add up to in's); its gradient concatenates the
// outputs' gradients (zeros for an output without one).

#include "oneflow/common/data_type.h"
#include "oneflow/framework/index_functions.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"

namespace oneflow {

namespace {

void InferConcat(InferContext& ctx) {
  const int64_t count = ctx.InputCount("in");
  const BlobDesc& first = ctx.Input("in", 0);
  CheckDataTypeIn("concat", "in", first.data_type, MovableDataTypes());
  if (first.shape.num_axes() == 0) {
    throw Error(ErrorKind::kValue) << "concat: cannot concatenate 0-d blobs";
  }
  const int64_t axis =
      NormalizeAxis("concat", "axis", ctx.Attr<int64_t>("axis"), first.shape.num_axes());
  std::vector<int64_t> dims = first.shape.dims();
  for (int64_t index = 1; index < count; ++index) {
    const BlobDesc& input = ctx.Input("in", index);
    if (input.data_type != first.data_type) {
      throw Error(ErrorKind::kType)
          << "concat: input " << index << " is " << DataTypeName(input.data_type)
          << " but input 0 is " << DataTypeName(first.data_type)
          << "; all inputs must have the same dtype";
    }
    bool matches = input.shape.num_axes() == first.shape.num_axes();
    for (int64_t dim = 0; matches && dim < first.shape.num_axes(); ++dim) {
      matches = dim == axis || input.shape.At(dim) == first.shape.At(dim);
    }
    if (!matches) {
      throw Error(ErrorKind::kValue)
          << "concat: input " << index << " has shape " << input.shape.ToString()
          << " but input 0 has " << first.shape.ToString()
          << "; all inputs must have the same rank and the same dims except on axis " << axis;
    }
    dims[axis] += input.shape.At(axis);
  }
  const int64_t max_dim_size = ctx.Attr<int64_t>("max_dim_size");
  if (max_dim_size > 0) {
    int64_t static_size = 0;
    for (int64_t index = 0; index < count; ++index) {
      const BlobDesc& input = ctx.Input("in", index);
      if (!input.is_dynamic || ctx.in_run()) { static_size += input.shape.At(axis); }
    }
    if (static_size > max_dim_size) {
      throw Error(ErrorKind::kValue)
          << "concat: the " << (ctx.in_run() ? "inputs of this run" : "static inputs")
          << " add up to " << static_size << " on axis " << axis << ", more than max_dim_size "
          << max_dim_size;
    }
    if (!ctx.in_run() && ctx.AnyInputDynamic()) { dims[axis] = max_dim_size; }
  }
  ctx.Output("out") = BlobDesc{Shape(dims), first.data_type};
}

// Any axis but the concatenated one may be split: each device concatenates its own rows.
void GetConcatSbp(SbpContext& ctx) {
  const Shape& first = ctx.LogicalInput("in", 0).shape;
  const int64_t axis =
      NormalizeAxis("concat", "axis", ctx.Attr<int64_t>("axis"), first.num_axes());
  for (int64_t dim = 0; dim < first.num_axes(); ++dim) {
    if (dim == axis) { continue; }
    ctx.NewSignature().SplitAllInputs(dim).SplitAllOutputs(dim).Build();
  }
  ctx.NewSignature().PartialSum("in").PartialSum("out").Build();
  ctx.NewSignature().BroadcastAllInputs().BroadcastAllOutputs().Build();
}

void GenerateConcatGrad(GradContext& ctx) {
  const std::string dy = ctx.OutputGrad("out");
  const Shape& out = ctx.Desc(ctx.Output("out")).shape;
  const int64_t axis = NormalizeAxis("concat", "axis", ctx.Attr<int64_t>("axis"), out.num_axes());
  bool dynamic = false;
  for (int64_t index = 0; index < ctx.InputCount("in"); ++index) {
    dynamic = dynamic || ctx.Desc(ctx.Input("in", index)).is_dynamic;
  }
  if (dynamic) {  // the inputs' sizes in each run place the slices
    OpConfBuilder split("split_like", "");
    split.Input("in", dy).Attr("axis", axis);
    for (int64_t index = 0; index < ctx.InputCount("in"); ++index) {
      split.Input("like", ctx.Input("in", index));
    }
    const std::string split_op = OpNameOfLbn(ctx.AddOp("in_grad", split));
    for (int64_t index = 0; index < ctx.InputCount("in"); ++index) {
      if (ctx.NeedInputGrad("in", index)) {
        ctx.SetInputGrad("in", index, MakeLbn(split_op, "out", index));
      }
    }
    return;
  }
  int64_t offset = 0;
  for (int64_t index = 0; index < ctx.InputCount("in"); ++index) {
    const int64_t size = ctx.Desc(ctx.Input("in", index)).shape.At(axis);
    if (ctx.NeedInputGrad("in", index)) {
      std::vector<int64_t> start(out.num_axes(), 0);
      std::vector<int64_t> stop = out.dims();
      std::vector<int64_t> step(out.num_axes(), 1);
      start[axis] = offset;
      stop[axis] = offset + size;
      std::string din = ctx.AddOp(
          "in_grad_" + std::to_string(index),
          OpConfBuilder("slice", "").Input("x", dy).Attr("start", start).Attr("stop", stop).Attr(
              "step", step),
          "y");
      ctx.SetInputGrad("in", index, din);
    }
    offset += size;
  }
}

void InferSplitLike(InferContext& ctx) {
  const BlobDesc& in = ctx.Input("in");
  CheckDataTypeIn("split_like", "in", in.data_type, MovableDataTypes());
  if (in.shape.num_axes() == 0) { throw Error(ErrorKind::kValue) << "split_like: in is 0-d"; }
  const int64_t axis =
      NormalizeAxis("split_like", "axis", ctx.Attr<int64_t>("axis"), in.shape.num_axes());
  int64_t total = 0;
  for (int64_t index = 0; index < ctx.InputCount("like"); ++index) {
    const Shape& like = ctx.Input("like", index).shape;
    if (like.num_axes() <= axis) {
      throw Error(ErrorKind::kValue) << "split_like: like[" << index << "] " << like.ToString()
                                     << " has no axis " << axis << " to take a size from";
    }
    std::vector<int64_t> dims = in.shape.dims();
    dims[axis] = like.At(axis);
    total += like.At(axis);
    ctx.Output("out", index) = BlobDesc{Shape(dims), in.data_type};
  }
  // A dynamic blob's sizes add up in each run; their bounds need not (concat's max_dim_size).
  const bool bounds_only = !ctx.in_run() && ctx.AnyInputDynamic();
  if (total != in.shape.At(axis) && !bounds_only) {
    throw Error(ErrorKind::kValue)
        << "split_like: the likes' sizes on axis " << axis << " add up to " << total << ", but in "
        << in.shape.ToString() << " has " << in.shape.At(axis);
  }
}

// Any axis but the split one may be split over devices; the likes only give sizes (broadcast).
void GetSplitLikeSbp(SbpContext& ctx) {
  const Shape& in = ctx.LogicalInput("in").shape;
  const int64_t axis =
      NormalizeAxis("split_like", "axis", ctx.Attr<int64_t>("axis"), in.num_axes());
  for (int64_t dim = 0; dim < in.num_axes(); ++dim) {
    if (dim == axis) { continue; }
    ctx.NewSignature().Split("in", dim).Broadcast("like").SplitAllOutputs(dim).Build();
  }
  ctx.NewSignature().PartialSum("in").Broadcast("like").PartialSumAllOutputs().Build();
  ctx.NewSignature().BroadcastAllInputs().BroadcastAllOutputs().Build();
}

void GenerateSplitLikeGrad(GradContext& ctx) {
  if (!ctx.NeedInputGrad("in")) { return; }
  OpConfBuilder concat("concat", "");
  for (int64_t index = 0; index < ctx.InputCount("like"); ++index) {
    concat.Input("in", ctx.OutputGrad("out", index));  // zeros where none flows
  }
  concat.Attr("axis", ctx.Attr<int64_t>("axis"));
  ctx.SetInputGrad("in", ctx.AddOp("in_grad", concat));
}

}  // namespace

REGISTER_OP("split_like")
    .Input("in")
    .VariadicInput("like")
    .VariadicOutput("out", "like")
    .Attr<int64_t>("axis", 0)
    .NoGradInput("like")
    .KernelDataTypeFrom("in")
    .SetInferFn(InferSplitLike)
    .SetSbpFn(GetSplitLikeSbp)
    .SetGradFn(GenerateSplitLikeGrad);

REGISTER_OP("concat")
    .VariadicInput("in")
    .Output("out")
    .Attr<int64_t>("axis", 0)
    .Attr<int64_t>("max_dim_size", 0)
    .SetInferFn(InferConcat)
    .SetSbpFn(GetConcatSbp)
    .SetGradFn(GenerateConcatGrad);

}  // namespace oneflow
