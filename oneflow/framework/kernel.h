#pragma once
// Kernels: the code an op runs on one device for one dtype. A kernel is constructed once per
// task from a KernelInitContext (read attributes and physical shapes there, not per call) and
// called once per iteration with a KernelContext holding that iteration's blobs.
//
//   class ReluKernel final : public Kernel {
//    public:
//     explicit ReluKernel(const KernelInitContext& ctx) {}
//     void Forward(KernelContext& ctx) override { ... ctx.Input("x") ... ctx.Output("y") ... }
//   };
//   REGISTER_KERNEL("relu", "cpu", kFloat, ReluKernel<float>);

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "oneflow/framework/attr.h"
#include "oneflow/framework/blob.h"
#include "oneflow/framework/host_tensor.h"
#include "proto/op_conf.pb.h"
#include "proto/placement.pb.h"
#include "proto/sbp.pb.h"

namespace oneflow {

class CpuDeviceContext;
class CudaDeviceContext;
class DeviceContext;
class JobInstance;

// Python-side watch handlers, called by watch kernels: (handler id, piece id of the call,
// value).
using WatchHandler = std::function<void(int64_t, int64_t, const HostTensor&)>;

class KernelInitContext {
 public:
  // `blob_descs`: physical descriptions of the task's blobs; `logical_descs`: the logical ones
  // (empty when they are the same, on one device).
  KernelInitContext(const OperatorConf& conf, std::map<std::string, BlobDesc> blob_descs,
                    ParallelContext parallel_context,
                    std::map<std::string, BlobDesc> logical_descs = {})
      : conf_(conf),
        blob_descs_(std::move(blob_descs)),
        logical_descs_(std::move(logical_descs)),
        parallel_context_(parallel_context) {}

  const OperatorConf& conf() const { return conf_; }
  template <typename T>
  T Attr(const std::string& name) const {
    return FromAttrValue<T>(conf_.attr().at(name));
  }
  // Physical description of an input or output blob ("a", 0) of this task.
  const BlobDesc& Desc(const std::string& argument, int64_t index = 0) const;
  // Logical description of the same blob (the whole, over all devices of the placement).
  const BlobDesc& LogicalDesc(const std::string& argument, int64_t index = 0) const;
  // How the blob is laid out over the devices (broadcast when the op chose none).
  SbpParallel Sbp(const std::string& argument, int64_t index = 0) const;
  bool Has(const std::string& argument, int64_t index = 0) const;
  const ParallelContext& parallel_context() const { return parallel_context_; }

 private:
  const OperatorConf& conf_;
  std::map<std::string, BlobDesc> blob_descs_;
  std::map<std::string, BlobDesc> logical_descs_;
  ParallelContext parallel_context_;
};

class KernelContext {
 public:
  const Blob& Input(const std::string& argument, int64_t index = 0) const;
  Blob& Output(const std::string& argument, int64_t index = 0);
  // An input the op declared MutableInput (updated in place, e.g. an optimizer's model).
  Blob& MutableInput(const std::string& argument, int64_t index = 0);
  bool HasInput(const std::string& argument, int64_t index = 0) const;
  bool HasOutput(const std::string& argument, int64_t index = 0) const;
  int64_t InputCount(const std::string& argument) const;
  // The device the kernel runs on (its stream and compute resources).
  DeviceContext& device() const { return *device_; }
  // The CPU device of a CPU kernel: its ParallelFor pool.
  CpuDeviceContext& cpu_device() const;
  // The GPU device of a GPU kernel: its stream and cuBLAS/cuDNN handles (CUDA builds only).
  CudaDeviceContext& cuda_device() const;
  // The iteration being computed (0, 1, ... for each job since the runtime started). Random
  // kernels key their numbers with it rather than counting their calls: an op reading a
  // dynamic blob gets a kernel per shape, and they must continue one sequence.
  int64_t piece_id() const { return piece_id_; }
  void set_piece_id(int64_t piece_id) { piece_id_ = piece_id; }
  // For the ops that change time shapes (framework/time_shape.h): the position 0..N-1 of this
  // act in its cycle of N (0 for every other op).
  int64_t cycle_step() const { return cycle_step_; }
  void set_cycle_step(int64_t step) { cycle_step_ = step; }
  // The job instance of the iteration being computed (for input/return/watch kernels).
  JobInstance* job_instance() const { return job_instance_; }
  const WatchHandler& watch_handler() const { return *watch_handler_; }

  // Set up once by the actor that owns the kernel: one slot per argument key ("a_0"), whose
  // position is then used to point the slot at each iteration's memory.
  int64_t AddBlob(const std::string& key, Blob blob, bool is_input);
  void SetBlobData(int64_t position, void* data) { slots_[position].blob.set_data(data); }
  // The shape of a dynamic blob in this iteration (see BlobDesc::is_dynamic).
  void SetBlobShape(int64_t position, const Shape& shape) {
    slots_[position].blob.set_shape(shape);
  }
  const Blob& BlobAt(int64_t position) const { return slots_[position].blob; }
  void set_device(DeviceContext* device);
  void set_job_instance(JobInstance* instance) { job_instance_ = instance; }
  void set_watch_handler(const WatchHandler* handler) { watch_handler_ = handler; }

 private:
  struct Slot {
    std::string argument;
    int64_t index;
    bool is_input;
    Blob blob;
  };
  // Few slots per kernel: a linear scan without building key strings beats a map per call.
  // Position of the slot, or -1.
  int64_t Find(const std::string& argument, int64_t index, bool is_input) const;

  std::vector<Slot> slots_;
  DeviceContext* device_ = nullptr;
  CpuDeviceContext* cpu_device_ = nullptr;
  JobInstance* job_instance_ = nullptr;
  const WatchHandler* watch_handler_ = nullptr;
  int64_t piece_id_ = 0;
  int64_t cycle_step_ = 0;
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual void Forward(KernelContext& ctx) = 0;
};

}  // namespace oneflow
