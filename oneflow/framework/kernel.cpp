#include "oneflow/framework/kernel.h"

#include "oneflow/common/error.h"
#include "oneflow/device/cpu_device_context.h"
#include "oneflow/device/cuda_device_context.h"
#include "oneflow/framework/op_conf_util.h"

namespace oneflow {

const BlobDesc& KernelInitContext::Desc(const std::string& argument, int64_t index) const {
  auto it = blob_descs_.find(ArgumentKey(argument, index));
  OF_CHECK(it != blob_descs_.end()) << "op '" << conf_.name() << "' has no blob '" << argument
                                    << "' index " << index;
  return it->second;
}

const BlobDesc& KernelInitContext::LogicalDesc(const std::string& argument, int64_t index) const {
  auto it = logical_descs_.find(ArgumentKey(argument, index));
  if (it == logical_descs_.end()) { return Desc(argument, index); }
  return it->second;
}

SbpParallel KernelInitContext::Sbp(const std::string& argument, int64_t index) const {
  auto it = conf_.sbp_signature().argument_to_sbp().find(ArgumentKey(argument, index));
  if (it != conf_.sbp_signature().argument_to_sbp().end()) { return it->second; }
  SbpParallel broadcast;
  broadcast.mutable_broadcast_parallel();
  return broadcast;
}

bool KernelInitContext::Has(const std::string& argument, int64_t index) const {
  return blob_descs_.count(ArgumentKey(argument, index)) > 0;
}

int64_t KernelContext::Find(const std::string& argument, int64_t index, bool is_input) const {
  for (size_t position = 0; position < slots_.size(); ++position) {
    const Slot& slot = slots_[position];
    if (slot.index == index && slot.is_input == is_input && slot.argument == argument) {
      return static_cast<int64_t>(position);
    }
  }
  return -1;
}

const Blob& KernelContext::Input(const std::string& argument, int64_t index) const {
  const int64_t position = Find(argument, index, true);
  OF_CHECK(position >= 0) << "kernel has no input '" << argument << "' index " << index;
  return slots_[position].blob;
}

Blob& KernelContext::MutableInput(const std::string& argument, int64_t index) {
  const int64_t position = Find(argument, index, true);
  OF_CHECK(position >= 0) << "kernel has no input '" << argument << "' index " << index;
  return slots_[position].blob;
}

Blob& KernelContext::Output(const std::string& argument, int64_t index) {
  const int64_t position = Find(argument, index, false);
  OF_CHECK(position >= 0) << "kernel has no output '" << argument << "' index " << index;
  return slots_[position].blob;
}

bool KernelContext::HasInput(const std::string& argument, int64_t index) const {
  return Find(argument, index, true) >= 0;
}

bool KernelContext::HasOutput(const std::string& argument, int64_t index) const {
  return Find(argument, index, false) >= 0;
}

int64_t KernelContext::InputCount(const std::string& argument) const {
  int64_t count = 0;
  while (HasInput(argument, count)) { ++count; }
  return count;
}

void KernelContext::set_device(DeviceContext* device) {
  device_ = device;
  cpu_device_ = dynamic_cast<CpuDeviceContext*>(device);
}

CpuDeviceContext& KernelContext::cpu_device() const {
  OF_CHECK(cpu_device_ != nullptr) << "a CPU kernel runs on a device that is not a CPU";
  return *cpu_device_;
}

CudaDeviceContext& KernelContext::cuda_device() const {
#ifdef ONEFLOW_WITH_CUDA
  auto* cuda = dynamic_cast<CudaDeviceContext*>(device_);
  OF_CHECK(cuda != nullptr) << "a GPU kernel runs on a device that is not a GPU";
  return *cuda;
#else
  OF_CHECK(false) << "a GPU kernel runs in a build without CUDA";
  return *static_cast<CudaDeviceContext*>(nullptr);
#endif
}

int64_t KernelContext::AddBlob(const std::string& key, Blob blob, bool is_input) {
  const size_t underscore = key.rfind('_');
  OF_CHECK(underscore != std::string::npos && underscore + 1 < key.size())
      << "malformed argument key '" << key << "'";
  slots_.push_back(Slot{key.substr(0, underscore), std::stoll(key.substr(underscore + 1)),
                        is_input, std::move(blob)});
  return static_cast<int64_t>(slots_.size()) - 1;
}

}  // namespace oneflow
