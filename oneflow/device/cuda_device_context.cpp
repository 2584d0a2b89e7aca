#ifdef ONEFLOW_WITH_CUDA

#include "oneflow/device/cuda_device_context.h"

#include <cstdio>
#include <utility>

#include "oneflow/device/cuda_check.h"
#include "oneflow/device/cuda_info.h"
#include "oneflow/device/cuda_stream.h"

namespace oneflow {

namespace {

// Workspaces grow in steps of this size, so kernels asking for slightly different sizes do not
// reallocate each time.
constexpr int64_t kWorkspaceGranularity = int64_t{1} << 20;

void LogFailure(const char* what, int64_t device_id, const char* text) {
  std::fprintf(stderr, "oneflow: %s on gpu %lld failed: %s\n", what,
               static_cast<long long>(device_id), text);
}

void LogCudaFailure(const char* what, int64_t device_id, cudaError_t status) {
  if (status == cudaSuccess || status == cudaErrorCudartUnloading) { return; }
  LogFailure(what, device_id, cudaGetErrorString(status));
}

}  // namespace

CudaDeviceContext::CudaDeviceContext(int64_t device_id,
                                     std::function<void(std::exception_ptr)> on_error,
                                     GpuOptions options)
    : device_id_(device_id), on_error_(std::move(on_error)), options_(options) {}

CudaDeviceContext::~CudaDeviceContext() {
  if (stream_ == nullptr && cublas_ == nullptr && cudnn_ == nullptr &&
      error_report_host_ == nullptr) {
    return;
  }
  // The runtime may destroy the context on another thread than the one it was bound to.
  LogCudaFailure("cudaSetDevice", device_id_, cudaSetDevice(static_cast<int>(device_id_)));
  if (stream_ != nullptr) {
    LogCudaFailure("cudaStreamSynchronize", device_id_,
                   cudaStreamSynchronize(stream_->cuda_stream()));
    try {
      stream_->WaitCallbacks();
    } catch (const std::exception& e) {
      LogFailure("running the stream callbacks", device_id_, e.what());
    }
  }
  if (workspace_ != nullptr) {
    LogCudaFailure("cudaFree (the workspace)", device_id_, cudaFree(workspace_));
  }
  for (cudaEvent_t mark : time_marks_) {
    LogCudaFailure("cudaEventDestroy (a time mark)", device_id_, cudaEventDestroy(mark));
  }
  if (cudnn_ != nullptr) {
    const cudnnStatus_t status = cudnnDestroy(cudnn_);
    if (status != CUDNN_STATUS_SUCCESS) {
      LogFailure("cudnnDestroy", device_id_, cudnnGetErrorString(status));
    }
  }
  if (cublas_ != nullptr) {
    const cublasStatus_t status = cublasDestroy(cublas_);
    if (status != CUBLAS_STATUS_SUCCESS) {
      LogFailure("cublasDestroy", device_id_, CublasStatusText(status));
    }
  }
  stream_.reset();  // after the handles bound to it; never throws
  if (error_report_host_ != nullptr) {  // after the poller that reads it
    LogCudaFailure("cudaFreeHost (the error report)", device_id_, cudaFreeHost(error_report_host_));
  }
}

const std::string& CudaDeviceContext::device_tag() const {
  static const std::string tag("gpu");
  return tag;
}

Stream& CudaDeviceContext::stream() {
  OF_CHECK(stream_ != nullptr) << "the context of gpu " << device_id_
                               << " was used before BindCurrentThread";
  return *stream_;
}

void CudaDeviceContext::BindCurrentThread() {
  const CudaInfo& info = GetCudaInfo();
  if (device_id_ < 0 || device_id_ >= info.device_count) {
    throw Error(ErrorKind::kRuntime)
        << "cannot use gpu " << device_id_ << ": this process sees " << info.device_count
        << " GPU(s)" << (info.reason.empty() ? "" : " (" + info.reason + ")");
  }
  OF_CUDA_CHECK(cudaSetDevice(static_cast<int>(device_id_)));
  if (stream_ != nullptr) { return; }  // bound before: only the current device was needed
  if (error_report_host_ == nullptr) {
    void* report = nullptr;
    OF_CUDA_CHECK(cudaHostAlloc(&report, sizeof(DeviceErrorReport), cudaHostAllocMapped));
    error_report_host_ = static_cast<DeviceErrorReport*>(report);
    *error_report_host_ = DeviceErrorReport{};
    void* device_address = nullptr;
    OF_CUDA_CHECK(cudaHostGetDevicePointer(&device_address, report, 0));
    error_report_device_ = static_cast<DeviceErrorReport*>(device_address);
  }
  stream_ = std::make_unique<CudaStream>(device_id_, on_error_, [this] { ThrowReportedError(); });
}

int32_t CudaDeviceContext::AddErrorSite(std::string prefix) {
  std::lock_guard<std::mutex> lock(error_sites_mutex_);
  error_sites_.push_back(std::move(prefix));
  return static_cast<int32_t>(error_sites_.size());
}

DeviceErrorReport* CudaDeviceContext::error_report() const {
  OF_CHECK(error_report_device_ != nullptr) << "the context of gpu " << device_id_
                                            << " was used before BindCurrentThread";
  return error_report_device_;
}

void CudaDeviceContext::ThrowReportedError() {
  // The work before the event has completed, so the kernels' writes to the report are visible.
  const volatile DeviceErrorReport* report = error_report_host_;
  const int32_t site = report->site;
  if (site == 0) { return; }
  std::string prefix;
  {
    std::lock_guard<std::mutex> lock(error_sites_mutex_);
    prefix = site > 0 && site <= static_cast<int32_t>(error_sites_.size())
                 ? error_sites_[site - 1]
                 : "a kernel (unknown error site " + std::to_string(site) + ")";
  }
  throw Error(ErrorKind::kValue) << prefix << " " << report->value << " at position "
                                 << report->position << " is out of range [0, " << report->limit
                                 << ") (found on gpu " << device_id_ << ")";
}

void CudaDeviceContext::Synchronize() {
  if (stream_ == nullptr) { return; }
  stream_->Synchronize();
  stream_->WaitCallbacks();
}

cudaStream_t CudaDeviceContext::cuda_stream() const {
  OF_CHECK(stream_ != nullptr) << "the context of gpu " << device_id_
                               << " was used before BindCurrentThread";
  return stream_->cuda_stream();
}

// The handles are made on first use: a Plan whose kernels never call cuBLAS or cuDNN (and every
// short-lived runtime of the tests) does not pay for creating them.
cublasHandle_t CudaDeviceContext::cublas_handle() const {
  if (cublas_ == nullptr) {
    const cudaStream_t stream = cuda_stream();
    OF_CUBLAS_CHECK(cublasCreate(&cublas_));
    OF_CUBLAS_CHECK(cublasSetStream(cublas_, stream));
    // No TF32 for float GEMMs: results match the CPU kernels to float precision.
    OF_CUBLAS_CHECK(cublasSetMathMode(cublas_, CUBLAS_DEFAULT_MATH));
  }
  return cublas_;
}

cudnnHandle_t CudaDeviceContext::cudnn_handle() const {
  if (cudnn_ == nullptr) {
    const cudaStream_t stream = cuda_stream();
    OF_CUDNN_CHECK(cudnnCreate(&cudnn_));
    OF_CUDNN_CHECK(cudnnSetStream(cudnn_, stream));
  }
  return cudnn_;
}

void* CudaDeviceContext::Workspace(int64_t bytes) {
  if (bytes <= workspace_bytes_) { return workspace_; }
  OF_CHECK(stream_ != nullptr) << "the context of gpu " << device_id_
                               << " was used before BindCurrentThread";
  // Kernels enqueued before may still read or write the old buffer.
  stream_->Synchronize();
  if (workspace_ != nullptr) {
    void* old = workspace_;
    workspace_ = nullptr;
    workspace_bytes_ = 0;
    OF_CUDA_CHECK(cudaFree(old));
  }
  const int64_t rounded =
      (bytes + kWorkspaceGranularity - 1) / kWorkspaceGranularity * kWorkspaceGranularity;
  void* memory = nullptr;
  const cudaError_t status = cudaMalloc(&memory, static_cast<size_t>(rounded));
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // not sticky: clear it so later checks do not see it
    throw Error(ErrorKind::kRuntime)
        << "out of memory: cannot allocate " << rounded << " bytes of gpu " << device_id_
        << " memory for a kernel's workspace (" << bytes << " bytes asked)";
  }
  if (status != cudaSuccess) {
    throw Error(ErrorKind::kRuntime) << "cudaMalloc of a " << rounded << "-byte workspace on gpu "
                                     << device_id_ << " failed: " << cudaGetErrorString(status);
  }
  workspace_ = memory;
  workspace_bytes_ = rounded;
  return workspace_;
}

int64_t CudaDeviceContext::MarkTime() {
  cudaEvent_t mark = nullptr;
  OF_CUDA_CHECK(cudaEventCreate(&mark));  // with timing, unlike the stream's callback events
  const cudaError_t status = cudaEventRecord(mark, cuda_stream());
  if (status != cudaSuccess) {
    cudaEventDestroy(mark);
    OF_CUDA_CHECK(status);
  }
  time_marks_.push_back(mark);
  return static_cast<int64_t>(time_marks_.size()) - 1;
}

double CudaDeviceContext::MicrosecondsBetween(int64_t from, int64_t to) {
  const int64_t count = static_cast<int64_t>(time_marks_.size());
  OF_CHECK(from >= 0 && from < count && to >= 0 && to < count)
      << "gpu " << device_id_ << " has time marks 0 to " << count - 1 << ", not " << from
      << " and " << to;
  OF_CUDA_CHECK(cudaSetDevice(static_cast<int>(device_id_)));
  OF_CUDA_CHECK(cudaEventSynchronize(time_marks_[from]));
  OF_CUDA_CHECK(cudaEventSynchronize(time_marks_[to]));
  float milliseconds = 0;
  OF_CUDA_CHECK(cudaEventElapsedTime(&milliseconds, time_marks_[from], time_marks_[to]));
  return 1e3 * static_cast<double>(milliseconds);
}

}  // namespace oneflow

#endif  // ONEFLOW_WITH_CUDA
