#include "oneflow/framework/index_functions.h"

#include <algorithm>

#include "oneflow/common/error.h"
#include "oneflow/framework/shape_functions.h"

namespace oneflow {

const std::vector<DataType>& MovableDataTypes() {
  static const std::vector<DataType> types = {kFloat, kDouble, kFloat16, kInt8,
                                              kInt32, kInt64,  kUInt8};
  return types;
}

const std::vector<DataType>& IndexDataTypes() {
  static const std::vector<DataType> types = {kInt32, kInt64};
  return types;
}

std::vector<int64_t> SlicedDims(const std::string& op_type, const Shape& shape,
                                const SliceSpec& spec) {
  const int64_t num_axes = shape.num_axes();
  if (static_cast<int64_t>(spec.start.size()) != num_axes ||
      static_cast<int64_t>(spec.stop.size()) != num_axes ||
      static_cast<int64_t>(spec.step.size()) != num_axes) {
    throw Error(ErrorKind::kValue)
        << op_type << ": start, stop and step must have one entry per axis of "
        << shape.ToString() << ", got " << spec.start.size() << ", " << spec.stop.size()
        << " and " << spec.step.size();
  }
  std::vector<int64_t> dims(num_axes);
  for (int64_t axis = 0; axis < num_axes; ++axis) {
    const int64_t dim = shape.At(axis);
    const int64_t start = spec.start[axis];
    const int64_t stop = spec.stop[axis];
    const int64_t step = spec.step[axis];
    if (step == 0) {
      throw Error(ErrorKind::kValue) << op_type << ": slice step of axis " << axis
                                     << " is 0; a step must be non-zero";
    }
    const int64_t low = step > 0 ? 0 : -1;
    const int64_t high = step > 0 ? dim : dim - 1;
    if (start < low || start > high || stop < low || stop > high) {
      throw Error(ErrorKind::kValue)
          << op_type << ": slice (" << start << ", " << stop << ", " << step << ") of axis "
          << axis << " of size " << dim << " is not normalised (start and stop must lie in ["
          << low << ", " << high << "] for a " << (step > 0 ? "positive" : "negative")
          << " step)";
    }
    const int64_t span = step > 0 ? stop - start : start - stop;
    // -step of INT64_MIN overflows; any step at least as long as the axis takes one element.
    const int64_t magnitude = step > 0 ? step : step < -dim ? dim + 1 : -step;
    dims[axis] = span <= 0 ? 0 : 1 + (span - 1) / magnitude;
  }
  return dims;
}

SliceSpec ClampToRunShape(SliceSpec spec, const BlobDesc& x) {
  if (!x.is_dynamic || static_cast<int64_t>(spec.step.size()) != x.shape.num_axes() ||
      spec.start.size() != spec.step.size() || spec.stop.size() != spec.step.size()) {
    return spec;
  }
  for (int64_t axis = 0; axis < x.shape.num_axes(); ++axis) {
    if (spec.step[axis] <= 0) { continue; }
    spec.start[axis] = std::min(spec.start[axis], x.shape.At(axis));
    spec.stop[axis] = std::min(spec.stop[axis], x.shape.At(axis));
  }
  return spec;
}

bool SliceKeepsAxis(const Shape& shape, const SliceSpec& spec, int64_t axis) {
  return spec.start[axis] == 0 && spec.stop[axis] == shape.At(axis) && spec.step[axis] == 1;
}

GatherGeometry MakeGatherGeometry(const Shape& params, const Shape& indices, int64_t axis,
                                  int64_t batch_dims) {
  GatherGeometry geometry;
  geometry.outer = params.Count(0, axis);
  geometry.batch_outer = params.Count(batch_dims, axis);
  geometry.axis_dim = params.At(axis);
  geometry.indices_per_batch = indices.Count(batch_dims, indices.num_axes());
  geometry.inner = params.Count(axis + 1, params.num_axes());
  return geometry;
}

Shape GatherShape(const std::string& op_type, const Shape& params, const Shape& indices,
                  int64_t* axis, int64_t batch_dims) {
  if (params.num_axes() == 0) {
    throw Error(ErrorKind::kValue) << op_type << ": cannot gather from a 0-d blob";
  }
  *axis = NormalizeAxis(op_type, "axis", *axis, params.num_axes());
  if (batch_dims < 0 || batch_dims > indices.num_axes() || batch_dims > *axis) {
    throw Error(ErrorKind::kValue)
        << op_type << ": batch_dims " << batch_dims << " must be in [0, min(rank of indices "
        << indices.num_axes() << ", axis " << *axis << ")]";
  }
  for (int64_t dim = 0; dim < batch_dims; ++dim) {
    if (params.At(dim) != indices.At(dim)) {
      throw Error(ErrorKind::kValue)
          << op_type << ": the first batch_dims=" << batch_dims << " dims of params "
          << params.ToString() << " and indices " << indices.ToString() << " must be equal";
    }
  }
  std::vector<int64_t> dims(params.dims().begin(), params.dims().begin() + *axis);
  dims.insert(dims.end(), indices.dims().begin() + batch_dims, indices.dims().end());
  dims.insert(dims.end(), params.dims().begin() + *axis + 1, params.dims().end());
  return Shape(dims);
}

void CheckIndicesInRange(const std::string& op_type, const std::string& what,
                         DataType data_type, const void* data, int64_t count, int64_t limit) {
  for (int64_t position = 0; position < count; ++position) {
    const int64_t value = IndexAt(data_type, data, position);
    if (value < 0 || value >= limit) {
      throw Error(ErrorKind::kValue)
          << op_type << ": " << what << " " << value << " at position " << position
          << " is out of range [0, " << limit << ")";
    }
  }
}

}  // namespace oneflow
