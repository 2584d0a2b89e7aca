#include "oneflow/kernels/cpu/broadcast_plan.h"

#include "oneflow/common/error.h"
#include "oneflow/framework/shape_functions.h"

namespace oneflow {

BroadcastPlan::BroadcastPlan(const Shape& iteration_shape,
                             const std::vector<Shape>& operand_shapes) {
  const int64_t num_axes = iteration_shape.num_axes();
  const int64_t operand_count = static_cast<int64_t>(operand_shapes.size());
  OF_CHECK(operand_count <= kMaxOperands);
  // Per operand, its element stride along each iteration axis (0 where it broadcasts). Axes of
  // size 1 are dropped: they never move any offset.
  std::vector<int64_t> dims;
  std::vector<std::vector<int64_t>> strides(operand_count);
  std::vector<Shape> extended;
  std::vector<int64_t> contiguous_strides(operand_count, 1);
  for (const Shape& shape : operand_shapes) {
    OF_CHECK(shape.num_axes() <= num_axes);
    extended.push_back(ExtendShapeTo(shape, num_axes));
  }
  std::vector<std::vector<int64_t>> reversed_strides(operand_count);
  std::vector<int64_t> reversed_dims;
  for (int64_t axis = num_axes - 1; axis >= 0; --axis) {
    int64_t dim = iteration_shape.At(axis);
    for (int64_t operand = 0; operand < operand_count; ++operand) {
      int64_t operand_dim = extended[operand].At(axis);
      OF_CHECK(operand_dim == dim || operand_dim == 1);
      if (dim != 1) {
        reversed_strides[operand].push_back(operand_dim == 1 ? 0 : contiguous_strides[operand]);
      }
      contiguous_strides[operand] *= operand_dim;
    }
    if (dim != 1) { reversed_dims.push_back(dim); }
  }
  // Merge an outer axis into the merged inner one when every operand continues contiguously
  // (or stays broadcast) across the boundary.
  for (size_t index = 0; index < reversed_dims.size(); ++index) {
    bool mergeable = !dims.empty();
    for (int64_t operand = 0; mergeable && operand < operand_count; ++operand) {
      int64_t inner_stride = strides[operand].back();
      int64_t stride = reversed_strides[operand][index];
      mergeable = stride == inner_stride * dims.back();
    }
    if (mergeable) {
      dims.back() *= reversed_dims[index];
    } else {
      dims.push_back(reversed_dims[index]);
      for (int64_t operand = 0; operand < operand_count; ++operand) {
        strides[operand].push_back(reversed_strides[operand][index]);
      }
    }
  }
  // dims/strides are innermost first; the first becomes the row.
  row_strides_.assign(operand_count, 0);
  if (!dims.empty()) {
    row_size_ = dims.front();
    for (int64_t operand = 0; operand < operand_count; ++operand) {
      row_strides_[operand] = strides[operand].front();
    }
  }
  for (size_t index = dims.size(); index-- > 1;) {
    outer_dims_.push_back(dims[index]);
    row_count_ *= dims[index];
    for (int64_t operand = 0; operand < operand_count; ++operand) {
      outer_strides_.push_back(strides[operand][index]);
    }
  }
}

void BroadcastPlan::RowOffsets(int64_t row, int64_t* offsets) const {
  const int64_t operand_count = this->operand_count();
  for (int64_t operand = 0; operand < operand_count; ++operand) { offsets[operand] = 0; }
  for (size_t axis = outer_dims_.size(); axis-- > 0;) {
    int64_t index = row % outer_dims_[axis];
    row /= outer_dims_[axis];
    for (int64_t operand = 0; operand < operand_count; ++operand) {
      offsets[operand] += index * outer_strides_[axis * operand_count + operand];
    }
  }
}

BroadcastPlan::RowCursor::RowCursor(const BroadcastPlan& plan, int64_t row)
    : plan_(plan), row_(row), axis_index_(plan.outer_dims_.size(), 0) {
  plan.RowOffsets(row, offsets_);
  for (size_t axis = axis_index_.size(); axis-- > 0;) {
    axis_index_[axis] = row % plan.outer_dims_[axis];
    row /= plan.outer_dims_[axis];
  }
}

template <typename T>
void SumByPlan(const BroadcastPlan& plan, const T* in, T* out, int64_t out_count) {
  for (int64_t i = 0; i < out_count; ++i) { out[i] = T(0); }
  const int64_t row_size = plan.row_size();
  const bool row_summed = plan.row_stride(0) == 0;
  for (BroadcastPlan::RowCursor row(plan, 0); row.index() < plan.row_count(); row.Next()) {
    const T* __restrict__ in_row = in + row.index() * row_size;
    T* __restrict__ out_row = out + row.offset(0);
    if (row_summed) {
      T sum = T(0);
      for (int64_t i = 0; i < row_size; ++i) { sum += in_row[i]; }
      *out_row += sum;
    } else {
      for (int64_t i = 0; i < row_size; ++i) { out_row[i] += in_row[i]; }
    }
  }
}

template <typename T>
void BroadcastByPlan(const BroadcastPlan& plan, const T* in, T* out) {
  const int64_t row_size = plan.row_size();
  const bool row_repeated = plan.row_stride(0) == 0;
  for (BroadcastPlan::RowCursor row(plan, 0); row.index() < plan.row_count(); row.Next()) {
    const T* __restrict__ in_row = in + row.offset(0);
    T* __restrict__ out_row = out + row.index() * row_size;
    if (row_repeated) {
      const T value = *in_row;
      for (int64_t i = 0; i < row_size; ++i) { out_row[i] = value; }
    } else {
      for (int64_t i = 0; i < row_size; ++i) { out_row[i] = in_row[i]; }
    }
  }
}

#define OF_INSTANTIATE_PLAN_FUNCTIONS(T)                                   \
  template void SumByPlan<T>(const BroadcastPlan&, const T*, T*, int64_t); \
  template void BroadcastByPlan<T>(const BroadcastPlan&, const T*, T*);
OF_INSTANTIATE_PLAN_FUNCTIONS(float)
OF_INSTANTIATE_PLAN_FUNCTIONS(double)
OF_INSTANTIATE_PLAN_FUNCTIONS(int32_t)
OF_INSTANTIATE_PLAN_FUNCTIONS(int64_t)
#undef OF_INSTANTIATE_PLAN_FUNCTIONS

}  // namespace oneflow
