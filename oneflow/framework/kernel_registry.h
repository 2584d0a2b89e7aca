#pragma once
// The one kernel registry: (op type, device tag, dtype) -> kernel factory.

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>

#include "oneflow/framework/kernel.h"

namespace oneflow {

struct OpDef;

using KernelFactory = std::function<std::unique_ptr<Kernel>(const KernelInitContext&)>;

// A (op, "cpu", float16) lookup without a registered kernel falls back to the op's float32 CPU
// kernel run on float32 copies (oneflow/kernels/cpu/half_via_float_kernel.h).
class KernelRegistry {
 public:
  static KernelRegistry& Instance();
  void Register(const std::string& op_type, const std::string& device_tag, DataType data_type,
                KernelFactory factory);
  bool Has(const std::string& op_type, const std::string& device_tag, DataType data_type) const;
  // Throws NotImplementedError: "no CPU kernel for op 'x' (relu) with dtype int8".
  const KernelFactory& Get(const std::string& op_name, const std::string& op_type,
                           const std::string& device_tag, DataType data_type) const;

 private:
  const KernelFactory* Find(const std::string& op_type, const std::string& device_tag,
                            DataType data_type) const;

  std::map<std::tuple<std::string, std::string, DataType>, KernelFactory> factories_;
  // Derived float16 CPU factories by op type, made on first lookup.
  mutable std::mutex derived_mutex_;
  mutable std::map<std::string, KernelFactory> derived_half_factories_;
};

// The dtype that selects an op's kernel: the op def's kernel_data_type_argument, else its first
// output, else its first input. `descs` maps argument keys ("out_0") to blob descriptions.
DataType KernelDataType(const OpDef& def, const OperatorConf& conf,
                        const std::map<std::string, BlobDesc>& descs);

struct KernelRegistrar {
  KernelRegistrar(const std::string& op_type, const std::string& device_tag, DataType data_type,
                  KernelFactory factory) {
    KernelRegistry::Instance().Register(op_type, device_tag, data_type, std::move(factory));
  }
};

#define OF_KERNEL_CONCAT_IMPL(a, b) a##b
#define OF_KERNEL_CONCAT(a, b) OF_KERNEL_CONCAT_IMPL(a, b)
#define REGISTER_KERNEL(op_type, device_tag, data_type, ...)                                 \
  static ::oneflow::KernelRegistrar OF_KERNEL_CONCAT(g_kernel_registrar_, __COUNTER__)(     \
      op_type, device_tag, data_type, [](const ::oneflow::KernelInitContext& ctx) {          \
        return std::unique_ptr<::oneflow::Kernel>(new __VA_ARGS__(ctx));                     \
      })

// Registers KernelTemplate<float> and KernelTemplate<double> for a CPU op.
#define REGISTER_CPU_FLOATING_KERNELS(op_type, KernelTemplate)      \
  REGISTER_KERNEL(op_type, "cpu", ::oneflow::kFloat, KernelTemplate<float>); \
  REGISTER_KERNEL(op_type, "cpu", ::oneflow::kDouble, KernelTemplate<double>)

// ... and KernelTemplate<int32_t>, KernelTemplate<int64_t>: the arithmetic dtypes.
#define REGISTER_CPU_ARITHMETIC_KERNELS(op_type, KernelTemplate)                 \
  REGISTER_CPU_FLOATING_KERNELS(op_type, KernelTemplate);                        \
  REGISTER_KERNEL(op_type, "cpu", ::oneflow::kInt32, KernelTemplate<int32_t>); \
  REGISTER_KERNEL(op_type, "cpu", ::oneflow::kInt64, KernelTemplate<int64_t>)

// ... and KernelTemplate<int8_t>, KernelTemplate<uint8_t>: every dtype (ops that move data).
#define REGISTER_CPU_ALL_TYPE_KERNELS(op_type, KernelTemplate)                  \
  REGISTER_CPU_ARITHMETIC_KERNELS(op_type, KernelTemplate);                     \
  REGISTER_KERNEL(op_type, "cpu", ::oneflow::kInt8, KernelTemplate<int8_t>); \
  REGISTER_KERNEL(op_type, "cpu", ::oneflow::kUInt8, KernelTemplate<uint8_t>)

}  // namespace oneflow
