#include "oneflow/framework/window_geometry.h"

#include <algorithm>
#include <sstream>

#include "oneflow/common/error.h"
#include "oneflow/framework/attr.h"
#include "oneflow/framework/shape_functions.h"

namespace oneflow {

std::string ListToString(const std::vector<int64_t>& values) {
  std::ostringstream out;
  out << "[";
  for (size_t i = 0; i < values.size(); ++i) { out << (i ? ", " : "") << values[i]; }
  out << "]";
  return out.str();
}

WindowGeometry WindowGeometry::WidenedTo3D() const {
  WindowGeometry wide = *this;
  const int64_t lead = 3 - spatial_axes;
  auto widen = [lead](std::vector<int64_t>& values, int64_t unit) {
    values.insert(values.begin(), lead, unit);
  };
  widen(wide.input, 1);
  widen(wide.window, 1);
  widen(wide.strides, 1);
  widen(wide.dilations, 1);
  widen(wide.padding_before, 0);
  widen(wide.padding_after, 0);
  widen(wide.output, 1);
  wide.spatial_axes = 3;
  return wide;
}

Shape WindowGeometry::ActivationShape(int64_t batch_size, int64_t channel_count,
                                      const std::vector<int64_t>& spatial) const {
  std::vector<int64_t> dims{batch_size};
  if (channels_first) { dims.push_back(channel_count); }
  dims.insert(dims.end(), spatial.begin(), spatial.end());
  if (!channels_first) { dims.push_back(channel_count); }
  return Shape(dims);
}

namespace {

void CheckListLength(const std::string& op_type, const std::string& name,
                     const std::vector<int64_t>& values, int64_t spatial_axes) {
  if (static_cast<int64_t>(values.size()) != spatial_axes) {
    throw Error(ErrorKind::kValue) << op_type << ": " << name << " must have " << spatial_axes
                                   << " value(s), one per spatial axis, got "
                                   << ListToString(values);
  }
}

// The kernels (oneDNN's among them) take window sizes, strides, dilations and paddings as 32-bit
// ints.
constexpr int64_t kLargestWindowValue = (int64_t{1} << 31) - 1;

void CheckPositive(const std::string& op_type, const std::string& name,
                   const std::vector<int64_t>& values) {
  for (int64_t value : values) {
    if (value <= 0 || value > kLargestWindowValue) {
      throw Error(ErrorKind::kValue) << op_type << ": " << name << " must be positive and below "
                                     << "2^31, got " << ListToString(values);
    }
  }
}

}  // namespace

WindowAttributes ConvWindowAttributes(const OperatorConf& conf) {
  WindowAttributes attributes;
  attributes.data_format = FromAttrValue<std::string>(conf.attr().at("data_format"));
  attributes.window = Int64ListAttr(conf, "kernel_size");
  attributes.strides = Int64ListAttr(conf, "strides");
  attributes.dilations = Int64ListAttr(conf, "dilation_rate");
  attributes.padding = FromAttrValue<std::string>(conf.attr().at("padding"));
  attributes.padding_before = Int64ListAttr(conf, "padding_before");
  attributes.padding_after = Int64ListAttr(conf, "padding_after");
  return attributes;
}

WindowAttributes PoolWindowAttributes(const OperatorConf& conf) {
  WindowAttributes attributes;
  attributes.data_format = FromAttrValue<std::string>(conf.attr().at("data_format"));
  attributes.window = Int64ListAttr(conf, "pool_size");
  attributes.strides = Int64ListAttr(conf, "strides");
  attributes.padding = FromAttrValue<std::string>(conf.attr().at("padding"));
  attributes.padding_before = Int64ListAttr(conf, "padding_before");
  attributes.padding_after = Int64ListAttr(conf, "padding_after");
  attributes.ceil_mode = FromAttrValue<bool>(conf.attr().at("ceil_mode"));
  attributes.padding_smaller_than_window = true;
  return attributes;
}

WindowGeometry ComputeWindowGeometry(const std::string& op_type, const Shape& input_shape,
                                     int64_t spatial_axes, const WindowAttributes& attributes) {
  if (input_shape.num_axes() != spatial_axes + 2) {
    throw Error(ErrorKind::kValue)
        << op_type << ": input must have rank " << spatial_axes + 2 << " (batch, channels and "
        << spatial_axes << " spatial axes), got shape " << input_shape.ToString() << " of rank "
        << input_shape.num_axes();
  }
  WindowGeometry geometry;
  geometry.spatial_axes = spatial_axes;
  if (attributes.data_format == "channels_first") {
    geometry.channels_first = true;
  } else if (attributes.data_format == "channels_last") {
    geometry.channels_first = false;
  } else {
    throw Error(ErrorKind::kValue) << op_type
                                   << ": data_format must be channels_first or channels_last, "
                                   << "got '" << attributes.data_format << "'";
  }
  const int64_t first_spatial = geometry.channels_first ? 2 : 1;
  geometry.batch = input_shape.At(0);
  geometry.channels = input_shape.At(geometry.ChannelAxis());
  for (int64_t axis = 0; axis < spatial_axes; ++axis) {
    geometry.input.push_back(input_shape.At(first_spatial + axis));
  }
  geometry.window = attributes.window;
  geometry.strides = attributes.strides;
  geometry.dilations = attributes.dilations.empty() ? std::vector<int64_t>(spatial_axes, 1)
                                                    : attributes.dilations;
  CheckListLength(op_type, "kernel size", geometry.window, spatial_axes);
  CheckListLength(op_type, "strides", geometry.strides, spatial_axes);
  CheckListLength(op_type, "dilations", geometry.dilations, spatial_axes);
  CheckPositive(op_type, "kernel size", geometry.window);
  CheckPositive(op_type, "strides", geometry.strides);
  CheckPositive(op_type, "dilations", geometry.dilations);

  const std::string& padding = attributes.padding;
  if (padding == "customized") {
    CheckListLength(op_type, "padding_before", attributes.padding_before, spatial_axes);
    CheckListLength(op_type, "padding_after", attributes.padding_after, spatial_axes);
    for (const auto* list : {&attributes.padding_before, &attributes.padding_after}) {
      for (int64_t value : *list) {
        if (value < 0 || value > kLargestWindowValue) {
          throw Error(ErrorKind::kValue)
              << op_type << ": explicit padding must be non-negative and below 2^31, got before "
              << ListToString(attributes.padding_before) << " and after "
              << ListToString(attributes.padding_after);
        }
      }
    }
  } else if (padding != "valid" && padding != "same_upper" && padding != "same_lower") {
    throw Error(ErrorKind::kValue)
        << op_type << ": padding must be 'valid', 'same_upper', 'same_lower' or 'customized', got '"
        << padding << "'";
  }
  for (int64_t axis = 0; axis < spatial_axes; ++axis) {
    const int64_t in = geometry.input[axis];
    const int64_t stride = geometry.strides[axis];
    const int64_t window = geometry.EffectiveWindow(axis);
    int64_t before = 0;
    int64_t after = 0;
    if (padding == "customized") {
      before = attributes.padding_before[axis];
      after = attributes.padding_after[axis];
    } else if (padding != "valid") {
      const int64_t out = (in + stride - 1) / stride;
      const int64_t needed = std::max<int64_t>(0, (out - 1) * stride + window - in);
      const int64_t small = needed / 2;
      before = padding == "same_upper" ? small : needed - small;
      after = needed - before;
    }
    if (in + before + after < window) {
      throw Error(ErrorKind::kValue)
          << op_type << ": the window is larger than the padded input on spatial axis " << axis
          << ": input " << input_shape.ToString() << " has size " << in << " there, padded to "
          << in + before + after << " (padding " << before << " + " << after
          << "), but the window spans " << window << " (size " << geometry.window[axis]
          << ", dilation " << geometry.dilations[axis] << ")";
    }
    if (attributes.padding_smaller_than_window && (before >= window || after >= window)) {
      throw Error(ErrorKind::kValue)
          << op_type << ": padding must be smaller than the window on each side, got padding "
          << before << " + " << after << " with window " << window << " on spatial axis "
          << axis;
    }
    const int64_t span = in + before + after - window;
    int64_t out = span / stride + 1;
    if (attributes.ceil_mode) {
      out = (span + stride - 1) / stride + 1;
      // As PyTorch: the last window must start inside the input or the leading padding.
      if ((out - 1) * stride >= in + before) { --out; }
      after = std::max(after, (out - 1) * stride + window - in - before);
    }
    geometry.padding_before.push_back(before);
    geometry.padding_after.push_back(after);
    geometry.output.push_back(out);
  }
  return geometry;
}

}  // namespace oneflow
