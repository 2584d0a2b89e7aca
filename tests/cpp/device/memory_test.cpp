// AllocateMemory: host memory everywhere; pinned host memory falls back to host memory without a
// GPU; device memory needs a GPU (those tests skip without one) and otherwise fails by name.
#include "oneflow/device/memory.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "oneflow/common/error.h"
#include "oneflow/device/cuda_info.h"

#ifdef ONEFLOW_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace oneflow {
namespace {

MemoryCase Case(MemoryKind kind, int64_t device_id = 0) {
  MemoryCase memory_case;
  memory_case.set_kind(kind);
  memory_case.set_device_id(device_id);
  return memory_case;
}

// The message of the Error that `allocate` throws, or "" when it does not throw one.
template <typename F>
std::string RuntimeErrorOf(F allocate) {
  try {
    allocate();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kRuntime) << e.what();
    return e.message();
  }
  ADD_FAILURE() << "no error was thrown";
  return "";
}

TEST(MemoryTest, NamesMemoryCases) {
  EXPECT_EQ(MemoryCaseToString(Case(kHostMemory)), "host");
  EXPECT_EQ(MemoryCaseToString(Case(kPinnedHostMemory, 1)), "pinned host");
  EXPECT_EQ(MemoryCaseToString(Case(kDeviceMemory, 3)), "gpu 3");
}

TEST(MemoryTest, HostMemoryIsAlignedAndUsable) {
  for (int64_t bytes : {1, 63, 64, 65, 1000, 1 << 20}) {
    std::shared_ptr<void> memory = AllocateMemory(Case(kHostMemory), bytes, "a test buffer");
    ASSERT_NE(memory, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(memory.get()) % 64, 0u) << bytes;
    std::memset(memory.get(), 0x5a, bytes);
    EXPECT_EQ(static_cast<unsigned char*>(memory.get())[bytes - 1], 0x5a);
  }
}

TEST(MemoryTest, ZeroBytesGiveNoMemory) {
  EXPECT_EQ(AllocateMemory(Case(kHostMemory), 0, "an empty register"), nullptr);
  EXPECT_EQ(AllocateMemory(Case(kPinnedHostMemory), 0, "an empty register"), nullptr);
  // Even where there is no such GPU: nothing is allocated, so nothing can fail.
  EXPECT_EQ(AllocateMemory(Case(kDeviceMemory, 1000), 0, "an empty register"), nullptr);
}

TEST(MemoryTest, NegativeSizeIsABug) {
  try {
    AllocateMemory(Case(kHostMemory), -8, "a bad register");
    FAIL() << "no error was thrown";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInternal);
    EXPECT_NE(e.message().find("a bad register"), std::string::npos) << e.message();
  }
}

TEST(MemoryTest, HugeHostAllocationIsOutOfMemory) {
  const int64_t bytes = int64_t{1} << 62;
  const std::string message =
      RuntimeErrorOf([&] { AllocateMemory(Case(kHostMemory), bytes, "register 7"); });
  EXPECT_EQ(message, "out of memory: cannot allocate " + std::to_string(bytes) +
                         " bytes of host memory for register 7");
}

TEST(MemoryTest, PinnedHostMemoryIsUsableWithOrWithoutAGpu) {
  // With a GPU it is page-locked (checked below); without one, plain aligned host memory.
  std::shared_ptr<void> memory = AllocateMemory(Case(kPinnedHostMemory), 4096, "a staging buffer");
  ASSERT_NE(memory, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(memory.get()) % 64, 0u);
  std::memset(memory.get(), 1, 4096);
#ifdef ONEFLOW_WITH_CUDA
  if (GetCudaInfo().device_count > 0) {
    cudaPointerAttributes attributes;
    ASSERT_EQ(cudaPointerGetAttributes(&attributes, memory.get()), cudaSuccess);
    EXPECT_EQ(attributes.type, cudaMemoryTypeHost);
  }
#endif
}

TEST(MemoryTest, DeviceMemoryOfAMissingGpuFailsByName) {
  const int64_t missing = GetCudaInfo().device_count;  // one past the last visible GPU
  const std::string message = RuntimeErrorOf([&] {
    AllocateMemory(Case(kDeviceMemory, missing), 1024, "a register of task 12 (op 'fc')");
  });
  const std::string expected_start = "cannot allocate 1024 bytes of gpu " +
                                     std::to_string(missing) +
                                     " memory for a register of task 12 (op 'fc'): ";
  EXPECT_EQ(message.substr(0, expected_start.size()), expected_start) << message;
#ifndef ONEFLOW_WITH_CUDA
  EXPECT_NE(message.find("no CUDA"), std::string::npos) << message;
#endif
}

TEST(MemoryTest, DeviceMemoryHoldsWhatIsCopiedIn) {
  if (GetCudaInfo().device_count == 0) { GTEST_SKIP() << GetCudaInfo().reason; }
#ifdef ONEFLOW_WITH_CUDA
  const int64_t count = 1000;
  const int64_t last = GetCudaInfo().device_count - 1;
  std::shared_ptr<void> memory =
      AllocateMemory(Case(kDeviceMemory, last), count * sizeof(float), "a test register");
  ASSERT_NE(memory, nullptr);
  cudaPointerAttributes attributes;
  ASSERT_EQ(cudaPointerGetAttributes(&attributes, memory.get()), cudaSuccess);
  EXPECT_EQ(attributes.type, cudaMemoryTypeDevice);
  EXPECT_EQ(attributes.device, last);
  std::vector<float> in(count), out(count, 0.0f);
  for (int64_t i = 0; i < count; ++i) { in[i] = 0.5f * i; }
  ASSERT_EQ(cudaMemcpy(memory.get(), in.data(), count * sizeof(float), cudaMemcpyHostToDevice),
            cudaSuccess);
  ASSERT_EQ(cudaMemcpy(out.data(), memory.get(), count * sizeof(float), cudaMemcpyDeviceToHost),
            cudaSuccess);
  EXPECT_EQ(in, out);
  memory.reset();  // the deleter frees on the right GPU without an error left behind
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
#endif
}

TEST(MemoryTest, TooMuchDeviceMemoryIsOutOfMemory) {
  if (GetCudaInfo().device_count == 0) { GTEST_SKIP() << GetCudaInfo().reason; }
  const int64_t bytes = int64_t{1} << 50;  // a petabyte: more than any GPU has
  const std::string message =
      RuntimeErrorOf([&] { AllocateMemory(Case(kDeviceMemory, 0), bytes, "register 3"); });
  EXPECT_EQ(message, "out of memory: cannot allocate " + std::to_string(bytes) +
                         " bytes of gpu 0 memory for register 3");
#ifdef ONEFLOW_WITH_CUDA
  // The failure left no error behind: the device is still usable.
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_NE(AllocateMemory(Case(kDeviceMemory, 0), 256, "register 4"), nullptr);
#endif
}

}  // namespace
}  // namespace oneflow
