#pragma once
// The geometry of sliding-window ops (convolution, pooling): where the spatial axes are, the
// window, strides, dilations, the padding on each side and the output size. Computed from the
// op's attributes once, by the op's shape inference (which throws on bad attributes) and again
// by its kernels (on physical shapes, which differ only in the batch or channel dims).
//
// Padding modes (the op attribute "padding"):
//   "valid"       no padding; out = floor((in - window_eff) / stride) + 1.
//   "same_upper"  TensorFlow's "SAME": out = ceil(in / stride); the padding needed to reach it
//                 is split evenly, the odd element going at the end (after).
//   "same_lower"  the same total, the odd element at the start (OneFlow's SAME_LOWER).
//   "customized"  padding_before / padding_after as given.
// window_eff = (window - 1) * dilation + 1. With ceil_mode (pooling only) the output rounds up
// as PyTorch's does; the windows that then reach past the padding get a larger padding_after.

#include <cstdint>
#include <string>
#include <vector>

#include "oneflow/common/shape.h"
#include "proto/op_conf.pb.h"

namespace oneflow {

struct WindowGeometry {
  int64_t spatial_axes = 0;
  bool channels_first = true;
  int64_t batch = 0;
  int64_t channels = 0;
  std::vector<int64_t> input;    // spatial sizes of the input
  std::vector<int64_t> window;   // kernel / pool size
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> padding_before;
  std::vector<int64_t> padding_after;  // as the kernels must use it (ceil_mode included)
  std::vector<int64_t> output;   // spatial sizes of the output

  // Axis of the channels in the activation (1 or the last).
  int64_t ChannelAxis() const { return channels_first ? 1 : spatial_axes + 1; }
  // The activation shape (N, C, spatial...) or (N, spatial..., C) with `channels` and `spatial`.
  Shape ActivationShape(int64_t batch_size, int64_t channel_count,
                        const std::vector<int64_t>& spatial) const;
  int64_t EffectiveWindow(int64_t axis) const { return (window[axis] - 1) * dilations[axis] + 1; }
  // The same geometry with unit spatial axes (size, window, stride and dilation 1, no padding)
  // prepended up to 3, so that 1-D and 2-D windows run through 3-D loops.
  WindowGeometry WidenedTo3D() const;
};

struct WindowAttributes {
  std::string data_format;  // "channels_first" or "channels_last"
  std::vector<int64_t> window;
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;  // empty: all 1
  std::string padding;             // "valid", "same_upper", "same_lower", "customized"
  std::vector<int64_t> padding_before;
  std::vector<int64_t> padding_after;
  bool ceil_mode = false;
  // Pooling: every padding must be smaller than the window, so no window lies in padding only.
  bool padding_smaller_than_window = false;
};

// Validates `attributes` against `input_shape` (rank spatial_axes + 2) and computes the
// geometry. Throws ValueError prefixed "<op_type>: " naming the attribute, the shapes and the
// rule broken (rank, data_format, non-positive sizes, padding mode, window larger than the
// padded input).
WindowGeometry ComputeWindowGeometry(const std::string& op_type, const Shape& input_shape,
                                     int64_t spatial_axes, const WindowAttributes& attributes);

// The window attributes of a convolution op (conv1d/2d/3d and its gradient ops): data_format,
// kernel_size, strides, dilation_rate, padding, padding_before, padding_after.
WindowAttributes ConvWindowAttributes(const OperatorConf& conf);
// The window attributes of a pooling op: data_format, pool_size, strides, padding,
// padding_before, padding_after, ceil_mode.
WindowAttributes PoolWindowAttributes(const OperatorConf& conf);

// "[1, 2, 3]" for error messages.
std::string ListToString(const std::vector<int64_t>& values);

}  // namespace oneflow
