#pragma once
// Moving boxes of tensors between host buffers: what boxing does on a CPU. A buffer holds one
// box (TensorSlice) of a logical tensor, in row-major order; a copy moves the intersection of
// two such boxes (or adds it, to sum partial values).

#include "oneflow/common/data_type.h"
#include "oneflow/sbp/tensor_slice.h"

namespace oneflow {

// Writes (or, with `accumulate`, adds) the box `region`, given in logical coordinates and lying
// inside both `src_slice` and `dst_slice`, from `src` (holding src_slice) into `dst` (holding
// dst_slice). Rows contiguous in both buffers move as one block.
void CopyTensorSlice(DataType data_type, const TensorSlice& region, const void* src,
                     const TensorSlice& src_slice, void* dst, const TensorSlice& dst_slice,
                     bool accumulate);

}  // namespace oneflow
