#pragma once
// A GPU device as one runtime thread sees it: its own CUDA stream, the cuBLAS and cuDNN handles
// bound to that stream, and a scratch workspace. Kernels enqueue work on the stream and return at
// once; the stream's completion callbacks (the actors' outgoing messages) run on an event poller
// thread when the work before them is done (cudaEventQuery, never a synchronize in the actor
// loop), so the actor protocol is the same as on a CPU device. CUDA builds only.

#ifdef ONEFLOW_WITH_CUDA

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "oneflow/device/device_context.h"
#include "oneflow/device/device_error_report.h"
#include "oneflow/device/gpu_options.h"

namespace oneflow {

class CudaStream;

class CudaDeviceContext final : public DeviceContext {
 public:
  // `on_error` is called (from the poller thread) when waiting for the stream's work finds a
  // CUDA error; the runtime then aborts. Nothing touches the device before BindCurrentThread.
  CudaDeviceContext(int64_t device_id, std::function<void(std::exception_ptr)> on_error,
                    GpuOptions options = GpuOptions());
  // Waits for the stream's work and runs the pending callbacks, then frees handles and stream.
  ~CudaDeviceContext() override;

  const std::string& device_tag() const override;  // "gpu"
  Stream& stream() override;
  // cudaSetDevice, then creates the stream, the handles and the poller.
  void BindCurrentThread() override;
  // Waits for the stream's work and its callbacks.
  void Synchronize() override;

  int64_t device_id() const { return device_id_; }
  const GpuOptions& options() const { return options_; }
  cudaStream_t cuda_stream() const;
  cublasHandle_t cublas_handle() const;  // bound to cuda_stream(); made on first use
  cudnnHandle_t cudnn_handle() const;    // bound to cuda_stream(); made on first use
  // Device scratch memory of at least `bytes`, valid until the next call on this context (the
  // kernels of one thread run one at a time, in stream order).
  void* Workspace(int64_t bytes);

  // Bad values found by kernels (device_error_report.h). AddErrorSite registers a message prefix
  // such as "gather (op 'g'): index" and returns the id a kernel writes into the report; the
  // ValueError reads "<prefix> <value> at position <position> is out of range [0, <limit>)".
  // error_report() is the report's device address (valid after BindCurrentThread).
  int32_t AddErrorSite(std::string prefix);
  DeviceErrorReport* error_report() const;

  // CUDA events with timing, one per mark, kept until the context goes.
  int64_t MarkTime() override;
  double MicrosecondsBetween(int64_t from, int64_t to) override;

 private:
  int64_t device_id_;
  std::function<void(std::exception_ptr)> on_error_;
  GpuOptions options_;
  std::unique_ptr<CudaStream> stream_;
  mutable cublasHandle_t cublas_ = nullptr;  // made on first use, by the owning thread
  mutable cudnnHandle_t cudnn_ = nullptr;
  void* workspace_ = nullptr;
  int64_t workspace_bytes_ = 0;
  std::vector<cudaEvent_t> time_marks_;
  DeviceErrorReport* error_report_host_ = nullptr;  // pinned, mapped
  DeviceErrorReport* error_report_device_ = nullptr;
  // Sites are added by the runtime thread and read by the poller thread.
  mutable std::mutex error_sites_mutex_;
  std::vector<std::string> error_sites_;  // id k + 1 -> prefix

  // On the poller thread, after work completed: throws the report's ValueError if it was claimed.
  void ThrowReportedError();
};

}  // namespace oneflow

#endif  // ONEFLOW_WITH_CUDA
