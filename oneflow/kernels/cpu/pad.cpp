// CPU pad, reflection_pad2d, replication_pad2d and their gradients.
// pad writes each output row once: constant, then x's row by memcpy, then constant. The 2-d pads work one (n, c) plane at a time, planes split over the compute
// threads: each output row copies the source row's middle with memcpy and mirrors (or
// repeats) its ends; the gradients add each padded element onto its source in the same plane.


#include "oneflow/framework/index_functions.h"
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/framework/shape_functions.h"
#include "oneflow/kernels/cpu/copy_row.h"
#include "oneflow/kernels/cpu/parallel_for.h"
#include "oneflow/kernels/cpu/strided_copy.h"

namespace oneflow {

namespace {

// One pass over y's rows (all axes but the last): a row outside x on some outer axis is all
// constant; any other row is constant before, one memcpy of x's row, constant after. Every
// element of y is written once.
template <typename T>
class PadKernel final : public Kernel {
 public:
  explicit PadKernel(const KernelInitContext& ctx) {
    const Shape& x = ctx.Desc("x").shape;
    const Shape& y = ctx.Desc("y").shape;
    before_ = Int64ListAttr(ctx.conf(), "padding_before");
    value_ = IsFloatingDataType(DataTypeOf<T>::value)
                 ? static_cast<T>(ctx.Attr<double>("floating_constant_value"))
                 : static_cast<T>(ctx.Attr<int64_t>("integral_constant_value"));
    if (y.num_axes() == 0) {  // a 0-d blob: nothing to pad
      before_ = {0};
      x_dims_ = {1};
      y_dims_ = {1};
    } else {
      x_dims_ = x.dims();
      y_dims_ = y.dims();
    }
    x_strides_ = ContiguousStrides(x_dims_);
  }

  void Forward(KernelContext& ctx) override {
    const T* x = ctx.Input("x").data<T>();
    T* y = ctx.Output("y").mut_data<T>();
    const int64_t outer_axes = static_cast<int64_t>(y_dims_.size()) - 1;
    const int64_t y_row = y_dims_.back();
    const int64_t x_row = x_dims_.back();
    const int64_t left = before_.back();
    int64_t rows = 1;
    for (int64_t axis = 0; axis < outer_axes; ++axis) { rows *= y_dims_[axis]; }
    if (rows * y_row == 0) { return; }
    const T value = value_;
    ParallelForRows(ctx, rows, y_row, [=, this](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        T* target = y + row * y_row;
        // Where the row lies in x, if it does.
        int64_t rest = row;
        int64_t x_offset = 0;
        bool inside = x_row > 0;
        for (int64_t axis = outer_axes - 1; axis >= 0; --axis) {
          const int64_t index = rest % y_dims_[axis] - before_[axis];
          rest /= y_dims_[axis];
          if (index < 0 || index >= x_dims_[axis]) { inside = false; }
          x_offset += index * x_strides_[axis];
        }
        if (!inside) {
          std::fill(target, target + y_row, value);
          continue;
        }
        std::fill(target, target + left, value);
        CopyRow(target + left, x + x_offset, x_row * sizeof(T));
        std::fill(target + left + x_row, target + y_row, value);
      }
    });
  }

 private:
  T value_;
  std::vector<int64_t> before_;
  std::vector<int64_t> x_dims_;
  std::vector<int64_t> y_dims_;
  std::vector<int64_t> x_strides_;
};

// Source index in [0, size) of padded position `index` (may be < 0 or >= size).
struct Reflect {
  static int64_t Source(int64_t index, int64_t size) {
    if (index < 0) { return -index; }
    if (index >= size) { return 2 * (size - 1) - index; }
    return index;
  }
};
struct Replicate {
  static int64_t Source(int64_t index, int64_t size) {
    return index < 0 ? 0 : (index >= size ? size - 1 : index);
  }
};

struct Pad2dGeometry {
  explicit Pad2dGeometry(const KernelInitContext& ctx, const std::string& x_argument) {
    const Shape& x = ctx.Desc(x_argument).shape;
    std::vector<int64_t> padding = Int64ListAttr(ctx.conf(), "padding");
    planes = x.At(0) * x.At(1);
    height = x.At(2);
    width = x.At(3);
    left = padding[0];
    top = padding[2];
    out_height = height + padding[2] + padding[3];
    out_width = width + padding[0] + padding[1];
  }
  int64_t planes, height, width, left, top, out_height, out_width;
};

template <typename Mode, typename T>
class Pad2dKernel final : public Kernel {
 public:
  explicit Pad2dKernel(const KernelInitContext& ctx) : geometry_(ctx, "x") {}

  void Forward(KernelContext& ctx) override {
    const Pad2dGeometry g = geometry_;
    const T* x = ctx.Input("x").data<T>();
    T* y = ctx.Output("y").mut_data<T>();
    ParallelForRows(ctx, g.planes, g.out_height * g.out_width, [=](int64_t begin, int64_t end) {
      for (int64_t plane = begin; plane < end; ++plane) {
        const T* in = x + plane * g.height * g.width;
        T* out = y + plane * g.out_height * g.out_width;
        for (int64_t row = 0; row < g.out_height; ++row) {
          const T* source = in + Mode::Source(row - g.top, g.height) * g.width;
          T* target = out + row * g.out_width;
          for (int64_t col = 0; col < g.left; ++col) {
            target[col] = source[Mode::Source(col - g.left, g.width)];
          }
          CopyRow(target + g.left, source, g.width * sizeof(T));
          for (int64_t col = g.left + g.width; col < g.out_width; ++col) {
            target[col] = source[Mode::Source(col - g.left, g.width)];
          }
        }
      }
    });
  }

 private:
  Pad2dGeometry geometry_;
};

template <typename Mode, typename T>
class Pad2dGradKernel final : public Kernel {
 public:
  explicit Pad2dGradKernel(const KernelInitContext& ctx) : geometry_(ctx, "like") {}

  void Forward(KernelContext& ctx) override {
    const Pad2dGeometry g = geometry_;
    const T* dy = ctx.Input("dy").data<T>();
    T* dx = ctx.Output("dx").mut_data<T>();
    ParallelForRows(ctx, g.planes, g.out_height * g.out_width, [=](int64_t begin, int64_t end) {
      for (int64_t plane = begin; plane < end; ++plane) {
        const T* in = dy + plane * g.out_height * g.out_width;
        T* out = dx + plane * g.height * g.width;
        std::fill(out, out + g.height * g.width, T(0));
        for (int64_t row = 0; row < g.out_height; ++row) {
          T* target = out + Mode::Source(row - g.top, g.height) * g.width;
          const T* source = in + row * g.out_width;
          for (int64_t col = 0; col < g.out_width; ++col) {
            target[Mode::Source(col - g.left, g.width)] += source[col];
          }
        }
      }
    });
  }

 private:
  Pad2dGeometry geometry_;
};

template <typename T>
using ReflectionPad2dKernel = Pad2dKernel<Reflect, T>;
template <typename T>
using ReflectionPad2dGradKernel = Pad2dGradKernel<Reflect, T>;
template <typename T>
using ReplicationPad2dKernel = Pad2dKernel<Replicate, T>;
template <typename T>
using ReplicationPad2dGradKernel = Pad2dGradKernel<Replicate, T>;

}  // namespace

REGISTER_CPU_ALL_TYPE_KERNELS("pad", PadKernel);
REGISTER_CPU_FLOATING_KERNELS("reflection_pad2d", ReflectionPad2dKernel);
REGISTER_CPU_FLOATING_KERNELS("reflection_pad2d_grad", ReflectionPad2dGradKernel);
REGISTER_CPU_FLOATING_KERNELS("replication_pad2d", ReplicationPad2dKernel);
REGISTER_CPU_FLOATING_KERNELS("replication_pad2d_grad", ReplicationPad2dGradKernel);

}  // namespace oneflow
