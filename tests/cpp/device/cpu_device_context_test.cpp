#include "oneflow/device/cpu_device_context.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "oneflow/common/error.h"

namespace oneflow {
namespace {

TEST(CpuDeviceContextTest, ScratchIsAlignedGrowsAndIsSharedBetweenCallers) {
  CpuDeviceContext device(1);
  void* small = device.Scratch(100);
  ASSERT_NE(small, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(small) % 64, 0u);
  std::memset(small, 7, 100);
  // A request that fits gets the same buffer: kernels of one thread share it.
  EXPECT_EQ(device.Scratch(64), small);
  EXPECT_EQ(device.Scratch(128), small);  // 100 was rounded up to a whole line
  void* large = device.Scratch(1 << 20);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(large) % 64, 0u);
  std::memset(large, 1, 1 << 20);  // all of it is usable
  EXPECT_EQ(device.Scratch(10), large);
}

TEST(CpuDeviceContextTest, ScratchThatCannotBeHadIsOutOfMemory) {
  CpuDeviceContext device(1);
  try {
    device.Scratch(int64_t{1} << 58);
    FAIL() << "a 256 PB scratch buffer was allocated";
  } catch (const Error& error) {
    EXPECT_NE(error.message().find("out of memory: cannot allocate"), std::string::npos);
  }
  EXPECT_NE(device.Scratch(64), nullptr);  // and it still works
}

}  // namespace
}  // namespace oneflow
