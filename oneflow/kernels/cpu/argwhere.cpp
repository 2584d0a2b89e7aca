// CPU argwhere (oneflow/ops/argwhere.cpp): one pass over the input in row-major order, writing
// the coordinates of each non-zero element; the rows after the last one are zeroed. A dynamic
// `out` gets the shape of the rows found.

#include <cstring>

#include "oneflow/framework/kernel_registry.h"

namespace oneflow {

namespace {

template <typename T>
class ArgwhereKernel final : public Kernel {
 public:
  explicit ArgwhereKernel(const KernelInitContext& ctx)
      : dims_(ctx.Desc("input").shape.dims()),
        index_type_(ctx.Desc("out").data_type),
        dynamic_(ctx.Desc("out").is_dynamic) {}

  void Forward(KernelContext& ctx) override {
    if (index_type_ == kInt32) {
      Run<int32_t>(ctx);
    } else {
      Run<int64_t>(ctx);
    }
  }

 private:
  template <typename I>
  void Run(KernelContext& ctx) {
    const Blob& input = ctx.Input("input");
    const T* x = input.data<T>();
    const int64_t count = input.elem_count();
    const int64_t rank = static_cast<int64_t>(dims_.size());
    I* out = ctx.Output("out").mut_data<I>();
    std::vector<int64_t> coordinate(rank, 0);
    int64_t found = 0;
    for (int64_t i = 0; i < count; ++i) {
      if (x[i] != T(0)) {
        for (int64_t axis = 0; axis < rank; ++axis) {
          out[found * rank + axis] = static_cast<I>(coordinate[axis]);
        }
        ++found;
      }
      for (int64_t axis = rank - 1; axis >= 0; --axis) {  // next coordinate, row-major
        if (++coordinate[axis] < dims_[axis]) { break; }
        coordinate[axis] = 0;
      }
    }
    std::memset(out + found * rank, 0, (count - found) * rank * sizeof(I));
    ctx.Output("size").mut_data<int64_t>()[0] = found;
    if (dynamic_) { ctx.Output("out").set_shape(Shape({found, rank})); }
  }

  std::vector<int64_t> dims_;
  DataType index_type_;
  bool dynamic_;  // `out` has the valid rows' shape (on one device)
};


}  // namespace

REGISTER_KERNEL("argwhere", "cpu", kFloat, ArgwhereKernel<float>);
REGISTER_KERNEL("argwhere", "cpu", kDouble, ArgwhereKernel<double>);
REGISTER_KERNEL("argwhere", "cpu", kInt8, ArgwhereKernel<int8_t>);
REGISTER_KERNEL("argwhere", "cpu", kInt32, ArgwhereKernel<int32_t>);
REGISTER_KERNEL("argwhere", "cpu", kInt64, ArgwhereKernel<int64_t>);
REGISTER_KERNEL("argwhere", "cpu", kUInt8, ArgwhereKernel<uint8_t>);

}  // namespace oneflow
