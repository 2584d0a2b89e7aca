// CPU tril and fused_scale_tril (oneflow/ops/tril.cpp). The input is a batch of rows x columns
// matrices; each row keeps a prefix (columns up to row + diagonal), scaled for
// fused_scale_tril, and fills the rest. Rows split over the compute threads; the prefix loop is
// compiled per vector ISA. A device holding part of a split row or column axis offsets its
// indices by the first row / column of its part, so every split gives the one-device numbers.

#include <algorithm>
#include <cstdint>
#include <string>

#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/cpu/cpu_dispatch.h"
#include "oneflow/kernels/cpu/parallel_for.h"
#include "oneflow/sbp/tensor_slice.h"

namespace oneflow {

namespace {

// The first index this device holds on axis `axis` of "in" (0 unless split there).
int64_t PartBegin(const KernelInitContext& ctx, int64_t axis) {
  const SbpParallel sbp = ctx.Sbp("in");
  if (!sbp.has_split_parallel() || sbp.split_parallel().axis() != axis) { return 0; }
  return SliceOfPart(ctx.LogicalDesc("in").shape, sbp, ctx.parallel_context().parallel_id(),
                     ctx.parallel_context().parallel_num())
      .begin[axis];
}

template <typename T>
class TrilKernel final : public Kernel {
 public:
  explicit TrilKernel(const KernelInitContext& ctx) {
    const Shape& shape = ctx.Desc("in").shape;
    const int64_t axes = shape.num_axes();
    rows_ = shape.At(axes - 2);
    columns_ = shape.At(axes - 1);
    matrices_ = rows_ * columns_ == 0 ? 0 : shape.elem_count() / (rows_ * columns_);
    const Shape& logical = ctx.LogicalDesc("in").shape;
    // Beyond +-(rows + columns) every diagonal keeps all or nothing; clamping avoids overflow.
    const int64_t bound = logical.At(axes - 2) + logical.At(axes - 1);
    diagonal_ = std::clamp<int64_t>(ctx.Attr<int64_t>("diagonal"), -bound, bound);
    first_row_ = PartBegin(ctx, axes - 2);
    first_column_ = PartBegin(ctx, axes - 1);
    fill_ = static_cast<T>(ctx.Attr<double>("fill_value"));
    scale_ = ctx.conf().attr().count("scale") ? static_cast<T>(ctx.Attr<double>("scale")) : T(1);
  }

  void Forward(KernelContext& ctx) override {
    const T* in = ctx.Input("in").data<T>();
    T* out = ctx.Output("out").mut_data<T>();
    const int64_t rows = rows_, columns = columns_, first_row = first_row_;
    const int64_t shift = diagonal_ - first_column_ + 1;  // kept columns: row + shift
    const T fill = fill_, scale = scale_;
    const bool scaled = scale_ != T(1);
    ParallelForRows(ctx, matrices_ * rows, columns,
                    PerIsa([=](int64_t begin, int64_t end) ONEFLOW_PER_ISA_BODY {
                      for (int64_t r = begin; r < end; ++r) {
                        const int64_t row = r % rows + first_row;
                        const int64_t keep = std::clamp<int64_t>(row + shift, 0, columns);
                        const T* __restrict__ source = in + r * columns;
                        T* __restrict__ target = out + r * columns;
                        if (scaled) {
                          for (int64_t c = 0; c < keep; ++c) { target[c] = source[c] * scale; }
                        } else {
                          for (int64_t c = 0; c < keep; ++c) { target[c] = source[c]; }
                        }
                        for (int64_t c = keep; c < columns; ++c) { target[c] = fill; }
                      }
                    }));
  }

 private:
  int64_t rows_ = 0, columns_ = 0, matrices_ = 0;
  int64_t diagonal_ = 0, first_row_ = 0, first_column_ = 0;
  T fill_{}, scale_{};
};

}  // namespace

REGISTER_CPU_ALL_TYPE_KERNELS("tril", TrilKernel);
REGISTER_CPU_ALL_TYPE_KERNELS("fused_scale_tril", TrilKernel);

}  // namespace oneflow
