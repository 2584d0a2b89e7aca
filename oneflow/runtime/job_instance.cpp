#include "oneflow/runtime/job_instance.h"

#include <chrono>

#include "oneflow/common/cpu_relax.h"

#include "oneflow/common/error.h"

namespace oneflow {

JobInstance::JobInstance(std::string job_name, std::map<std::string, HostTensor> inputs)
    : job_name_(std::move(job_name)), inputs_(std::move(inputs)) {}

const HostTensor& JobInstance::Input(const std::string& op_name) const {
  auto it = inputs_.find(op_name);
  if (it == inputs_.end()) {
    throw Error(ErrorKind::kValue) << "job '" << job_name_ << "': no value was pushed for input '"
                                   << op_name << "'";
  }
  return it->second;
}

void JobInstance::SetOutput(const std::string& op_name, HostTensor tensor) {
  std::lock_guard<std::mutex> lock(mutex_);
  outputs_[op_name] = std::move(tensor);
}

HostTensor JobInstance::OutputBuffer(const std::string& op_name, const BlobDesc& logical) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = outputs_.find(op_name);
  if (it == outputs_.end()) { it = outputs_.emplace(op_name, HostTensor::Allocate(logical)).first; }
  return it->second;
}

void JobInstance::AddError(std::exception_ptr error) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!error_) { error_ = error; }
}

bool JobInstance::has_error() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<bool>(error_);
}

void JobInstance::ExpectParts(int64_t parts) {
  std::lock_guard<std::mutex> lock(mutex_);
  pending_parts_ += parts;
}

std::exception_ptr JobInstance::error() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return error_;
}

std::string JobInstance::ErrorMessage() const {
  std::exception_ptr error = this->error();
  if (!error) { return ""; }
  try {
    std::rethrow_exception(error);
  } catch (std::exception& cause) { return cause.what(); } catch (...) {
    return "unknown error";
  }
}

bool JobInstance::Finish() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (--pending_parts_ > 0) { return false; }
  }
  return FinishNow();
}

bool JobInstance::FinishNow() {
  // Callbacks run before waiters wake, so a caller that waited for the instance also knows its
  // callbacks have run. The callbacks themselves may wait (on this thread) without blocking.
  std::vector<std::function<void()>> callbacks;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    pending_parts_ = 0;
    if (done_ || finishing_) { return false; }
    finishing_ = true;
    finishing_thread_ = std::this_thread::get_id();
    callbacks.swap(on_finish_);
  }
  for (auto& callback : callbacks) { callback(); }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
    done_flag_.store(true, std::memory_order_release);
  }
  finished_.notify_all();
  return true;
}

void JobInstance::OnFinish(std::function<void()> callback) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!done_ && !finishing_) {
      on_finish_.push_back(std::move(callback));
      return;
    }
  }
  callback();
}

void JobInstance::Wait() {
  while (!WaitFor(std::chrono::hours(1))) {}
}

bool JobInstance::WaitFor(std::chrono::microseconds timeout) {
  // Short calls finish within microseconds; spin briefly before sleeping on the condition.
  const auto spin_until = std::chrono::steady_clock::now() + std::chrono::microseconds(20);
  while (!done_flag_.load(std::memory_order_acquire) &&
         std::chrono::steady_clock::now() < spin_until) {
    CpuRelax();
  }
  std::unique_lock<std::mutex> lock(mutex_);
  // A callback of this instance runs on the finishing thread; waiting there must not block.
  const bool finished = finished_.wait_for(lock, timeout, [this] {
    return done_ || (finishing_ && finishing_thread_ == std::this_thread::get_id());
  });
  if (!finished) { return false; }
  if (error_) { std::rethrow_exception(error_); }
  return true;
}

bool JobInstance::done() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return done_;
}

}  // namespace oneflow
