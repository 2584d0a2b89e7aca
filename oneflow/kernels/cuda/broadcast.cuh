#pragma once
// The broadcast variant of the elementwise launcher, for binary ops whose two
// inputs broadcast to the output (numpy rules, shapes right-aligned). Planned
// once on the host, in a kernel's constructor: size-1 output axes are dropped
// and neighbouring axes merged where both inputs keep the same broadcast
// pattern, leaving at most kMaxBroadcastDims axes; each input then has a stride
// per merged axis (0 where it is broadcast). On the device each output
// element's input offsets come from its coordinates. Same-shape inputs use the
// plain (vectorized) launcher.

#include <cstdint>
#include <vector>

#include "oneflow/common/error.h"
#include "oneflow/common/shape.h"
#include "oneflow/kernels/cuda/elementwise.cuh"

namespace oneflow {
namespace cuda {

constexpr int kMaxBroadcastDims = 8;

// Passed to the device by value.
struct BroadcastIndex {
  int num_dims = 0;
  int64_t out_dims[kMaxBroadcastDims];
  int64_t x_strides[kMaxBroadcastDims];
  int64_t y_strides[kMaxBroadcastDims];
};

class BroadcastBinaryPlan {
 public:
  BroadcastBinaryPlan() = default;
  BroadcastBinaryPlan(const Shape& out, const Shape& x, const Shape& y) {
    out_count_ = out.elem_count();
    same_shape_ = x.elem_count() == out_count_ && y.elem_count() == out_count_;
    const int64_t rank = out.num_axes();
    // Per output axis: its size and whether x / y is broadcast along it.
    struct Axis {
      int64_t size;
      bool x_broadcast, y_broadcast;
    };
    std::vector<Axis> axes;
    for (int64_t axis = 0; axis < rank; ++axis) {
      const int64_t size = out.At(axis);
      if (size == 1) { continue; }
      const int64_t x_axis = axis - (rank - x.num_axes());
      const int64_t y_axis = axis - (rank - y.num_axes());
      const bool x_broadcast = x_axis < 0 || x.At(x_axis) == 1;
      const bool y_broadcast = y_axis < 0 || y.At(y_axis) == 1;
      if (!axes.empty() && axes.back().x_broadcast == x_broadcast &&
          axes.back().y_broadcast == y_broadcast) {
        axes.back().size *= size;
      } else {
        axes.push_back({size, x_broadcast, y_broadcast});
      }
    }
    OF_CHECK(static_cast<int64_t>(axes.size()) <= kMaxBroadcastDims)
        << "GPU broadcast of " << x.ToString() << " and " << y.ToString() << " to "
        << out.ToString() << " needs " << axes.size() << " axes after merging, more than "
        << kMaxBroadcastDims;
    index_.num_dims = static_cast<int>(axes.size());
    int64_t x_stride = 1, y_stride = 1;
    for (int64_t d = static_cast<int64_t>(axes.size()) - 1; d >= 0; --d) {
      index_.out_dims[d] = axes[d].size;
      index_.x_strides[d] = axes[d].x_broadcast ? 0 : x_stride;
      index_.y_strides[d] = axes[d].y_broadcast ? 0 : y_stride;
      if (!axes[d].x_broadcast) { x_stride *= axes[d].size; }
      if (!axes[d].y_broadcast) { y_stride *= axes[d].size; }
    }
  }

  int64_t out_count() const { return out_count_; }
  bool same_shape() const { return same_shape_; }
  const BroadcastIndex& index() const { return index_; }

 private:
  int64_t out_count_ = 0;
  bool same_shape_ = true;
  BroadcastIndex index_;
};

template <typename Compute, typename Functor, typename Out, typename In>
__global__ void BroadcastBinaryKernel(int64_t n, BroadcastIndex index, Functor functor, Out* z,
                                      const In* x, const In* y) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    int64_t remaining = i;
    int64_t x_offset = 0, y_offset = 0;
    for (int d = index.num_dims - 1; d > 0; --d) {
      const int64_t coordinate = remaining % index.out_dims[d];
      remaining /= index.out_dims[d];
      x_offset += coordinate * index.x_strides[d];
      y_offset += coordinate * index.y_strides[d];
    }
    if (index.num_dims > 0) {
      x_offset += remaining * index.x_strides[0];
      y_offset += remaining * index.y_strides[0];
    }
    z[i] = Convert<Out>(functor(Convert<Compute>(x[x_offset]), Convert<Compute>(y[y_offset])));
  }
}

// z = functor(x, y) with broadcasting as planned.
template <typename Compute, typename Functor, typename Out, typename In>
void LaunchBroadcastBinary(cudaStream_t stream, const BroadcastBinaryPlan& plan, Functor functor,
                           Out* z, const In* x, const In* y) {
  const int64_t n = plan.out_count();
  if (n <= 0) { return; }
  if (plan.same_shape()) {
    LaunchElementwise<Compute>(stream, n, functor, z, x, y);
    return;
  }
  BroadcastBinaryKernel<Compute>
      <<<BlockCount(n), kBlockSize, 0, stream>>>(n, plan.index(), functor, z, x, y);
  OF_CUDA_CHECK(cudaGetLastError());
}

}  // namespace cuda
}  // namespace oneflow
