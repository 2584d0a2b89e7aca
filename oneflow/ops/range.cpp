// range: start, start + delta, ... up to (excluding) limit, as a 1-D blob of `dtype`. Integer
// dtypes use the integer_* attributes (exact), floating ones the floating ones. A source op;
// a device holding a split slice computes its part from its offset, so S(0) is valid.

#include <cmath>

#include "oneflow/common/data_type.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"

namespace oneflow {

namespace {

// Number of elements of the range, or a ValueError when delta is 0 or the range is empty.
int64_t RangeCount(const InferContext& ctx, bool integral) {
  int64_t count = 0;
  std::string description;
  if (integral) {
    const int64_t start = ctx.Attr<int64_t>("integer_start");
    const int64_t limit = ctx.Attr<int64_t>("integer_limit");
    const int64_t delta = ctx.Attr<int64_t>("integer_delta");
    if (delta == 0) { throw Error(ErrorKind::kValue) << "range: delta must not be 0"; }
    const int64_t span = limit - start;
    count = span != 0 && (span > 0) == (delta > 0) ? (std::abs(span) - 1) / std::abs(delta) + 1 : 0;
    description = std::to_string(start) + ", " + std::to_string(limit) + ", " +
                  std::to_string(delta);
  } else {
    const double start = ctx.Attr<double>("start");
    const double limit = ctx.Attr<double>("limit");
    const double delta = ctx.Attr<double>("delta");
    if (delta == 0.0) { throw Error(ErrorKind::kValue) << "range: delta must not be 0"; }
    count = static_cast<int64_t>(std::max(0.0, std::ceil((limit - start) / delta)));
    description = std::to_string(start) + ", " + std::to_string(limit) + ", " +
                  std::to_string(delta);
  }
  if (count <= 0) {
    throw Error(ErrorKind::kValue) << "range: (start, limit, delta) = (" << description
                                   << ") gives no element";
  }
  return count;
}

void InferRange(InferContext& ctx) {
  DataType data_type = ctx.Attr<DataType>("dtype");
  CheckDataTypeIn("range", "dtype", data_type, {kFloat, kDouble, kInt8, kInt32, kInt64, kUInt8});
  ctx.Output("out") = BlobDesc{Shape({RangeCount(ctx, IsIntegralDataType(data_type))}), data_type};
}

}  // namespace

REGISTER_OP("range")
    .Output("out")
    .RequiredAttr<DataType>("dtype")
    .Attr<int64_t>("integer_start", 0)
    .Attr<int64_t>("integer_limit", 0)
    .Attr<int64_t>("integer_delta", 1)
    .Attr<double>("start", 0.0)
    .Attr<double>("limit", 0.0)
    .Attr<double>("delta", 1.0)
    .SetInferFn(InferRange)
    .SetSbpFn([](SbpContext& ctx) {
      ctx.NewSignature().Split("out", 0).Build();
      ctx.NewSignature().Broadcast("out").Build();
    })
    .NonDifferentiable();

}  // namespace oneflow
