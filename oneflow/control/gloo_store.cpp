#include "oneflow/control/gloo_store.h"

namespace oneflow {

void GlooStore::set(const std::string& key, const std::vector<char>& data) {
  control_plane_.Set(FullKey(key), std::string(data.begin(), data.end()));
}

std::vector<char> GlooStore::get(const std::string& key) {
  std::string value = control_plane_.Get(FullKey(key), timeout_);
  return std::vector<char>(value.begin(), value.end());
}

void GlooStore::wait(const std::vector<std::string>& keys) { wait(keys, timeout_); }

void GlooStore::wait(const std::vector<std::string>& keys,
                     const std::chrono::milliseconds& timeout) {
  // One deadline for all keys: Get returns at once for keys already there.
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (const std::string& key : keys) {
    auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    control_plane_.Get(FullKey(key), std::max(remaining, std::chrono::milliseconds(0)));
  }
}

}  // namespace oneflow
