#include "oneflow/framework/shape_functions.h"

#include <algorithm>

#include "oneflow/common/data_type.h"
#include "oneflow/common/error.h"
#include "oneflow/framework/op_registry.h"

namespace oneflow {

void InferSameAsInput(InferContext& ctx, const std::string& input, const std::string& output) {
  ctx.Output(output) = ctx.Input(input);
}

void InferElementwiseUnary(InferContext& ctx, const std::string& op_type, const std::string& input,
                           const std::string& output, const std::vector<DataType>& allowed) {
  const BlobDesc& desc = ctx.Input(input);
  CheckDataTypeIn(op_type, input, desc.data_type, allowed);
  ctx.Output(output) = desc;
}

void InferActivationGrad(InferContext& ctx, const std::string& op_type,
                         const std::string& forward) {
  const BlobDesc& y = ctx.Input(forward);
  const BlobDesc& dy = ctx.Input("dy");
  CheckFloatingOrHalfDataType(op_type, forward, y.data_type);
  CheckSameDataType(op_type, forward, y.data_type, "dy", dy.data_type);
  if (y.shape != dy.shape) {
    throw Error(ErrorKind::kValue) << op_type << ": " << forward << " " << y.shape.ToString()
                                   << " and dy " << dy.shape.ToString()
                                   << " must have the same shape";
  }
  ctx.Output("dx") = y;
}

Shape BroadcastShapes(const std::string& op_type, const Shape& x, const Shape& y) {
  int64_t num_axes = std::max(x.num_axes(), y.num_axes());
  Shape x_extended = ExtendShapeTo(x, num_axes);
  Shape y_extended = ExtendShapeTo(y, num_axes);
  std::vector<int64_t> dims(num_axes);
  for (int64_t axis = 0; axis < num_axes; ++axis) {
    int64_t x_dim = x_extended.At(axis);
    int64_t y_dim = y_extended.At(axis);
    if (x_dim != y_dim && x_dim != 1 && y_dim != 1) {
      throw Error(ErrorKind::kValue)
          << op_type << ": shapes " << x.ToString() << " and " << y.ToString()
          << " cannot be broadcast together: dimension " << x_dim << " != " << y_dim << " at axis "
          << axis - num_axes << " (counting from the right) and neither is 1";
    }
    dims[axis] = x_dim == 1 ? y_dim : x_dim;
  }
  return Shape(dims);
}

Shape ExtendShapeTo(const Shape& shape, int64_t num_axes) {
  std::vector<int64_t> dims(num_axes - shape.num_axes(), 1);
  dims.insert(dims.end(), shape.dims().begin(), shape.dims().end());
  return Shape(dims);
}

std::vector<int64_t> BroadcastReducedAxes(const std::string& op_type, const Shape& small,
                                          const Shape& large) {
  bool broadcastable = small.num_axes() <= large.num_axes();
  std::vector<int64_t> axes;
  if (broadcastable) {
    Shape extended = ExtendShapeTo(small, large.num_axes());
    int64_t prepended = large.num_axes() - small.num_axes();
    for (int64_t axis = 0; axis < large.num_axes(); ++axis) {
      if (extended.At(axis) == large.At(axis) && axis >= prepended) { continue; }
      if (extended.At(axis) != 1) {
        broadcastable = false;
        break;
      }
      axes.push_back(axis);
    }
  }
  if (!broadcastable) {
    throw Error(ErrorKind::kValue) << op_type << ": shape " << small.ToString()
                                   << " does not broadcast to shape " << large.ToString();
  }
  return axes;
}

int64_t NormalizeAxis(const std::string& op_type, const std::string& what, int64_t axis,
                      int64_t num_axes) {
  if (axis < -num_axes || axis >= num_axes) {
    throw Error(ErrorKind::kValue)
        << op_type << ": " << what << " " << axis << " is out of range for a tensor of rank "
        << num_axes << " (expected in [" << -num_axes << ", " << num_axes << "))";
  }
  return axis < 0 ? axis + num_axes : axis;
}

std::vector<int64_t> NormalizeReduceAxes(const std::string& op_type,
                                         const std::vector<int64_t>& axes, int64_t num_axes) {
  std::vector<int64_t> normalized;
  if (axes.empty()) {
    for (int64_t axis = 0; axis < num_axes; ++axis) { normalized.push_back(axis); }
    return normalized;
  }
  for (int64_t axis : axes) {
    normalized.push_back(NormalizeAxis(op_type, "axis", axis, num_axes));
  }
  std::sort(normalized.begin(), normalized.end());
  normalized.erase(std::unique(normalized.begin(), normalized.end()), normalized.end());
  return normalized;
}

Shape ReduceShape(const Shape& shape, const std::vector<int64_t>& axes, bool keepdims) {
  std::vector<int64_t> dims;
  for (int64_t axis = 0; axis < shape.num_axes(); ++axis) {
    bool reduced = std::binary_search(axes.begin(), axes.end(), axis);
    if (!reduced) {
      dims.push_back(shape.At(axis));
    } else if (keepdims) {
      dims.push_back(1);
    }
  }
  // As OneFlow 0.3 (Shape::RemoveOnes): reducing every axis of a blob gives shape (1,), not a
  // 0-d blob.
  if (dims.empty() && shape.num_axes() > 0) { dims.push_back(1); }
  return Shape(dims);
}

Shape BroadcastLikeInputShape(const std::string& op_type, const Shape& x, const Shape& like,
                              const std::vector<int64_t>& broadcast_axes) {
  if (!broadcast_axes.empty() && x == ReduceShape(like, broadcast_axes, false)) {
    return ReduceShape(like, broadcast_axes, true);
  }
  bool valid = x.num_axes() <= like.num_axes();
  Shape extended = valid ? ExtendShapeTo(x, like.num_axes()) : x;
  for (int64_t axis = 0; valid && axis < like.num_axes(); ++axis) {
    if (extended.At(axis) == like.At(axis)) { continue; }
    bool listed = broadcast_axes.empty() ||
                  std::binary_search(broadcast_axes.begin(), broadcast_axes.end(), axis);
    valid = extended.At(axis) == 1 && listed;
  }
  if (!valid) {
    throw Error(ErrorKind::kValue)
        << op_type << ": x " << x.ToString() << " cannot be broadcast to like " << like.ToString()
        << " along broadcast_axes " << AxesToString(broadcast_axes)
        << ": x must be like's shape with those axes removed or 1";
  }
  return extended;
}

std::vector<int64_t> ReduceSumLikeAxes(const std::string& op_type, const Shape& x,
                                       const Shape& like, const std::vector<int64_t>& axes) {
  if (axes.empty()) { return BroadcastReducedAxes(op_type, like, x); }
  std::vector<int64_t> normalized = NormalizeReduceAxes(op_type, axes, x.num_axes());
  Shape kept = ReduceShape(x, normalized, true);
  bool valid = like == ReduceShape(x, normalized, false) ||
               (like.num_axes() <= x.num_axes() && ExtendShapeTo(like, x.num_axes()) == kept);
  if (!valid) {
    throw Error(ErrorKind::kValue)
        << op_type << ": summing x " << x.ToString() << " over axes " << AxesToString(normalized)
        << " gives " << kept.ToString() << ", which does not match like " << like.ToString();
  }
  return normalized;
}

void CheckSameDataType(const std::string& op_type, const std::string& first_name, DataType first,
                       const std::string& second_name, DataType second) {
  if (first != second) {
    throw Error(ErrorKind::kType) << op_type << ": " << first_name << " and " << second_name
                                  << " must have the same dtype, got " << DataTypeName(first)
                                  << " and " << DataTypeName(second);
  }
}

void CheckFloatingDataType(const std::string& op_type, const std::string& argument,
                           DataType data_type) {
  CheckDataTypeIn(op_type, argument, data_type, {kFloat, kDouble});
}

void CheckFloatingOrHalfDataType(const std::string& op_type, const std::string& argument,
                                 DataType data_type) {
  CheckDataTypeIn(op_type, argument, data_type, {kFloat, kDouble, kFloat16});
}

void CheckDataTypeIn(const std::string& op_type, const std::string& argument, DataType data_type,
                     const std::vector<DataType>& allowed) {
  if (std::find(allowed.begin(), allowed.end(), data_type) != allowed.end()) { return; }
  Error error(ErrorKind::kType);
  error << op_type << ": " << argument << " has dtype " << DataTypeName(data_type)
        << ", expected one of ";
  for (size_t i = 0; i < allowed.size(); ++i) {
    error << (i == 0 ? "" : ", ") << DataTypeName(allowed[i]);
  }
  throw error;
}

std::vector<int64_t> Int64ListAttr(const OperatorConf& conf, const std::string& name) {
  auto it = conf.attr().find(name);
  OF_CHECK(it != conf.attr().end())
      << "op '" << conf.name() << "' has no attribute '" << name << "'";
  if (it->second.value_case() == AttrValue::VALUE_NOT_SET) { return {}; }
  return FromAttrValue<std::vector<int64_t>>(it->second);
}

std::string AxesToString(const std::vector<int64_t>& axes) {
  std::string text = "[";
  for (size_t i = 0; i < axes.size(); ++i) {
    text += (i == 0 ? "" : ", ") + std::to_string(axes[i]);
  }
  return text + "]";
}

}  // namespace oneflow
