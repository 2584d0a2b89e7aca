// CPU matmul through OpenBLAS (row-major GEMM), float32 and float64.

#include <cblas.h>

#include "oneflow/framework/kernel_registry.h"

namespace oneflow {

namespace {

void Gemm(CBLAS_TRANSPOSE transpose_a, CBLAS_TRANSPOSE transpose_b, int m, int n, int k,
          double alpha, const float* a, int lda, const float* b, int ldb, float* out) {
  cblas_sgemm(CblasRowMajor, transpose_a, transpose_b, m, n, k, static_cast<float>(alpha), a, lda,
              b, ldb, 0.0f, out, n);
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
    transpose_a_ = transpose_a ? CblasTrans : CblasNoTrans;
    transpose_b_ = transpose_b ? CblasTrans : CblasNoTrans;
    m_ = static_cast<int>(transpose_a ? a.At(1) : a.At(0));
    k_ = static_cast<int>(transpose_a ? a.At(0) : a.At(1));
    n_ = static_cast<int>(transpose_b ? b.At(0) : b.At(1));
    lda_ = static_cast<int>(a.At(1));
    ldb_ = static_cast<int>(b.At(1));
  }

  void Forward(KernelContext& ctx) override {
    T* out = ctx.Output("out").mut_data<T>();
    if (k_ == 0) {
      // BLAS leaves C untouched when k is 0; the product of empty matrices is zeros.
      for (int64_t i = 0; i < static_cast<int64_t>(m_) * n_; ++i) { out[i] = T(0); }
      return;
    }
    if (m_ == 0 || n_ == 0) { return; }
    Gemm(transpose_a_, transpose_b_, m_, n_, k_, alpha_, ctx.Input("a").data<T>(), lda_,
         ctx.Input("b").data<T>(), ldb_, out);
  }

 private:
  CBLAS_TRANSPOSE transpose_a_;
  CBLAS_TRANSPOSE transpose_b_;
  int m_, n_, k_, lda_, ldb_;
  double alpha_;
};

}  // namespace

REGISTER_CPU_FLOATING_KERNELS("matmul", MatmulKernel);

}  // namespace oneflow
