// CPU unique_with_counts (semantics in oneflow/ops/unique.cpp): one pass with a hash map from
// value to its position in y. Floating values compare by value (-0.0 == 0.0; each NaN is new).

#include <algorithm>
#include <unordered_map>

#include "oneflow/common/data_type.h"
#include "oneflow/framework/kernel_registry.h"

namespace oneflow {

namespace {

template <typename T>
class UniqueWithCountsKernel final : public Kernel {
 public:
  explicit UniqueWithCountsKernel(const KernelInitContext&) {}

  void Forward(KernelContext& ctx) override {
    if (ctx.Output("idx").data_type() == kInt32) {
      Unique<int32_t>(ctx);
    } else {
      Unique<int64_t>(ctx);
    }
  }

 private:
  template <typename I>
  void Unique(KernelContext& ctx) {
    const Blob& x_blob = ctx.Input("x");
    const int64_t n = x_blob.elem_count();
    const T* x = x_blob.data<T>();
    T* y = ctx.Output("y").mut_data<T>();
    I* idx = ctx.Output("idx").mut_data<I>();
    I* count = ctx.Output("count").mut_data<I>();
    std::fill(y, y + n, T(0));
    std::fill(count, count + n, I(0));
    std::unordered_map<T, I> position;
    position.reserve(static_cast<size_t>(n));
    I unique = 0;
    for (int64_t i = 0; i < n; ++i) {
      const auto [it, inserted] = position.emplace(x[i], unique);
      if (inserted) { y[unique++] = x[i]; }
      idx[i] = it->second;
      ++count[it->second];
    }
    ctx.Output("num_unique").mut_data<I>()[0] = unique;
  }
};

}  // namespace

REGISTER_CPU_ALL_TYPE_KERNELS("unique_with_counts", UniqueWithCountsKernel);

}  // namespace oneflow
