#include "oneflow/common/error.h"

namespace oneflow {

const char* Error::what() const noexcept {
  if (what_.empty()) {
    what_ = message_;
    for (const std::string& line : context_) { what_ += "\n  " + line; }
  }
  return what_.c_str();
}

}  // namespace oneflow
