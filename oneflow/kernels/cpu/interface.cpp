// CPU kernels of the interface ops and the variable op. On several devices, an input task copies
// its part of the call's value, and a return task writes its part of the call's result (each
// device of a split blob its slice; of a broadcast one, only the first device). A dynamic input
// (oneflow/ops/interface.cpp) is pushed as two values: "<op>" of shape (devices, bound elements),
// row i holding device i's elements first, and "<op>/shapes" (devices, rank) int64, row i device
// i's shape. A mirrored return writes each device's value to its own result, "<op>/<device>".
#include <cstring>

#include "oneflow/common/error.h"
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/cpu/tensor_slice_copy.h"
#include "oneflow/runtime/job_instance.h"

namespace oneflow {
namespace {

// The variable's register aliases the session's variable memory: nothing to compute.
class VariableKernel final : public Kernel {
 public:
  explicit VariableKernel(const KernelInitContext&) {}
  void Forward(KernelContext&) override {}
};

// Where this task's part sits in the whole blob `argument`.
TensorSlice PartOf(const KernelInitContext& ctx, const std::string& argument) {
  const ParallelContext& parallel = ctx.parallel_context();
  return SliceOfPart(ctx.LogicalDesc(argument).shape, ctx.Sbp(argument), parallel.parallel_id(),
                     std::max<int64_t>(parallel.parallel_num(), 1));
}

class InputKernel final : public Kernel {
 public:
  explicit InputKernel(const KernelInitContext& ctx)
      : op_name_(ctx.conf().name()),
        logical_(ctx.LogicalDesc("out")),
        part_(PartOf(ctx, "out")),
        whole_(FullSlice(logical_.shape)),
        device_(ctx.parallel_context().parallel_id()) {}
  void Forward(KernelContext& ctx) override {
    Blob& out = ctx.Output("out");
    if (logical_.is_dynamic) {
      ForwardDynamic(out, *ctx.job_instance());
      return;
    }
    const HostTensor& value = ctx.job_instance()->Input(op_name_);
    OF_CHECK(value.desc.shape == logical_.shape && value.desc.data_type == logical_.data_type)
        << "input '" << op_name_ << "' got " << value.desc.ToString() << ", expected "
        << logical_.ToString();
    if (part_ == whole_) {
      std::memcpy(out.mut_raw(), value.data, out.byte_size());
    } else {
      CopyTensorSlice(logical_.data_type, part_, value.data, whole_, out.mut_raw(), part_, false);
    }
  }

 private:
  // This device's row of the pushed values (see the comment at the top).
  void ForwardDynamic(Blob& out, const JobInstance& instance) const {
    const HostTensor& value = instance.Input(op_name_);
    const HostTensor& shapes = instance.Input(op_name_ + "/shapes");
    const int64_t bound = logical_.shape.elem_count();
    const int64_t rank = logical_.shape.num_axes();
    OF_CHECK(value.desc.data_type == logical_.data_type && value.desc.shape.num_axes() == 2 &&
             value.desc.shape.At(0) > device_ && value.desc.shape.At(1) == bound &&
             shapes.desc.data_type == kInt64 && shapes.desc.shape == Shape({value.desc.shape.At(0),
                                                                           rank}))
        << "dynamic input '" << op_name_ << "' got " << value.desc.ToString() << " and shapes "
        << shapes.desc.ToString() << ", expected (devices, " << bound << ") "
        << DataTypeName(logical_.data_type) << " and (devices, " << rank << ") int64";
    const int64_t* dims = static_cast<const int64_t*>(shapes.data) + device_ * rank;
    Shape shape(std::vector<int64_t>(dims, dims + rank));
    OF_CHECK(shape.elem_count() <= bound)
        << "dynamic input '" << op_name_ << "': device " << device_ << "'s value "
        << shape.ToString() << " is larger than the bound " << logical_.shape.ToString();
    const int64_t element_size = SizeOf(logical_.data_type);
    const char* elements = static_cast<const char*>(value.data) + device_ * bound * element_size;
    std::memcpy(out.mut_raw(), elements, shape.elem_count() * element_size);
    out.set_shape(std::move(shape));
  }

  std::string op_name_;
  BlobDesc logical_;
  TensorSlice part_;
  TensorSlice whole_;
  int64_t device_;
};

HostTensor CopyToHost(const Blob& blob) {
  HostTensor tensor = HostTensor::Allocate(blob.desc());
  std::memcpy(tensor.data, blob.raw(), blob.byte_size());
  return tensor;
}

class ReturnKernel final : public Kernel {
 public:
  explicit ReturnKernel(const KernelInitContext& ctx)
      : op_name_(ctx.conf().name()),
        logical_(ctx.LogicalDesc("in")),
        part_(PartOf(ctx, "in")),
        whole_(FullSlice(logical_.shape)),
        writes_(ctx.Sbp("in").has_split_parallel() || ctx.parallel_context().parallel_id() == 0) {
    OF_CHECK(!ctx.Sbp("in").has_partial_sum_parallel() || ctx.parallel_context().parallel_num() <= 1)
        << "return op '" << op_name_ << "' got a partial-sum input";
    if (ctx.conf().mirrored()) {  // each device's value is a result of its own
      result_name_.append("/").append(std::to_string(ctx.parallel_context().parallel_id()));
      writes_ = true;
    }
  }
  void Forward(KernelContext& ctx) override {
    if (!writes_) { return; }
    const Blob& in = ctx.Input("in");
    HostTensor result = ctx.job_instance()->OutputBuffer(result_name_, logical_);
    if (part_ == whole_) {
      std::memcpy(result.data, in.raw(), in.byte_size());
    } else {
      CopyTensorSlice(logical_.data_type, part_, in.raw(), part_, result.data, whole_, false);
    }
  }

 private:
  std::string op_name_;
  BlobDesc logical_;
  TensorSlice part_;
  TensorSlice whole_;
  bool writes_;
  std::string result_name_ = op_name_;
};

// Watch ops are placed on one device, with the whole blob; a mirrored one runs on each device
// of its blob, device i reporting to handler `handler_id + i`.
class WatchKernel final : public Kernel {
 public:
  explicit WatchKernel(const KernelInitContext& ctx)
      : handler_id_(ctx.Attr<int64_t>("handler_id") +
                    (ctx.conf().mirrored() ? ctx.parallel_context().parallel_id() : 0)) {}
  void Forward(KernelContext& ctx) override {
    ctx.watch_handler()(handler_id_, ctx.piece_id(), CopyToHost(ctx.Input("in")));
  }

 private:
  int64_t handler_id_;
};

#define REGISTER_INTERFACE_KERNELS(data_type)                     \
  REGISTER_KERNEL("variable", "cpu", data_type, VariableKernel); \
  REGISTER_KERNEL("input", "cpu", data_type, InputKernel);       \
  REGISTER_KERNEL("return", "cpu", data_type, ReturnKernel);     \
  REGISTER_KERNEL("watch", "cpu", data_type, WatchKernel)

REGISTER_INTERFACE_KERNELS(kFloat);
REGISTER_INTERFACE_KERNELS(kDouble);
REGISTER_INTERFACE_KERNELS(kInt8);
REGISTER_INTERFACE_KERNELS(kInt32);
REGISTER_INTERFACE_KERNELS(kInt64);
REGISTER_INTERFACE_KERNELS(kUInt8);
// float16 blobs are fed, returned and watched as bytes; variables stay float32/float64.
REGISTER_KERNEL("input", "cpu", kFloat16, InputKernel);
REGISTER_KERNEL("return", "cpu", kFloat16, ReturnKernel);
REGISTER_KERNEL("watch", "cpu", kFloat16, WatchKernel);

}  // namespace
}  // namespace oneflow
