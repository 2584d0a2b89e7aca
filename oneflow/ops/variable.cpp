// "variable": a trainable or persistent blob owned by the session. Its memory is the session's
// variable of the same name (shared by every job that declares it), initialised at session start
// from the initializer attributes; the kernel itself does nothing.
#include <algorithm>
#include <cstdio>
#include <limits>
#include <string>

#include "oneflow/common/data_type.h"
#include "oneflow/framework/op_registry.h"

namespace oneflow {
namespace {

// An integer variable's constant, or its uniform bounds, must be numbers its dtype holds (after
// truncation toward zero, as OneFlow's and PyTorch's conversions do).
void CheckIntegerInitializer(InferContext& ctx, DataType data_type, const std::string& kind) {
  const std::vector<double> args = ctx.Attr<std::vector<double>>("initializer_args");
  const size_t count = kind == "constant" ? 1 : kind == "random_uniform" ? 2 : 0;
  struct Range {
    double low, high;  // high is exclusive
    std::string text;
  };
  const Range range = SwitchDataType(data_type, []<typename T>() {
    return Range{static_cast<double>(std::numeric_limits<T>::lowest()),
                 static_cast<double>(std::numeric_limits<T>::max()) + 1.0,
                 "[" + std::to_string(std::numeric_limits<T>::lowest()) + ", " +
                     std::to_string(std::numeric_limits<T>::max()) + "]"};
  });
  for (size_t i = 0; i < std::min(count, args.size()); ++i) {
    if (!(args[i] > range.low - 1.0 && args[i] < range.high)) {
      char value[32];
      std::snprintf(value, sizeof(value), "%.17g", args[i]);
      throw Error(ErrorKind::kValue)
          << "variable '" << ctx.op_name() << "': " << kind << " initializer value " << value
          << " does not fit its dtype " << DataTypeName(data_type) << " (range " << range.text
          << ")";
    }
  }
}

void InferVariable(InferContext& ctx) {
  BlobDesc& out = ctx.Output("out");
  out.shape = ctx.Attr<Shape>("shape");
  out.data_type = ctx.Attr<DataType>("dtype");
  for (int64_t dim : out.shape.dims()) {
    if (dim <= 0) {
      throw Error(ErrorKind::kValue) << "variable: every dimension of shape must be positive, got "
                                     << out.shape.ToString();
    }
  }
  const std::string kind = ctx.Attr<std::string>("initializer");
  if (kind != "constant" && kind != "random_uniform" && kind != "random_normal" &&
      kind != "truncated_normal" && kind != "variance_scaling") {
    throw Error(ErrorKind::kValue) << "variable: unknown initializer '" << kind << "'";
  }
  if (IsIntegralDataType(out.data_type)) { CheckIntegerInitializer(ctx, out.data_type, kind); }
  for (const char* name : {"l1", "l2"}) {
    if (!(ctx.Attr<double>(name) >= 0.0)) {
      throw Error(ErrorKind::kValue) << "variable '" << ctx.op_name() << "': regularizer " << name
                                     << " must be >= 0, got " << ctx.Attr<double>(name);
    }
  }
}

void GetVariableSbp(SbpContext& ctx) {
  int64_t split_axis = ctx.Attr<int64_t>("split_axis");
  if (split_axis >= 0) {
    ctx.NewSignature().Split("out", split_axis).Build();
  } else {
    ctx.NewSignature().Broadcast("out").Build();
  }
}

}  // namespace

REGISTER_OP("variable")
    .Output("out")
    .RequiredAttr<Shape>("shape")
    .RequiredAttr<DataType>("dtype")
    .Attr<std::string>("initializer", "constant")
    // Initializer parameters by kind: constant [value]; random_uniform [min, max];
    // random_normal / truncated_normal [mean, stddev];
    // variance_scaling [scale, mode (0 fan_in, 1 fan_out, 2 fan_avg),
    //                   distribution (0 truncated_normal, 1 random_normal, 2 random_uniform)].
    .Attr<std::vector<double>>("initializer_args", {0.0})
    .Attr<int64_t>("seed", 0)
    .Attr<bool>("trainable", true)
    // -1: broadcast over the placement; >= 0: model-parallel split along that axis.
    .Attr<int64_t>("split_axis", -1)
    // flow.regularizers: the optimizer adds l1 * sign(value) + l2 * value to the gradient.
    .Attr<double>("l1", 0.0)
    .Attr<double>("l2", 0.0)
    .SetInferFn(InferVariable)
    .SetSbpFn(GetVariableSbp);

}  // namespace oneflow
