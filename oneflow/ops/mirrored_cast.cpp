// The two conversions between the consistent view (one logical blob laid out over the devices)
// and the mirrored view (one independent value per device, each of the blob's shape). Both only
// reinterpret each device's bytes, so their kernels are copies; `parts` is the device count.
//   cast_to_mirrored  mode "broadcast": a broadcast blob; every device gets the whole value.
//                     mode "split":     split(0) of (parts * n, ...); each device its (n, ...).
//                     mode "unstack":   split(0) of (parts, ...); device i gets row i.
//   cast_from_mirrored mode "sum":      the values are the addends of a partial-sum blob.
//                     mode "concat":    the values are the rows of a split(0) blob.
//                     mode "stack":     a split(0) blob of shape (parts, ...) with row i from i.
// Each is the other's gradient (sum <-> broadcast, concat <-> split, stack <-> unstack).
#include "oneflow/common/data_type.h"
#include "oneflow/framework/op_registry.h"

namespace oneflow {
namespace {

void CheckMode(const std::string& op_type, const std::string& mode,
               const std::vector<std::string>& allowed) {
  for (const std::string& name : allowed) {
    if (mode == name) { return; }
  }
  throw Error(ErrorKind::kValue) << op_type << ": unknown mode '" << mode << "'";
}

void InferCastToMirrored(InferContext& ctx) {
  const std::string mode = ctx.Attr<std::string>("mode");
  CheckMode("cast_to_mirrored", mode, {"broadcast", "split", "unstack"});
  const int64_t parts = ctx.Attr<int64_t>("parts");
  const BlobDesc& in = ctx.Input("in");
  BlobDesc& out = ctx.Output("out");
  out = in;
  if (mode == "broadcast") { return; }
  if (in.shape.num_axes() == 0 || in.shape.At(0) % parts != 0) {
    throw Error(ErrorKind::kValue)
        << "cast_to_mirrored: a blob of shape " << in.shape.ToString() << " does not split into "
        << parts << " equal per-device values along axis 0";
  }
  if (mode == "split") {
    out.shape.Set(0, in.shape.At(0) / parts);
  } else {
    if (in.shape.At(0) != parts) {
      throw Error(ErrorKind::kValue) << "cast_to_mirrored: unstacking " << in.shape.ToString()
                                     << " needs axis 0 equal to the device count " << parts;
    }
    std::vector<int64_t> dims(in.shape.dims().begin() + 1, in.shape.dims().end());
    out.shape = Shape(dims);
  }
}

void InferCastFromMirrored(InferContext& ctx) {
  const std::string mode = ctx.Attr<std::string>("mode");
  CheckMode("cast_from_mirrored", mode, {"sum", "concat", "stack"});
  const int64_t parts = ctx.Attr<int64_t>("parts");
  const BlobDesc& in = ctx.Input("in");
  BlobDesc& out = ctx.Output("out");
  out = in;
  // The devices' values of a dynamic blob (each its own shape) only add up: the sum must come
  // out at the compiled shape (checked at run time; a variable's gradient does), and is static.
  out.is_dynamic = in.is_dynamic && parts == 1;
  if (in.is_dynamic && parts > 1 && mode != "sum") {
    throw Error(ErrorKind::kValue)
        << "cast_from_mirrored: the devices' values of a blob whose shape differs per device ("
        << in.ToString() << ", from a ListNumpy argument given arrays of different shapes) do "
        << "not " << mode << " into one consistent blob; keep it in the mirrored view and "
        << "return it as oneflow.typing.ListNumpy";
  }
  if (mode == "concat") {
    if (in.shape.num_axes() == 0) {
      throw Error(ErrorKind::kValue) << "cast_from_mirrored: cannot concatenate 0-d values";
    }
    out.shape.Set(0, in.shape.At(0) * parts);
  } else if (mode == "stack") {
    std::vector<int64_t> dims = {parts};
    dims.insert(dims.end(), in.shape.dims().begin(), in.shape.dims().end());
    out.shape = Shape(dims);
  }
}

void GetCastToMirroredSbp(SbpContext& ctx) {
  if (ctx.Attr<std::string>("mode") == "broadcast") {
    ctx.NewSignature().Broadcast("in").Broadcast("out").Build();
  } else {
    ctx.NewSignature().Split("in", 0).Broadcast("out").Build();
  }
}

void GetCastFromMirroredSbp(SbpContext& ctx) {
  if (ctx.Attr<std::string>("mode") == "sum") {
    ctx.NewSignature().Broadcast("in").PartialSum("out").Build();
  } else {
    ctx.NewSignature().Broadcast("in").Split("out", 0).Build();
  }
}

const char* InverseMode(const std::string& mode) {
  if (mode == "broadcast") { return "sum"; }
  if (mode == "sum") { return "broadcast"; }
  if (mode == "split") { return "concat"; }
  if (mode == "concat") { return "split"; }
  if (mode == "unstack") { return "stack"; }
  return "unstack";
}

GradFn MirroredCastGrad(const std::string& inverse_type) {
  return [inverse_type](GradContext& ctx) {
    if (!ctx.NeedInputGrad("in")) { return; }
    std::string dx = ctx.AddOp("grad", OpConfBuilder(inverse_type, "")
                                           .Input("in", ctx.OutputGrad("out"))
                                           .Attr("mode", InverseMode(ctx.Attr<std::string>("mode")))
                                           .Attr("parts", ctx.Attr<int64_t>("parts")));
    ctx.SetInputGrad("in", dx);
  };
}

}  // namespace

REGISTER_OP("cast_to_mirrored")
    .Input("in")
    .Output("out")
    .RequiredAttr<std::string>("mode")
    .RequiredAttr<int64_t>("parts")
    .SetInferFn(InferCastToMirrored)
    .SetSbpFn(GetCastToMirroredSbp)
    .SetGradFn(MirroredCastGrad("cast_from_mirrored"));

REGISTER_OP("cast_from_mirrored")
    .Input("in")
    .Output("out")
    .RequiredAttr<std::string>("mode")
    .RequiredAttr<int64_t>("parts")
    .InfersDynamic()
    .SetInferFn(InferCastFromMirrored)
    .SetSbpFn(GetCastFromMirroredSbp)
    .SetGradFn(MirroredCastGrad("cast_to_mirrored"));

}  // namespace oneflow
