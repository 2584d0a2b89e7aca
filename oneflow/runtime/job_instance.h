#pragma once
// One call of a global function: the values pushed into its input ops, the values its return
// ops produce, the first error raised while it ran, and its completion. Created by the session
// on the caller's thread, carried through the Plan by registers, finished by the sink actor.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "oneflow/framework/host_tensor.h"

namespace oneflow {

class JobInstance {
 public:
  JobInstance(std::string job_name, std::map<std::string, HostTensor> inputs);

  const std::string& job_name() const { return job_name_; }
  // The value pushed for input op `op_name`; throws if none was.
  const HostTensor& Input(const std::string& op_name) const;
  void SetOutput(const std::string& op_name, HostTensor tensor);
  // The result of return op `op_name`, allocated (as `logical`) by the first caller; the return
  // tasks of its devices each write their part of it.
  HostTensor OutputBuffer(const std::string& op_name, const BlobDesc& logical);
  // Valid after Wait() returned.
  const std::map<std::string, HostTensor>& outputs() const { return outputs_; }

  // Records an error of this iteration; the first one is kept and later ones are dropped.
  void AddError(std::exception_ptr error);
  bool has_error() const;

  // An iteration that runs on several machines has one part per machine: the caller expects
  // `parts` more (before launching) and each part's end calls Finish().
  void ExpectParts(int64_t parts);
  // Called when every actor of a part has finished this iteration; the instance finishes with
  // the last part. Returns whether this call finished it.
  bool Finish();
  // Finishes at once, whatever parts are outstanding (the runtime gives up on the iteration).
  bool FinishNow();
  // The iteration's first error (null if none), and its message (empty if none).
  std::exception_ptr error() const;
  std::string ErrorMessage() const;
  // Runs `callback` on the finishing thread after Finish (at once if already finished).
  void OnFinish(std::function<void()> callback);
  // Blocks until finished; rethrows the iteration's error, if any.
  void Wait();
  // Waits at most `timeout`; returns false if still running, else behaves like Wait().
  bool WaitFor(std::chrono::microseconds timeout);
  bool done() const;

 private:
  std::string job_name_;
  std::map<std::string, HostTensor> inputs_;
  std::map<std::string, HostTensor> outputs_;
  mutable std::mutex mutex_;
  std::condition_variable finished_;
  bool done_ = false;
  int64_t pending_parts_ = 1;
  std::atomic<bool> done_flag_{false};  // done_, readable without the lock (Wait's spin)
  bool finishing_ = false;  // Finish() is running the callbacks
  std::thread::id finishing_thread_;
  std::exception_ptr error_;
  std::vector<std::function<void()>> on_finish_;
};

}  // namespace oneflow
