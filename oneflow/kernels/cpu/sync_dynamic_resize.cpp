// CPU sync_dynamic_resize (oneflow/ops/sync_dynamic_resize.cpp): reads the size, checks it
// against the bound, copies that many entries along the axis and gives `out` their shape.

#include <cstring>

#include "oneflow/framework/kernel_registry.h"

namespace oneflow {

namespace {

class SyncDynamicResizeKernel final : public Kernel {
 public:
  explicit SyncDynamicResizeKernel(const KernelInitContext& ctx)
      : axis_(ctx.Attr<int64_t>("axis")), size_type_(ctx.Desc("size").data_type) {}

  void Forward(KernelContext& ctx) override {
    const Blob& in = ctx.Input("in");
    const Blob& size_blob = ctx.Input("size");
    const int64_t size = size_type_ == kInt32 ? size_blob.data<int32_t>()[0]
                                              : size_blob.data<int64_t>()[0];
    std::vector<int64_t> dims = in.shape().dims();
    if (size < 0 || size > dims[axis_]) {
      throw Error(ErrorKind::kValue)
          << "sync_dynamic_resize: size " << size << " is outside [0, " << dims[axis_]
          << "], the size of axis " << axis_ << " of in " << in.shape().ToString();
    }
    int64_t outer = 1;
    for (int64_t i = 0; i < axis_; ++i) { outer *= dims[i]; }
    const int64_t row_bytes = in.shape().elem_count() == 0
                                  ? 0
                                  : in.byte_size() / (outer * dims[axis_]);
    Blob& out = ctx.Output("out");
    const char* src = static_cast<const char*>(in.raw());
    char* dst = static_cast<char*>(out.mut_raw());
    for (int64_t block = 0; block < outer && size > 0; ++block) {
      std::memmove(dst + block * size * row_bytes, src + block * dims[axis_] * row_bytes,
                   size * row_bytes);
    }
    dims[axis_] = size;
    out.set_shape(Shape(dims));
  }

 private:
  int64_t axis_;
  DataType size_type_;
};

}  // namespace

REGISTER_KERNEL("sync_dynamic_resize", "cpu", kFloat, SyncDynamicResizeKernel);
REGISTER_KERNEL("sync_dynamic_resize", "cpu", kDouble, SyncDynamicResizeKernel);
REGISTER_KERNEL("sync_dynamic_resize", "cpu", kInt8, SyncDynamicResizeKernel);
REGISTER_KERNEL("sync_dynamic_resize", "cpu", kInt32, SyncDynamicResizeKernel);
REGISTER_KERNEL("sync_dynamic_resize", "cpu", kInt64, SyncDynamicResizeKernel);
REGISTER_KERNEL("sync_dynamic_resize", "cpu", kUInt8, SyncDynamicResizeKernel);

}  // namespace oneflow
