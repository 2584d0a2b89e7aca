// CPU matmul (row-major GEMM): float32 through oneDNN's sgemm (JIT kernels for the machine's
// vector units), float64 through OpenBLAS. One GEMM for 2-D operands and for broadcast matmul
// (a's leading dims flattened into rows), one GEMM per batch index for batch matmul.

#include <cblas.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>

#include "oneflow/common/error.h"
#include "oneflow/framework/kernel_registry.h"

namespace oneflow {

namespace {

void Gemm(CBLAS_TRANSPOSE transpose_a, CBLAS_TRANSPOSE transpose_b, int m, int n, int k,
          double alpha, const float* a, int lda, const float* b, int ldb, float* out) {
  const dnnl_status_t status =
      dnnl_sgemm(transpose_a == CblasTrans ? 'T' : 'N', transpose_b == CblasTrans ? 'T' : 'N', m,
                 n, k, static_cast<float>(alpha), a, lda, b, ldb, 0.0f, out, n);
  if (status != dnnl_success) {
    throw Error(ErrorKind::kRuntime) << "matmul: oneDNN sgemm failed with status " << status
                                     << " (m=" << m << ", n=" << n << ", k=" << k << ")";
  }
}

void Gemm(CBLAS_TRANSPOSE transpose_a, CBLAS_TRANSPOSE transpose_b, int m, int n, int k,
          double alpha, const double* a, int lda, const double* b, int ldb, double* out) {
  cblas_dgemm(CblasRowMajor, transpose_a, transpose_b, m, n, k, alpha, a, lda, b, ldb, 0.0, out, n);
}

template <typename T>
class MatmulKernel final : public Kernel {
 public:
  explicit MatmulKernel(const KernelInitContext& ctx) {
    bool transpose_a = ctx.Attr<bool>("transpose_a");
    bool transpose_b = ctx.Attr<bool>("transpose_b");
    alpha_ = ctx.Attr<double>("alpha");
    const Shape& a = ctx.Desc("a").shape;
    const Shape& b = ctx.Desc("b").shape;
    int64_t a_axes = a.num_axes();
    int64_t b_axes = b.num_axes();
    // Each operand as `batch_count_` stored matrices of (rows, columns).
    int64_t a_rows = a.At(a_axes - 2);
    int64_t a_columns = a.At(a_axes - 1);
    int64_t b_rows = b.At(b_axes - 2);
    int64_t b_columns = b.At(b_axes - 1);
    if (b_axes == 2) {
      // 2-D or broadcast matmul: a's leading dims are more rows of one matrix.
      batch_count_ = 1;
      a_rows = a.Count(0, a_axes - 1);
    } else {
      batch_count_ = a.Count(0, a_axes - 2);
    }
    transpose_a_ = transpose_a ? CblasTrans : CblasNoTrans;
    transpose_b_ = transpose_b ? CblasTrans : CblasNoTrans;
    m_ = static_cast<int>(transpose_a ? a_columns : a_rows);
    k_ = static_cast<int>(transpose_a ? a_rows : a_columns);
    n_ = static_cast<int>(transpose_b ? b_rows : b_columns);
    lda_ = static_cast<int>(a_columns);
    ldb_ = static_cast<int>(b_columns);
    a_stride_ = a_rows * a_columns;
    b_stride_ = b_rows * b_columns;
    out_stride_ = static_cast<int64_t>(m_) * n_;
  }

  void Forward(KernelContext& ctx) override {
    T* out = ctx.Output("out").mut_data<T>();
    if (k_ == 0) {
      // BLAS leaves C untouched when k is 0; the product of empty matrices is zeros.
      std::fill(out, out + batch_count_ * out_stride_, T(0));
      return;
    }
    if (m_ == 0 || n_ == 0) { return; }
    const T* a = ctx.Input("a").data<T>();
    const T* b = ctx.Input("b").data<T>();
    for (int64_t batch = 0; batch < batch_count_; ++batch) {
      Gemm(transpose_a_, transpose_b_, m_, n_, k_, alpha_, a + batch * a_stride_, lda_,
           b + batch * b_stride_, ldb_, out + batch * out_stride_);
    }
  }

 private:
  CBLAS_TRANSPOSE transpose_a_;
  CBLAS_TRANSPOSE transpose_b_;
  int m_, n_, k_, lda_, ldb_;
  int64_t batch_count_;
  int64_t a_stride_, b_stride_, out_stride_;  // elements between consecutive batch matrices
  double alpha_;
};

}  // namespace

REGISTER_CPU_FLOATING_KERNELS("matmul", MatmulKernel);

}  // namespace oneflow
