#include "oneflow/framework/kernel.h"

#include "oneflow/common/error.h"
#include "oneflow/framework/op_conf_util.h"

namespace oneflow {

const BlobDesc& KernelInitContext::Desc(const std::string& argument, int64_t index) const {
  auto it = blob_descs_.find(ArgumentKey(argument, index));
  OF_CHECK(it != blob_descs_.end()) << "op '" << conf_.name() << "' has no blob '" << argument
                                    << "' index " << index;
  return it->second;
}

bool KernelInitContext::Has(const std::string& argument, int64_t index) const {
  return blob_descs_.count(ArgumentKey(argument, index)) > 0;
}

const Blob& KernelContext::Input(const std::string& argument, int64_t index) const {
  auto it = inputs_.find(ArgumentKey(argument, index));
  OF_CHECK(it != inputs_.end()) << "kernel has no input '" << argument << "' index " << index;
  return it->second;
}

Blob& KernelContext::MutableInput(const std::string& argument, int64_t index) {
  auto it = inputs_.find(ArgumentKey(argument, index));
  OF_CHECK(it != inputs_.end()) << "kernel has no input '" << argument << "' index " << index;
  return it->second;
}

Blob& KernelContext::Output(const std::string& argument, int64_t index) {
  auto it = outputs_.find(ArgumentKey(argument, index));
  OF_CHECK(it != outputs_.end()) << "kernel has no output '" << argument << "' index " << index;
  return it->second;
}

bool KernelContext::HasInput(const std::string& argument, int64_t index) const {
  return inputs_.count(ArgumentKey(argument, index)) > 0;
}

bool KernelContext::HasOutput(const std::string& argument, int64_t index) const {
  return outputs_.count(ArgumentKey(argument, index)) > 0;
}

int64_t KernelContext::InputCount(const std::string& argument) const {
  int64_t count = 0;
  while (HasInput(argument, count)) { ++count; }
  return count;
}

void KernelContext::SetBlob(const std::string& key, Blob blob, bool is_input) {
  (is_input ? inputs_ : outputs_)[key] = std::move(blob);
}

}  // namespace oneflow
