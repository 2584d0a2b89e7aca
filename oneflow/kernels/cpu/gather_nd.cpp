// CPU gather_nd and scatter_nd(_like). An index tuple (i_0, ..., i_{K-1}) addresses one
// contiguous row of prod(params[K:]) elements; gather_nd copies rows (memcpy, split over the
// compute threads), scatter_nd zeroes the output and adds rows. Scattered rows may collide, so
// scatter_nd splits the work over blocks of columns, never over rows. Every index tuple is
// validated first, and a bad one raises a ValueError naming it. tensor_scatter_nd_update copies
// params and then overwrites the addressed rows in index order (a later duplicate wins).

#include <algorithm>
#include <cstring>
#include <sstream>

#include "oneflow/common/error.h"
#include "oneflow/framework/index_functions.h"
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/cpu/copy_row.h"
#include "oneflow/kernels/cpu/parallel_for.h"

namespace oneflow {

namespace {

// Row offsets (in rows of `inner` elements) of each index tuple into `shape`; ValueError for a
// tuple outside the shape.
struct NdIndexer {
  NdIndexer() = default;
  NdIndexer(const std::string& op, const Shape& shape, const Shape& indices) : op_name(op) {
    depth = indices.At(indices.num_axes() - 1);
    rows = indices.Count(0, indices.num_axes() - 1);
    inner = shape.Count(depth, shape.num_axes());
    dims.assign(shape.dims().begin(), shape.dims().begin() + depth);
  }

  void Compute(const Blob& indices, std::vector<int64_t>* offsets) const {
    offsets->resize(rows);
    for (int64_t row = 0; row < rows; ++row) {
      int64_t offset = 0;
      for (int64_t k = 0; k < depth; ++k) {
        const int64_t value = IndexAt(indices.data_type(), indices.raw(), row * depth + k);
        if (value < 0 || value >= dims[k]) {
          std::ostringstream tuple;
          for (int64_t j = 0; j < depth; ++j) {
            tuple << (j ? ", " : "") << IndexAt(indices.data_type(), indices.raw(), row * depth + j);
          }
          throw Error(ErrorKind::kValue)
              << op_name << ": index tuple (" << tuple.str() << ") of row " << row
              << " is out of range: entry " << k << " must be in [0, " << dims[k] << ")";
        }
        offset = offset * dims[k] + value;
      }
      (*offsets)[row] = offset;
    }
  }

  std::string op_name;
  int64_t depth = 0;
  int64_t rows = 0;
  int64_t inner = 1;
  std::vector<int64_t> dims;  // the first `depth` dims of the indexed shape
};

template <typename T>
class GatherNdKernel final : public Kernel {
 public:
  explicit GatherNdKernel(const KernelInitContext& ctx)
      : indexer_("gather_nd (op '" + ctx.conf().name() + "')", ctx.Desc("params").shape,
                 ctx.Desc("indices").shape) {}

  void Forward(KernelContext& ctx) override {
    indexer_.Compute(ctx.Input("indices"), &offsets_);
    const T* params = ctx.Input("params").data<T>();
    T* out = ctx.Output("out").mut_data<T>();
    const int64_t inner = indexer_.inner;
    const int64_t* offsets = offsets_.data();
    ParallelForRows(ctx, indexer_.rows, inner, [=](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        CopyRow(out + row * inner, params + offsets[row] * inner, inner * sizeof(T));
      }
    });
  }

 private:
  NdIndexer indexer_;
  std::vector<int64_t> offsets_;
};

// Columns per unit of the scatter.
constexpr int64_t kScatterColumnBlock = 256;

// Calls write(target, source, width) for each update row (in index order) and block of columns:
// target in `out` at the row's offset, source in `updates`. Units are column blocks, never rows,
// so rows with equal indices are handled in order by one thread.
template <typename T, typename Write>
void ScatterRows(KernelContext& ctx, const NdIndexer& indexer, const int64_t* offsets,
                 const T* updates, T* out, Write write) {
  const int64_t inner = indexer.inner;
  const int64_t rows = indexer.rows;
  const int64_t blocks = (inner + kScatterColumnBlock - 1) / kScatterColumnBlock;
  ParallelForRows(ctx, blocks, rows * kScatterColumnBlock, [=](int64_t begin, int64_t end) {
    for (int64_t block = begin; block < end; ++block) {
      const int64_t column = block * kScatterColumnBlock;
      const int64_t width = std::min(kScatterColumnBlock, inner - column);
      for (int64_t row = 0; row < rows; ++row) {
        write(out + offsets[row] * inner + column, updates + row * inner + column, width);
      }
    }
  });
}

template <typename T>
class ScatterNdKernel final : public Kernel {
 public:
  explicit ScatterNdKernel(const KernelInitContext& ctx)
      : indexer_(ctx.conf().op_type() + " (op '" + ctx.conf().name() + "')",
                 ctx.Desc("out").shape, ctx.Desc("indices").shape),
        out_count_(ctx.Desc("out").shape.elem_count()) {}

  void Forward(KernelContext& ctx) override {
    indexer_.Compute(ctx.Input("indices"), &offsets_);
    const T* updates = ctx.Input("updates").data<T>();
    T* out = ctx.Output("out").mut_data<T>();
    ParallelForElements(ctx, out_count_, kElementwiseGrain, [=](int64_t begin, int64_t end) {
      std::fill(out + begin, out + end, T(0));
    });
    ScatterRows(ctx, indexer_, offsets_.data(), updates, out,
                [](T* target, const T* source, int64_t width) {
                  for (int64_t i = 0; i < width; ++i) { target[i] += source[i]; }
                });
  }

 private:
  NdIndexer indexer_;
  int64_t out_count_;
  std::vector<int64_t> offsets_;
};

template <typename T>
class TensorScatterNdUpdateKernel final : public Kernel {
 public:
  explicit TensorScatterNdUpdateKernel(const KernelInitContext& ctx)
      : indexer_("tensor_scatter_nd_update (op '" + ctx.conf().name() + "')",
                 ctx.Desc("params").shape, ctx.Desc("indices").shape),
        out_count_(ctx.Desc("out").shape.elem_count()) {}

  void Forward(KernelContext& ctx) override {
    indexer_.Compute(ctx.Input("indices"), &offsets_);
    const T* params = ctx.Input("params").data<T>();
    const T* updates = ctx.Input("updates").data<T>();
    T* out = ctx.Output("out").mut_data<T>();
    if (out != params) {
      ParallelForElements(ctx, out_count_, kElementwiseGrain, [=](int64_t begin, int64_t end) {
        std::memcpy(out + begin, params + begin, (end - begin) * sizeof(T));
      });
    }
    // Rows in index order (ScatterRows), so that a later duplicate wins.
    ScatterRows(ctx, indexer_, offsets_.data(), updates, out,
                [](T* target, const T* source, int64_t width) {
                  CopyRow(target, source, width * sizeof(T));
                });
  }

 private:
  NdIndexer indexer_;
  int64_t out_count_;
  std::vector<int64_t> offsets_;
};

}  // namespace

REGISTER_CPU_ALL_TYPE_KERNELS("gather_nd", GatherNdKernel);
REGISTER_CPU_ARITHMETIC_KERNELS("scatter_nd", ScatterNdKernel);
REGISTER_CPU_ARITHMETIC_KERNELS("scatter_nd_like", ScatterNdKernel);
REGISTER_CPU_ALL_TYPE_KERNELS("tensor_scatter_nd_update", TensorScatterNdUpdateKernel);

}  // namespace oneflow
