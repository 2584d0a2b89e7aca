#pragma once
// Helpers for GPU kernel tests (CUDA builds only): each test runs an op's CPU
// kernel and its GPU kernel on the same inputs and compares every output and
// every (possibly updated) input. Float16 kernels are compared with the float32
// CPU kernel on inputs rounded to float16. Every test skips without a GPU.

#ifdef ONEFLOW_WITH_CUDA

#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <set>
#include <tuple>

#include "oneflow/device/cuda_check.h"
#include "oneflow/device/cuda_device_context.h"
#include "oneflow/device/cuda_info.h"
#include "tests/cpp/kernels/kernel_test_util.h"

namespace oneflow {
namespace test {

#define SKIP_WITHOUT_GPU() \
  if (GetCudaInfo().device_count == 0) { GTEST_SKIP() << "no GPU: " << GetCudaInfo().reason; }

// One GPU device context for the whole test binary, bound to the gtest thread
// on first use.
inline CudaDeviceContext& TestGpu() {
  static CudaDeviceContext* device = [] {
    auto* context = new CudaDeviceContext(0, [](std::exception_ptr) {});
    context->BindCurrentThread();
    return context;
  }();
  return *device;
}

// Device memory freed with the owner.
struct DeviceBuffer {
  explicit DeviceBuffer(int64_t bytes) {
    OF_CUDA_CHECK(cudaMalloc(&data, std::max<int64_t>(bytes, 1)));
  }
  ~DeviceBuffer() { cudaFree(data); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* data = nullptr;
};

inline HostTensor Clone(const HostTensor& tensor) {
  HostTensor copy = HostTensor::Allocate(tensor.desc);
  std::memcpy(copy.data, tensor.data, tensor.desc.byte_size());
  return copy;
}

inline double ValueAt(const HostTensor& tensor, int64_t i) {
  switch (tensor.desc.data_type) {
    case kFloat:
      return static_cast<const float*>(tensor.data)[i];
    case kDouble:
      return static_cast<const double*>(tensor.data)[i];
    case kInt8:
      return static_cast<const int8_t*>(tensor.data)[i];
    case kUInt8:
      return static_cast<const uint8_t*>(tensor.data)[i];
    case kInt32:
      return static_cast<const int32_t*>(tensor.data)[i];
    case kInt64:
      return static_cast<const int64_t*>(tensor.data)[i];
    case kFloat16:
      return __half2float(static_cast<const half*>(tensor.data)[i]);
    default:
      ADD_FAILURE() << "unexpected dtype";
      return 0.0;
  }
}

// Runs the op's GPU kernel of `data_type`; `descs` holds every blob (inputs and
// outputs). Returns all blobs after the run (outputs and inputs, which mutable
// inputs may have changed).
inline std::map<std::string, HostTensor> RunOnGpu(const OperatorConf& conf, const DescMap& descs,
                                           const std::map<std::string, HostTensor>& inputs,
                                           DataType data_type) {
  CudaDeviceContext& gpu = TestGpu();
  KernelInitContext init_context(conf, descs, ParallelContext());
  std::unique_ptr<Kernel> kernel =
      KernelRegistry::Instance().Get(conf.name(), conf.op_type(), "gpu", data_type)(init_context);
  std::map<std::string, std::unique_ptr<DeviceBuffer>> buffers;
  KernelContext context;
  for (const auto& entry : descs) {
    const int64_t bytes = entry.second.byte_size();
    auto& buffer = buffers[entry.first] = std::make_unique<DeviceBuffer>(bytes);
    const bool is_input = inputs.count(entry.first) > 0;
    if (is_input) {
      OF_CUDA_CHECK(
          cudaMemcpy(buffer->data, inputs.at(entry.first).data, bytes, cudaMemcpyHostToDevice));
    } else {
      OF_CUDA_CHECK(cudaMemset(buffer->data, 0x7f,
                               bytes));  // garbage the kernel must overwrite
    }
    context.AddBlob(entry.first, Blob(buffer->data, entry.second), is_input);
  }
  context.set_device(&gpu);
  // cudaMemcpy from pageable memory may return before its DMA ends, and cudaMemset is ordered on
  // the legacy stream only: finish both before the kernel's stream runs.
  OF_CUDA_CHECK(cudaDeviceSynchronize());
  kernel->Forward(context);
  OF_CUDA_CHECK(cudaStreamSynchronize(gpu.cuda_stream()));
  std::map<std::string, HostTensor> results;
  for (const auto& entry : descs) {
    HostTensor tensor = HostTensor::Allocate(entry.second);
    OF_CUDA_CHECK(cudaMemcpy(tensor.data, buffers.at(entry.first)->data, entry.second.byte_size(),
                             cudaMemcpyDeviceToHost));
    results[entry.first] = tensor;
  }
  return results;
}

inline void ExpectClose(const HostTensor& actual, const HostTensor& expected, double atol, double rtol,
                 const std::string& key) {
  SCOPED_TRACE("blob " + key);
  ASSERT_EQ(actual.desc.shape, expected.desc.shape);
  int64_t failures = 0;
  for (int64_t i = 0; i < expected.desc.shape.elem_count() && failures < 10; ++i) {
    const double a = ValueAt(actual, i), e = ValueAt(expected, i);
    if (a == e || (std::isnan(e) && std::isnan(a))) { continue; }  // equal infinities too
    if (!(std::abs(a - e) <= atol + rtol * std::abs(e))) {
      ADD_FAILURE() << "element " << i << ": gpu " << a << ", cpu " << e;
      ++failures;
    }
  }
}

struct Tolerance {
  double atol = 1e-6, rtol = 1e-5;
};

// Every blob (outputs and inputs, which mutable inputs may have changed) after running `conf`
// on the CPU and on the GPU with the same inputs.
struct CpuAndGpuResults {
  std::map<std::string, HostTensor> cpu, gpu;
};
inline CpuAndGpuResults RunOnCpuAndGpu(const OperatorConf& conf,
                                       const std::map<std::string, HostTensor>& inputs) {
  std::map<std::string, HostTensor> cpu_inputs, gpu_inputs;
  DescMap input_descs;
  for (const auto& entry : inputs) {
    cpu_inputs[entry.first] = Clone(entry.second);
    gpu_inputs[entry.first] = Clone(entry.second);
    input_descs[entry.first] = entry.second.desc;
  }
  KernelRunner cpu(conf, cpu_inputs);
  cpu.Run();
  DescMap descs = input_descs;
  for (const auto& entry : Infer(conf, input_descs)) { descs[entry.first] = entry.second; }
  const DataType data_type =
      KernelDataType(OpRegistry::Instance().Get(conf.op_type()), conf, descs);
  CpuAndGpuResults results;
  results.gpu = RunOnGpu(conf, descs, gpu_inputs, data_type);
  for (const auto& entry : results.gpu) {
    results.cpu[entry.first] =
        inputs.count(entry.first) ? cpu.input(entry.first) : cpu.output(entry.first);
  }
  return results;
}

// Runs `conf` on the CPU and on the GPU with the same inputs and compares all
// blobs after the run (integer blobs exactly).
inline void CompareWithCpu(const OperatorConf& conf,
                           const std::map<std::string, HostTensor>& inputs,
                           Tolerance tolerance = {}) {
  SCOPED_TRACE(conf.op_type());
  const CpuAndGpuResults results = RunOnCpuAndGpu(conf, inputs);
  for (const auto& entry : results.gpu) {
    const HostTensor& expected = results.cpu.at(entry.first);
    const bool exact = !IsFloatingDataType(expected.desc.data_type);
    ExpectClose(entry.second, expected, exact ? 0.0 : tolerance.atol, exact ? 0.0 : tolerance.rtol,
                entry.first);
  }
}

inline HostTensor ToHalf(const HostTensor& tensor) {
  BlobDesc desc = tensor.desc;
  desc.data_type = kFloat16;
  HostTensor half_tensor = HostTensor::Allocate(desc);
  for (int64_t i = 0; i < desc.shape.elem_count(); ++i) {
    static_cast<half*>(half_tensor.data)[i] = __float2half(static_cast<float>(ValueAt(tensor, i)));
  }
  return half_tensor;
}

// The float16 GPU kernel against the float32 CPU kernel: the inputs named in
// `half_keys` (all float inputs when empty) are rounded to float16 and given to
// the GPU in float16. Float outputs come back in float16, or, with
// `infer_gpu_dtypes`, in the dtypes the op infers from the GPU's inputs (mixed
// precision kernels: float16 data, float32 per-channel blobs).
inline void CompareHalfWithCpu(const OperatorConf& conf, const std::map<std::string, HostTensor>& inputs,
                        Tolerance tolerance = {2e-3, 5e-3}, std::set<std::string> half_keys = {},
                        bool infer_gpu_dtypes = false) {
  SCOPED_TRACE(conf.op_type() + " in float16");
  if (half_keys.empty()) {
    for (const auto& entry : inputs) {
      if (entry.second.desc.data_type == kFloat) { half_keys.insert(entry.first); }
    }
  }
  std::map<std::string, HostTensor> cpu_inputs, gpu_inputs;
  DescMap float_descs, half_descs;
  for (const auto& entry : inputs) {
    HostTensor rounded = Clone(entry.second);
    if (half_keys.count(entry.first)) {
      HostTensor as_half = ToHalf(entry.second);
      for (int64_t i = 0; i < rounded.desc.shape.elem_count(); ++i) {
        static_cast<float*>(rounded.data)[i] = static_cast<float>(ValueAt(as_half, i));
      }
      gpu_inputs[entry.first] = as_half;
    } else {
      gpu_inputs[entry.first] = Clone(entry.second);
    }
    cpu_inputs[entry.first] = rounded;
    float_descs[entry.first] = rounded.desc;
    half_descs[entry.first] = gpu_inputs[entry.first].desc;
  }
  KernelRunner cpu(conf, cpu_inputs);
  cpu.Run();
  for (auto entry : Infer(conf, infer_gpu_dtypes ? half_descs : float_descs)) {
    if (!infer_gpu_dtypes && entry.second.data_type == kFloat) {
      entry.second.data_type = kFloat16;
    }
    half_descs[entry.first] = entry.second;
  }
  std::map<std::string, HostTensor> gpu = RunOnGpu(conf, half_descs, gpu_inputs, kFloat16);
  for (const auto& entry : gpu) {
    const HostTensor& expected =
        inputs.count(entry.first) ? cpu.input(entry.first) : cpu.output(entry.first);
    const bool exact = !IsFloatingDataType(expected.desc.data_type);
    ExpectClose(entry.second, expected, exact ? 0.0 : tolerance.atol, exact ? 0.0 : tolerance.rtol,
                entry.first);
  }
}

// Values uniform in [low, high) (integers: floor of them), deterministic per
// seed.
template <typename T>
HostTensor Random(const Shape& shape, int64_t seed, double low = -1.0, double high = 1.0) {
  std::vector<T> values(shape.elem_count());
  uint64_t state = 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(seed + 7);
  for (auto& value : values) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const double unit = static_cast<double>(state >> 11) / static_cast<double>(1ull << 53);
    const double x = low + (high - low) * unit;
    value = static_cast<T>(std::is_floating_point<T>::value ? x : std::floor(x));
  }
  return MakeTensor(shape, values);
}

inline const std::vector<Shape>& ElementwiseShapes() {
  static const std::vector<Shape> shapes = {Shape({1}), Shape({7}), Shape({3, 5}), Shape({1001}),
                                            Shape({4, 257, 3})};
  return shapes;
}

}  // namespace test
}  // namespace oneflow

#endif  // ONEFLOW_WITH_CUDA
