#pragma once
// Helpers for CPU kernel tests: a CPU device that runs ParallelFor chunks inline (last chunk first,
// so a kernel that depends on chunk order fails), and a runner that infers an op's outputs,
// allocates them, builds the kernel from the registry and calls Forward.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "oneflow/device/cpu_device_context.h"
#include "oneflow/framework/host_tensor.h"
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/framework/op_registry.h"
#include "tests/cpp/ops/op_test_util.h"

namespace oneflow {
namespace test {

class InlineTestDevice final : public CpuDeviceContext {
 public:
  InlineTestDevice() : CpuDeviceContext(1) {}
  void ParallelFor(int64_t count, int64_t grain,
                   const std::function<void(int64_t, int64_t)>& fn) override {
    ++parallel_for_calls;
    grain = std::max<int64_t>(grain, 1);
    std::vector<std::pair<int64_t, int64_t>> chunks;
    for (int64_t begin = 0; begin < count; begin += grain) {
      chunks.emplace_back(begin, std::min(count, begin + grain));
    }
    for (auto it = chunks.rbegin(); it != chunks.rend(); ++it) { fn(it->first, it->second); }
  }
  int64_t parallel_for_calls = 0;
};

template <typename T>
HostTensor MakeTensor(const Shape& shape, const std::vector<T>& values) {
  HostTensor tensor = HostTensor::Allocate(BlobDesc{shape, DataTypeOf<T>::value});
  EXPECT_EQ(static_cast<int64_t>(values.size()), shape.elem_count());
  std::copy(values.begin(), values.end(), static_cast<T*>(tensor.data));
  return tensor;
}

// Deterministic values in [-1, 1) (or small integers) for reference comparisons.
template <typename T>
std::vector<T> SampleValues(int64_t count, int64_t seed = 1) {
  std::vector<T> values(count);
  uint64_t state = 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(seed + 1);
  for (int64_t i = 0; i < count; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    double unit = static_cast<double>(state >> 11) / static_cast<double>(1ull << 53);
    values[i] = static_cast<T>(std::is_floating_point<T>::value ? unit * 2.0 - 1.0
                                                                : std::floor(unit * 10.0) - 5.0);
  }
  return values;
}

template <typename T>
std::vector<T> Values(const HostTensor& tensor) {
  const T* data = static_cast<const T*>(tensor.data);
  return std::vector<T>(data, data + tensor.desc.shape.elem_count());
}

// Runs one op's CPU kernel on `inputs` (keyed by argument key, e.g. "a_0"); returns its outputs
// keyed the same way. Inputs are shared with the caller, so mutable inputs can be checked.
class KernelRunner {
 public:
  KernelRunner(OperatorConf conf, std::map<std::string, HostTensor> inputs)
      : conf_(std::move(conf)), inputs_(std::move(inputs)) {
    DescMap input_descs;
    for (const auto& entry : inputs_) { input_descs[entry.first] = entry.second.desc; }
    DescMap output_descs = Infer(conf_, input_descs);
    DescMap all_descs = input_descs;
    for (const auto& entry : output_descs) {
      outputs_[entry.first] = HostTensor::Allocate(entry.second);
      all_descs[entry.first] = entry.second;
    }
    const OpDef& def = OpRegistry::Instance().Get(conf_.op_type());
    DataType data_type = KernelDataType(def, conf_, all_descs);
    KernelInitContext init_context(conf_, all_descs, ParallelContext());
    kernel_ = KernelRegistry::Instance().Get(conf_.name(), conf_.op_type(), "cpu",
                                             data_type)(init_context);
    for (auto& entry : inputs_) { context_.AddBlob(entry.first, entry.second.AsBlob(), true); }
    for (auto& entry : outputs_) { context_.AddBlob(entry.first, entry.second.AsBlob(), false); }
    context_.set_device(&device_);
  }

  // One iteration; each run is the next piece (random kernels draw new numbers).
  void Run() {
    context_.set_piece_id(runs_++);
    kernel_->Forward(context_);
  }
  const HostTensor& output(const std::string& key) const { return outputs_.at(key); }
  const HostTensor& input(const std::string& key) const { return inputs_.at(key); }
  InlineTestDevice& device() { return device_; }

 private:
  OperatorConf conf_;
  std::map<std::string, HostTensor> inputs_;
  std::map<std::string, HostTensor> outputs_;
  std::unique_ptr<Kernel> kernel_;
  KernelContext context_;
  InlineTestDevice device_;
  int64_t runs_ = 0;
};

template <typename T>
void ExpectNear(const std::vector<T>& actual, const std::vector<T>& expected, double tolerance) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    EXPECT_NEAR(static_cast<double>(actual[i]), static_cast<double>(expected[i]), tolerance)
        << "at element " << i;
  }
}

}  // namespace test
}  // namespace oneflow
