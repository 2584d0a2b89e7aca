// GPU matmul through cuBLAS: 2-D, broadcast (a's leading dims are more rows of
// one matrix) and batch matmul, as the CPU kernel (cpu/matmul.cpp). cuBLAS is
// column-major; a row-major out = op(a) op(b) is the column-major out^T =
// op(b)^T op(a)^T, so b is passed first and the dimensions swap (m <-> n).
// Every dtype runs cublasGemmStridedBatchedEx: float32 and float16 with
// CUBLAS_COMPUTE_32F (half inputs, float accumulation), float64 with
// CUBLAS_COMPUTE_64F; float32 with CUBLAS_COMPUTE_32F_FAST_TF32 where the device's GpuOptions
// allow TF32.

#include <cublas_v2.h>
#include <cuda_fp16.h>

#include <limits>
#include <type_traits>

#include "oneflow/common/error.h"
#include "oneflow/device/cuda_check.h"
#include "oneflow/device/cuda_device_context.h"
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/cuda/elementwise.cuh"

namespace oneflow {
namespace cuda {

namespace {

template <typename T>
struct CublasTypes;
template <>
struct CublasTypes<float> {
  static constexpr cudaDataType_t kData = CUDA_R_32F;
  static constexpr cublasComputeType_t kCompute = CUBLAS_COMPUTE_32F;
  using Scalar = float;
};
template <>
struct CublasTypes<double> {
  static constexpr cudaDataType_t kData = CUDA_R_64F;
  static constexpr cublasComputeType_t kCompute = CUBLAS_COMPUTE_64F;
  using Scalar = double;
};
template <>
struct CublasTypes<half> {
  static constexpr cudaDataType_t kData = CUDA_R_16F;
  static constexpr cublasComputeType_t kCompute = CUBLAS_COMPUTE_32F;
  using Scalar = float;
};

int ToInt(int64_t value, const char* what) {
  OF_CHECK(value >= 0 && value <= std::numeric_limits<int>::max())
      << "GPU matmul: " << what << " = " << value << " does not fit cuBLAS's int";
  return static_cast<int>(value);
}

template <typename T>
class MatmulGpuKernel final : public Kernel {
 public:
  explicit MatmulGpuKernel(const KernelInitContext& ctx) {
    const bool transpose_a = ctx.Attr<bool>("transpose_a");
    const bool transpose_b = ctx.Attr<bool>("transpose_b");
    alpha_ = ctx.Attr<double>("alpha");
    const Shape& a = ctx.Desc("a").shape;
    const Shape& b = ctx.Desc("b").shape;
    const int64_t a_axes = a.num_axes();
    const int64_t b_axes = b.num_axes();
    int64_t a_rows = a.At(a_axes - 2);
    const int64_t a_columns = a.At(a_axes - 1);
    const int64_t b_rows = b.At(b_axes - 2);
    const int64_t b_columns = b.At(b_axes - 1);
    if (b_axes == 2) {
      batch_count_ = 1;
      a_rows = a.Count(0, a_axes - 1);
    } else {
      batch_count_ = a.Count(0, a_axes - 2);
    }
    transpose_a_ = transpose_a;
    transpose_b_ = transpose_b;
    m_ = transpose_a ? a_columns : a_rows;
    k_ = transpose_a ? a_rows : a_columns;
    n_ = transpose_b ? b_rows : b_columns;
    lda_ = a_columns;
    ldb_ = b_columns;
    a_stride_ = a_rows * a_columns;
    b_stride_ = b_rows * b_columns;
    out_stride_ = m_ * n_;
  }

  void Forward(KernelContext& ctx) override {
    CudaDeviceContext& device = ctx.cuda_device();
    T* out = ctx.Output("out").mut_data<T>();
    if (batch_count_ == 0 || m_ == 0 || n_ == 0) { return; }
    if (k_ == 0) {
      // The product of empty matrices is zeros (cuBLAS would leave out
      // untouched).
      OF_CUDA_CHECK(
          cudaMemsetAsync(out, 0, sizeof(T) * batch_count_ * out_stride_, device.cuda_stream()));
      return;
    }
    using Types = CublasTypes<T>;
    const typename Types::Scalar alpha = static_cast<typename Types::Scalar>(alpha_);
    const typename Types::Scalar beta = 0;
    // Column-major: out^T (n x m) = op(b)^T (n x k) * op(a)^T (k x m).
    OF_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
        device.cublas_handle(), transpose_b_ ? CUBLAS_OP_T : CUBLAS_OP_N,
        transpose_a_ ? CUBLAS_OP_T : CUBLAS_OP_N, ToInt(n_, "n"), ToInt(m_, "m"), ToInt(k_, "k"),
        &alpha, ctx.Input("b").data<T>(), Types::kData, ToInt(ldb_, "ldb"), b_stride_,
        ctx.Input("a").data<T>(), Types::kData, ToInt(lda_, "lda"), a_stride_, &beta, out,
        Types::kData, ToInt(n_, "ldc"), out_stride_, ToInt(batch_count_, "batch count"),
        std::is_same<T, float>::value && device.options().allow_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                                      : Types::kCompute,
        CUBLAS_GEMM_DEFAULT));
  }

 private:
  bool transpose_a_ = false, transpose_b_ = false;
  int64_t m_ = 0, n_ = 0, k_ = 0, lda_ = 0, ldb_ = 0;
  int64_t batch_count_ = 1;
  int64_t a_stride_ = 0, b_stride_ = 0, out_stride_ = 0;
  double alpha_ = 1.0;
};

}  // namespace

OF_REGISTER_GPU_FLOATING_KERNELS("matmul", MatmulGpuKernel);

}  // namespace cuda
}  // namespace oneflow
