#pragma once
// Reusable pieces of shape and dtype inference shared by the op declarations in oneflow/ops/.
// Each helper throws ValueError/TypeError prefixed with "<op_type>: " and stating the rule
// broken; the caller (job builder) adds the op's name and its input descriptions.

#include <cstdint>
#include <string>
#include <vector>

#include "oneflow/common/shape.h"
#include "proto/op_conf.pb.h"

namespace oneflow {

class InferContext;

// Output `output` gets the shape and dtype of input `input`.
void InferSameAsInput(InferContext& ctx, const std::string& input, const std::string& output);

// Elementwise op: `output` gets the shape and dtype of `input`, whose dtype must be in `allowed`.
void InferElementwiseUnary(InferContext& ctx, const std::string& op_type, const std::string& input,
                           const std::string& output, const std::vector<DataType>& allowed);

// Elementwise gradient ops (forward, dy -> dx), `forward` the output y of an activation or the
// input x of a unary math op: both must agree in shape and in a floating dtype.
void InferActivationGrad(InferContext& ctx, const std::string& op_type,
                         const std::string& forward = "y");

// Numpy broadcasting of two shapes, aligned from the right. Throws ValueError naming both shapes.
Shape BroadcastShapes(const std::string& op_type, const Shape& x, const Shape& y);

// `shape` right-aligned to `num_axes` axes by prepending 1s (num_axes >= shape.num_axes()).
Shape ExtendShapeTo(const Shape& shape, int64_t num_axes);

// Axes of `large` that are summed to obtain `small` under numpy broadcasting (small aligned
// right, its dims equal to large's or 1). Throws ValueError when `small` does not broadcast.
std::vector<int64_t> BroadcastReducedAxes(const std::string& op_type, const Shape& small,
                                          const Shape& large);

// Sorted unique axes in [0, num_axes); negative axes count from the end; empty means all axes.
// Throws ValueError naming the axis and the rank when one is out of range.
std::vector<int64_t> NormalizeReduceAxes(const std::string& op_type,
                                         const std::vector<int64_t>& axes, int64_t num_axes);

// One axis in [-num_axes, num_axes) normalised to [0, num_axes), or a ValueError.
int64_t NormalizeAxis(const std::string& op_type, const std::string& what, int64_t axis,
                      int64_t num_axes);

// Shape of a reduction over normalised `axes`: reduced axes become 1 (keepdims) or are dropped
// (all of them dropped: shape (1,), as in OneFlow 0.3).
Shape ReduceShape(const Shape& shape, const std::vector<int64_t>& axes, bool keepdims);

// broadcast_like: `x` may be like's shape with the normalised `broadcast_axes` removed or kept as
// 1, or (any broadcast_axes, or empty ones) numpy-broadcastable to like along broadcast_axes
// only. Returns x's shape right-aligned to like's rank (1s where broadcast), or a ValueError.
Shape BroadcastLikeInputShape(const std::string& op_type, const Shape& x, const Shape& like,
                              const std::vector<int64_t>& broadcast_axes);

// reduce_sum_like: the normalised axes of `x` summed to obtain `like`'s shape. Empty `axes`
// infers them by numpy broadcasting of like to x; explicit axes require like to be x reduced
// over them (reduced axes dropped, kept as 1, or like right-aligned to that). ValueError else.
std::vector<int64_t> ReduceSumLikeAxes(const std::string& op_type, const Shape& x,
                                       const Shape& like, const std::vector<int64_t>& axes);

// TypeError "<op_type>: x and y must have the same dtype, got float32 and int32".
void CheckSameDataType(const std::string& op_type, const std::string& first_name, DataType first,
                       const std::string& second_name, DataType second);

// TypeError unless `data_type` is float32 or float64.
void CheckFloatingDataType(const std::string& op_type, const std::string& argument,
                           DataType data_type);

// TypeError unless `data_type` is float32, float64 or float16: the check of the ops with float16
// kernels, on GPUs natively and on the CPU through float32 copies (cpu/half_via_float_kernel.h).
void CheckFloatingOrHalfDataType(const std::string& op_type, const std::string& argument,
                                 DataType data_type);

// TypeError unless `data_type` is one of `allowed`; the message lists the allowed dtypes.
void CheckDataTypeIn(const std::string& op_type, const std::string& argument, DataType data_type,
                     const std::vector<DataType>& allowed);

// The list_int64 attribute `name` of `conf`. ToAttrValue of an empty vector sets no value case,
// so an empty list arrives unset; it reads as empty here instead of failing the type check.
std::vector<int64_t> Int64ListAttr(const OperatorConf& conf, const std::string& name);

// "[0, 2]" for error messages.
std::string AxesToString(const std::vector<int64_t>& axes);

}  // namespace oneflow
