// CopyRow against the bytes it should copy: every size through and around the forward-copy
// range at several alignments of source and destination within a cache line (the bytes next to
// the row stay intact), and rows whose destination is 4 KiB-aliased to their source (the case
// glibc copies backward).

#include "oneflow/kernels/cpu/copy_row.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace oneflow {
namespace test {
namespace {

constexpr int64_t kGuard = 64;
constexpr uint8_t kUntouched = 0xA5;

void ExpectCopied(int64_t bytes, int64_t src_shift, int64_t dst_shift) {
  std::vector<uint8_t> source(bytes + 2 * kGuard + 64);
  for (size_t i = 0; i < source.size(); ++i) { source[i] = static_cast<uint8_t>(i * 31 + 7); }
  std::vector<uint8_t> target(bytes + 2 * kGuard + 64, kUntouched);
  const uint8_t* from = source.data() + kGuard + src_shift;
  uint8_t* to = target.data() + kGuard + dst_shift;
  CopyRow(to, from, bytes);
  for (int64_t i = 0; i < bytes; ++i) {
    ASSERT_EQ(to[i], from[i]) << "byte " << i << " of " << bytes << " (source shift "
                              << src_shift << ", target shift " << dst_shift << ")";
  }
  for (int64_t i = 1; i <= kGuard; ++i) {
    ASSERT_EQ(to[-i], kUntouched) << "byte " << -i << " before a row of " << bytes;
    ASSERT_EQ(to[bytes + i - 1], kUntouched) << "byte " << i - 1 << " after a row of " << bytes;
  }
}

TEST(CopyRow, MatchesMemcpyAtEverySizeAndAlignment) {
  std::vector<int64_t> sizes = {0, 1, 31, 63, 64, 65, 255, 256, 257};
  for (int64_t bytes = kForwardCopyMinBytes - 2; bytes <= kForwardCopyMinBytes + 130; ++bytes) {
    sizes.push_back(bytes);
  }
  for (int64_t bytes = kForwardCopyMaxBytes - 70; bytes <= kForwardCopyMaxBytes + 2; ++bytes) {
    sizes.push_back(bytes);
  }
  sizes.push_back(4096);
  sizes.push_back(100000);
  for (int64_t bytes : sizes) {
    for (int64_t src_shift : {0, 1, 7, 32, 63}) {
      for (int64_t dst_shift : {0, 3, 16, 63}) { ExpectCopied(bytes, src_shift, dst_shift); }
    }
  }
}

TEST(CopyRow, CopiesForwardBetweenAliasedRows) {
  // Rows of a 4 KiB-strided source into a 2 KiB-strided target in one buffer: every other row
  // has destination - source a multiple of 4 KiB.
  constexpr int64_t kRows = 8, kRow = 2048;
  std::vector<float> buffer(kRows * 4096 / sizeof(float) + kRows * kRow / sizeof(float));
  for (size_t i = 0; i < buffer.size(); ++i) { buffer[i] = static_cast<float>(i); }
  const std::vector<float> before = buffer;
  char* base = reinterpret_cast<char*>(buffer.data());
  char* target = base + kRows * 4096;
  for (int64_t r = 0; r < kRows; ++r) { CopyRow(target + r * kRow, base + r * 4096, kRow); }
  const int64_t per_row = kRow / sizeof(float);
  for (int64_t r = 0; r < kRows; ++r) {
    for (int64_t i = 0; i < per_row; ++i) {
      ASSERT_EQ(buffer[kRows * 4096 / sizeof(float) + r * per_row + i],
                before[r * 4096 / sizeof(float) + i])
          << "row " << r << ", element " << i;
    }
  }
}

}  // namespace
}  // namespace test
}  // namespace oneflow
