#pragma once
// Shape rules shared by the shape and indexing ops (slice, slice_update, pad, concat, gather,
// unsorted_segment_sum, gather_nd, scatter_nd) and their CPU kernels, so that an op's infer
// function and its kernel agree on one definition. Errors are ValueError/TypeError prefixed
// with the op type.

#include <cstdint>
#include <string>
#include <vector>

#include "oneflow/common/data_type.h"
#include "oneflow/common/shape.h"

namespace oneflow {

// Every dtype that ops which only move elements (slice, concat, gather, pad) accept; float16
// since auto mixed precision may run them in it on GPUs (their CPU kernels stay without).
const std::vector<DataType>& MovableDataTypes();

// Index blobs (gather indices, segment ids, scatter indices, one_hot indices).
const std::vector<DataType>& IndexDataTypes();

// A strided slice of every axis, in normalised form (Python's slice.indices): for step > 0,
// 0 <= start, stop <= dim; for step < 0, -1 <= start, stop <= dim - 1; step != 0.
struct SliceSpec {
  std::vector<int64_t> start;
  std::vector<int64_t> stop;
  std::vector<int64_t> step;
};

// Checks `spec` against `shape` and returns the sliced dims. ValueError names the axis.
std::vector<int64_t> SlicedDims(const std::string& op_type, const Shape& shape,
                                const SliceSpec& spec);

// A slice of a dynamic blob (BlobDesc::is_dynamic) is resolved against its upper bound; in a run
// with fewer elements, each positive step's start and stop clamp to the run's dims (NumPy's rule
// for bounds past the end). Slices of static blobs come back unchanged.
SliceSpec ClampToRunShape(SliceSpec spec, const BlobDesc& x);

// Whether the slice keeps axis `axis` whole (start 0, stop dim, step 1).
bool SliceKeepsAxis(const Shape& shape, const SliceSpec& spec, int64_t axis);

// Gather geometry (also that of its inverse, unsorted_segment_sum): params of rank P gathered
// on `axis` with indices of rank I whose first `batch_dims` axes match params':
// out = params[:axis] + indices[batch_dims:] + params[axis + 1:].
struct GatherGeometry {
  int64_t outer = 1;        // prod(params[:axis])
  int64_t batch_outer = 1;  // prod(params[batch_dims:axis]): outer rows per batch element
  int64_t axis_dim = 0;     // params[axis]
  int64_t indices_per_batch = 1;  // prod(indices[batch_dims:])
  int64_t inner = 1;        // prod(params[axis + 1:])
};
GatherGeometry MakeGatherGeometry(const Shape& params, const Shape& indices, int64_t axis,
                                  int64_t batch_dims);

// Validates axis and batch_dims of a gather (normalising a negative axis) and returns out's
// shape. `params_name` names the gathered blob in messages ("params", "like").
Shape GatherShape(const std::string& op_type, const Shape& params, const Shape& indices,
                  int64_t* axis, int64_t batch_dims);

// Reads element `index` of an int32 or int64 index blob as int64.
inline int64_t IndexAt(DataType data_type, const void* data, int64_t index) {
  return data_type == kInt32 ? static_cast<int64_t>(static_cast<const int32_t*>(data)[index])
                             : static_cast<const int64_t*>(data)[index];
}

// Throws ValueError "<op_type>: <what> <value> at position <i> is out of range [0, <limit>)"
// for the first index outside [0, limit).
void CheckIndicesInRange(const std::string& op_type, const std::string& what,
                         DataType data_type, const void* data, int64_t count, int64_t limit);

}  // namespace oneflow
