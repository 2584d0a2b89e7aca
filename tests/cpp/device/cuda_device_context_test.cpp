// CudaDeviceContext and CudaStream. Most tests need a GPU and skip without one; what can be
// checked without (errors before BindCurrentThread, a missing GPU) runs in every CUDA build.
#ifdef ONEFLOW_WITH_CUDA

#include "oneflow/device/cuda_device_context.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "oneflow/common/error.h"
#include "oneflow/device/cuda_info.h"
#include "oneflow/device/cuda_stream.h"
#include "oneflow/device/memory.h"
#include "oneflow/framework/blob.h"
#include "oneflow/kernels/cuda/index_check.h"

namespace oneflow {
namespace {

#define SKIP_WITHOUT_GPU() \
  if (GetCudaInfo().device_count == 0) { GTEST_SKIP() << "no GPU: " << GetCudaInfo().reason; }

// Counts the errors the poller reports; a test that expects none checks it is 0.
struct ErrorCounter {
  std::atomic<int64_t> count{0};
  std::function<void(std::exception_ptr)> Handler() {
    return [this](std::exception_ptr) { count.fetch_add(1); };
  }
};

MemoryCase Case(MemoryKind kind, int64_t device_id = 0) {
  MemoryCase memory_case;
  memory_case.set_kind(kind);
  memory_case.set_device_id(device_id);
  return memory_case;
}

TEST(CudaDeviceContextTest, UnboundContextFailsClearly) {
  CudaDeviceContext context(0, [](std::exception_ptr) {});
  EXPECT_EQ(context.device_tag(), "gpu");
  EXPECT_EQ(context.device_id(), 0);
  try {
    context.stream();
    FAIL() << "no error was thrown";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInternal);
    EXPECT_NE(e.message().find("before BindCurrentThread"), std::string::npos) << e.message();
  }
  EXPECT_THROW(context.cublas_handle(), Error);
  EXPECT_THROW(context.cudnn_handle(), Error);
  EXPECT_THROW(context.Workspace(16), Error);
}  // destroying a context that never touched the device is fine, with or without one

TEST(CudaDeviceContextTest, BindingAMissingGpuIsARuntimeError) {
  const int64_t missing = GetCudaInfo().device_count;
  CudaDeviceContext context(missing, [](std::exception_ptr) {});
  try {
    context.BindCurrentThread();
    FAIL() << "no error was thrown";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kRuntime);
    EXPECT_NE(e.message().find("cannot use gpu " + std::to_string(missing)), std::string::npos)
        << e.message();
  }
}

TEST(CudaDeviceContextTest, HandlesAreBoundToTheStream) {
  SKIP_WITHOUT_GPU();
  ErrorCounter errors;
  CudaDeviceContext context(0, errors.Handler());
  context.BindCurrentThread();
  context.BindCurrentThread();  // a second call only makes the device current again
  ASSERT_NE(context.cuda_stream(), nullptr);
  cudaStream_t cublas_stream = nullptr;
  ASSERT_EQ(cublasGetStream(context.cublas_handle(), &cublas_stream), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublas_stream, context.cuda_stream());
  cudaStream_t cudnn_stream = nullptr;
  ASSERT_EQ(cudnnGetStream(context.cudnn_handle(), &cudnn_stream), CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(cudnn_stream, context.cuda_stream());
  cublasMath_t math_mode;
  ASSERT_EQ(cublasGetMathMode(context.cublas_handle(), &math_mode), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(math_mode, CUBLAS_DEFAULT_MATH);  // no TF32
  unsigned int flags = 0;
  ASSERT_EQ(cudaStreamGetFlags(context.cuda_stream(), &flags), cudaSuccess);
  EXPECT_EQ(flags & cudaStreamNonBlocking, cudaStreamNonBlocking);
}

TEST(CudaDeviceContextTest, CublasComputesOnTheStream) {
  SKIP_WITHOUT_GPU();
  ErrorCounter errors;
  CudaDeviceContext context(0, errors.Handler());
  context.BindCurrentThread();
  // Column-major 2x2: C = A * B with A = [1 3; 2 4], B = [5 7; 6 8] -> C = [23 31; 34 46].
  const std::vector<float> a = {1, 2, 3, 4}, b = {5, 6, 7, 8};
  std::vector<float> c(4, 0.0f);
  std::shared_ptr<void> memory =
      AllocateMemory(Case(kDeviceMemory), 12 * sizeof(float), "the gemm test");
  float* device = static_cast<float*>(memory.get());
  cudaStream_t stream = context.cuda_stream();
  ASSERT_EQ(cudaMemcpyAsync(device, a.data(), 4 * sizeof(float), cudaMemcpyHostToDevice, stream),
            cudaSuccess);
  ASSERT_EQ(
      cudaMemcpyAsync(device + 4, b.data(), 4 * sizeof(float), cudaMemcpyHostToDevice, stream),
      cudaSuccess);
  const float one = 1.0f, zero = 0.0f;
  ASSERT_EQ(cublasSgemm(context.cublas_handle(), CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, device, 2,
                        device + 4, 2, &zero, device + 8, 2),
            CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(
      cudaMemcpyAsync(c.data(), device + 8, 4 * sizeof(float), cudaMemcpyDeviceToHost, stream),
      cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(c, (std::vector<float>{23, 34, 31, 46}));
  EXPECT_EQ(errors.count.load(), 0);
}

// Each callback checks that the device-to-host copy enqueued before it has landed in host memory,
// and callbacks run in the order they were added, on the poller thread.
TEST(CudaDeviceContextTest, CallbacksRunAfterTheCopiesBeforeThemInOrder) {
  SKIP_WITHOUT_GPU();
  constexpr int64_t kPieces = 16;
  constexpr int64_t kPieceFloats = 1 << 20;  // 4 MiB each: copies take long enough to be pending
  // Declared before the context: its destructor waits for the callbacks and copies using them.
  ErrorCounter errors;
  std::mutex mutex;
  std::vector<int64_t> order;
  std::vector<int64_t> incomplete;  // pieces whose copy had not landed when their callback ran
  std::atomic<bool> on_test_thread{false};
  std::atomic<int64_t> late_callbacks{0};
  const std::thread::id test_thread = std::this_thread::get_id();
  const int64_t bytes = kPieces * kPieceFloats * sizeof(float);
  std::shared_ptr<void> source_memory = AllocateMemory(Case(kPinnedHostMemory), bytes, "source");
  std::shared_ptr<void> device_memory = AllocateMemory(Case(kDeviceMemory), bytes, "device");
  std::shared_ptr<void> target_memory = AllocateMemory(Case(kPinnedHostMemory), bytes, "target");
  float* source = static_cast<float*>(source_memory.get());
  float* device = static_cast<float*>(device_memory.get());
  float* target = static_cast<float*>(target_memory.get());
  for (int64_t i = 0; i < kPieces * kPieceFloats; ++i) {
    source[i] = static_cast<float>(i / kPieceFloats + 1);
    target[i] = 0.0f;
  }
  auto context = std::make_unique<CudaDeviceContext>(0, errors.Handler());
  context->BindCurrentThread();
  cudaStream_t stream = context->cuda_stream();
  for (int64_t piece = 0; piece < kPieces; ++piece) {
    const int64_t offset = piece * kPieceFloats;
    ASSERT_EQ(cudaMemcpyAsync(device + offset, source + offset, kPieceFloats * sizeof(float),
                              cudaMemcpyHostToDevice, stream),
              cudaSuccess);
    ASSERT_EQ(cudaMemcpyAsync(target + offset, device + offset, kPieceFloats * sizeof(float),
                              cudaMemcpyDeviceToHost, stream),
              cudaSuccess);
    context->stream().AddCallback([&, piece, offset] {
      if (std::this_thread::get_id() == test_thread) { on_test_thread = true; }
      const float expected = static_cast<float>(piece + 1);
      // The first and last elements of the piece: the copy is done as a whole or not at all.
      const bool complete =
          target[offset] == expected && target[offset + kPieceFloats - 1] == expected;
      std::lock_guard<std::mutex> lock(mutex);
      order.push_back(piece);
      if (!complete) { incomplete.push_back(piece); }
    });
  }
  static_cast<CudaStream&>(context->stream()).WaitCallbacks();
  {
    std::lock_guard<std::mutex> lock(mutex);
    ASSERT_EQ(static_cast<int64_t>(order.size()), kPieces);
    for (int64_t piece = 0; piece < kPieces; ++piece) { EXPECT_EQ(order[piece], piece); }
    EXPECT_TRUE(incomplete.empty()) << incomplete.size() << " callbacks ran before their copy";
  }
  EXPECT_FALSE(on_test_thread.load());

  // The destructor waits for callbacks still pending.
  for (int64_t piece = 0; piece < kPieces; ++piece) {
    const int64_t offset = piece * kPieceFloats;
    ASSERT_EQ(cudaMemcpyAsync(target + offset, device + offset, kPieceFloats * sizeof(float),
                              cudaMemcpyDeviceToHost, stream),
              cudaSuccess);
    context->stream().AddCallback([&] { late_callbacks.fetch_add(1); });
  }
  context.reset();
  EXPECT_EQ(late_callbacks.load(), kPieces);
  EXPECT_EQ(errors.count.load(), 0);
}

TEST(CudaDeviceContextTest, EventsAreReusedOverManyCallbacks) {
  SKIP_WITHOUT_GPU();
  // Events return to the pool after their callback: far more callbacks than events in flight.
  ErrorCounter errors;
  std::atomic<int64_t> callbacks{0};
  CudaDeviceContext context(0, errors.Handler());
  context.BindCurrentThread();
  for (int64_t round = 0; round < 10; ++round) {
    for (int64_t i = 0; i < 100; ++i) {
      context.stream().AddCallback([&] { callbacks.fetch_add(1); });
    }
    static_cast<CudaStream&>(context.stream()).WaitCallbacks();
    EXPECT_EQ(callbacks.load(), (round + 1) * 100);
  }
  EXPECT_EQ(errors.count.load(), 0);
}

TEST(CudaDeviceContextTest, WorkspaceGrowsAndIsDeviceMemory) {
  SKIP_WITHOUT_GPU();
  ErrorCounter errors;
  CudaDeviceContext context(0, errors.Handler());
  context.BindCurrentThread();
  EXPECT_EQ(context.Workspace(0), nullptr);  // nothing asked, nothing allocated yet
  void* small = context.Workspace(100);
  ASSERT_NE(small, nullptr);
  EXPECT_EQ(context.Workspace(50), small);  // big enough already: the same memory
  cudaPointerAttributes attributes;
  ASSERT_EQ(cudaPointerGetAttributes(&attributes, small), cudaSuccess);
  EXPECT_EQ(attributes.type, cudaMemoryTypeDevice);
  EXPECT_EQ(attributes.device, 0);
  // A larger workspace is usable over its whole size, in stream order.
  const int64_t large_bytes = (int64_t{3} << 20) + 5;
  void* large = context.Workspace(large_bytes);
  ASSERT_NE(large, nullptr);
  EXPECT_EQ(context.Workspace(large_bytes - 1), large);
  ASSERT_EQ(cudaMemsetAsync(large, 0x7f, large_bytes, context.cuda_stream()), cudaSuccess);
  std::vector<unsigned char> tail(5, 0);
  ASSERT_EQ(cudaMemcpyAsync(tail.data(), static_cast<char*>(large) + large_bytes - 5, 5,
                            cudaMemcpyDeviceToHost, context.cuda_stream()),
            cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(context.cuda_stream()), cudaSuccess);
  EXPECT_EQ(tail, std::vector<unsigned char>(5, 0x7f));
  // More than any GPU has: a clear error, and the old workspace is not left dangling.
  try {
    context.Workspace(int64_t{1} << 50);
    FAIL() << "no error was thrown";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kRuntime);
    EXPECT_NE(e.message().find("out of memory"), std::string::npos) << e.message();
  }
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_NE(context.Workspace(256), nullptr);
  EXPECT_EQ(errors.count.load(), 0);
}

TEST(CudaDeviceContextTest, ContextBoundOnAnotherThreadIsDestroyedCleanly) {
  SKIP_WITHOUT_GPU();
  // The runtime binds each context on its own thread and may destroy it on the main thread.
  ErrorCounter errors;
  std::atomic<int64_t> callbacks{0};
  std::string owner_error;
  auto context = std::make_unique<CudaDeviceContext>(0, errors.Handler());
  std::thread owner([&] {
    try {
      context->BindCurrentThread();
      context->Workspace(1024);
      for (int i = 0; i < 10; ++i) {
        context->stream().AddCallback([&] { callbacks.fetch_add(1); });
      }
    } catch (const std::exception& e) { owner_error = e.what(); }
  });
  owner.join();
  EXPECT_EQ(owner_error, "");
  context.reset();
  EXPECT_EQ(callbacks.load(), 10);
  EXPECT_EQ(errors.count.load(), 0);
}

// An index check that finds a bad entry claims the context's error report; the poller turns it
// into a ValueError when the work completes and drops the callbacks after it.
TEST(CudaDeviceContextTest, ABadIndexFoundOnTheDeviceStopsTheStreamWithAValueError) {
  SKIP_WITHOUT_GPU();
  std::mutex mutex;
  std::vector<std::string> errors;
  CudaDeviceContext context(0, [&](std::exception_ptr error) {
    try {
      std::rethrow_exception(error);
    } catch (const Error& e) {
      std::lock_guard<std::mutex> lock(mutex);
      errors.push_back(std::string(e.kind() == ErrorKind::kValue ? "value: " : "other: ") +
                       e.what());
    }
  });
  context.BindCurrentThread();
  const std::vector<int64_t> good = {0, 3, 2, 1, 3}, bad = {0, 3, -2, 1, 9};
  std::shared_ptr<void> memory =
      AllocateMemory(Case(kDeviceMemory), 10 * sizeof(int64_t), "the index check test");
  int64_t* device = static_cast<int64_t*>(memory.get());
  ASSERT_EQ(cudaMemcpy(device, good.data(), 5 * sizeof(int64_t), cudaMemcpyHostToDevice),
            cudaSuccess);
  ASSERT_EQ(cudaMemcpy(device + 5, bad.data(), 5 * sizeof(int64_t), cudaMemcpyHostToDevice),
            cudaSuccess);
  BlobDesc desc;
  desc.shape = Shape({5});
  desc.data_type = kInt64;
  cuda::DeviceIndexCheck check("gather (op 'g'): index", cuda::SingleLimit(4));
  std::atomic<int> callbacks{0};
  check.Enqueue(context, Blob(device, desc));
  context.stream().AddCallback([&] { callbacks.fetch_add(1); });
  context.Synchronize();
  EXPECT_EQ(callbacks.load(), 1);
  EXPECT_TRUE(errors.empty());

  check.Enqueue(context, Blob(device + 5, desc));
  context.stream().AddCallback([&] { callbacks.fetch_add(1); });
  context.Synchronize();
  EXPECT_EQ(callbacks.load(), 1);  // dropped
  std::lock_guard<std::mutex> lock(mutex);
  ASSERT_EQ(errors.size(), 1u);
  // Either bad entry may claim the report first.
  const std::string& message = errors[0];
  const bool names_one = message.find("index -2 at position 2 is out of range [0, 4)") !=
                             std::string::npos ||
                         message.find("index 9 at position 4 is out of range [0, 4)") !=
                             std::string::npos;
  EXPECT_TRUE(names_one) << message;
  EXPECT_EQ(message.rfind("value: gather (op 'g'): ", 0), 0u) << message;
}

}  // namespace
}  // namespace oneflow

#endif  // ONEFLOW_WITH_CUDA
