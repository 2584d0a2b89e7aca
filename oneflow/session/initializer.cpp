#include "oneflow/session/initializer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <type_traits>

#include "oneflow/common/error.h"
#include "oneflow/framework/attr.h"

namespace oneflow {

namespace {

// Fans of a weight in OneFlow's layout: dim 0 is the output, the rest is the input (times the
// receptive field for convolutions, whose channels come first or last).
void ComputeFans(const Shape& shape, bool channels_last, double* fan_in, double* fan_out) {
  const int64_t axes = shape.num_axes();
  if (axes < 2) {
    *fan_in = *fan_out = static_cast<double>(shape.elem_count());
    return;
  }
  // OneFlow 0.3's GenInitialFan: fan_in counts every axis but the first; fan_out is the first
  // axis times the kernel axes, which follow it (channels first) or precede the last one.
  *fan_in = static_cast<double>(shape.Count(1, axes));
  const int64_t kernel = channels_last ? shape.Count(1, axes - 1) : shape.Count(2, axes);
  *fan_out = static_cast<double>(shape.At(0)) * static_cast<double>(kernel);
}

// `value` as a T; an integer saturates at its dtype's limits (a normal sample far out, say) and
// NaN becomes 0, where a plain conversion would be undefined.
template <typename T>
T Converted(double value) {
  if constexpr (std::is_integral_v<T>) {
    constexpr double kLow = static_cast<double>(std::numeric_limits<T>::lowest());
    constexpr double kHigh = static_cast<double>(std::numeric_limits<T>::max());
    if (value != value) { return T(0); }
    if (value <= kLow) { return std::numeric_limits<T>::lowest(); }
    if (value >= kHigh) { return std::numeric_limits<T>::max(); }
  }
  return static_cast<T>(value);
}

template <typename T>
void Fill(const std::string& kind, const std::vector<double>& args, int64_t seed,
          const Shape& shape, T* data) {
  const int64_t count = shape.elem_count();
  std::mt19937_64 engine(static_cast<uint64_t>(seed));
  auto arg = [&](size_t index, double fallback) {
    return index < args.size() ? args[index] : fallback;
  };
  // Reversed bounds sample between them, as OneFlow's min + u * (max - min) does. Integer
  // variables take whole numbers from the bounds truncated to integers, both included, each
  // equally likely (OneFlow 0.3's RngIntUniform: [min, max]).
  auto uniform = [&](double low, double high) {
    if constexpr (std::is_integral_v<T>) {
      std::uniform_int_distribution<int64_t> distribution(
          static_cast<int64_t>(Converted<T>(std::min(low, high))),
          static_cast<int64_t>(Converted<T>(std::max(low, high))));
      for (int64_t i = 0; i < count; ++i) { data[i] = static_cast<T>(distribution(engine)); }
    } else {
      std::uniform_real_distribution<double> distribution(std::min(low, high),
                                                          std::max(low, high));
      for (int64_t i = 0; i < count; ++i) { data[i] = Converted<T>(distribution(engine)); }
    }
  };
  auto normal = [&](double mean, double stddev, bool truncated) {
    std::normal_distribution<double> distribution(0.0, 1.0);
    for (int64_t i = 0; i < count; ++i) {
      double value = distribution(engine);
      while (truncated && std::fabs(value) > 2.0) { value = distribution(engine); }
      data[i] = Converted<T>(mean + stddev * value);
    }
  };
  if (kind == "constant") {
    const T value = Converted<T>(arg(0, 0.0));
    for (int64_t i = 0; i < count; ++i) { data[i] = value; }
  } else if (kind == "random_uniform") {
    uniform(arg(0, 0.0), arg(1, 1.0));
  } else if (kind == "random_normal") {
    normal(arg(0, 0.0), arg(1, 1.0), false);
  } else if (kind == "truncated_normal") {
    normal(arg(0, 0.0), arg(1, 1.0), true);
  } else if (kind == "variance_scaling") {
    double fan_in = 0, fan_out = 0;
    ComputeFans(shape, arg(3, 0.0) != 0.0, &fan_in, &fan_out);
    const int mode = static_cast<int>(arg(1, 0));
    const double fan = mode == 0 ? fan_in : mode == 1 ? fan_out : (fan_in + fan_out) / 2.0;
    const double variance = arg(0, 1.0) / std::max(1.0, fan);
    const int distribution = static_cast<int>(arg(2, 0));
    if (distribution == 2) {
      const double limit = std::sqrt(3.0 * variance);
      uniform(-limit, limit);
    } else if (distribution == 1) {
      normal(0.0, std::sqrt(variance), false);
    } else {
      // Truncated at 2 stddev; 0.8796 is the stddev of a standard normal truncated there.
      normal(0.0, std::sqrt(variance) / 0.87962566103423978, true);
    }
  } else {
    throw Error(ErrorKind::kValue) << "unknown initializer '" << kind << "'";
  }
}

}  // namespace

void InitializeVariable(const OperatorConf& variable_op, HostTensor& tensor) {
  const auto& attrs = variable_op.attr();
  const std::string kind = FromAttrValue<std::string>(attrs.at("initializer"));
  const auto args = FromAttrValue<std::vector<double>>(attrs.at("initializer_args"));
  const int64_t seed = FromAttrValue<int64_t>(attrs.at("seed"));
  SwitchDataType(tensor.desc.data_type, [&]<typename T>() {
    Fill<T>(kind, args, seed, tensor.desc.shape, static_cast<T*>(tensor.data));
    return 0;
  });
}

}  // namespace oneflow
