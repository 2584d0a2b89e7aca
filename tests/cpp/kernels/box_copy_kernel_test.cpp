// The GPU box copy kernel (kernels/cuda/box_copy.h), which packs and unpacks the staging chunks
// of the NCCL collectives, against the host box copy the plan simulator uses (host_box_copy.h):
// boxes of 1 to 8 axes, elements of 1, 2, 4 and 8 bytes, a box larger than one grid (the
// grid-stride loop). The untouched rest of the destination must keep its bytes. Skips without a
// GPU; CUDA builds only.
#ifdef ONEFLOW_WITH_CUDA

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "oneflow/kernels/cuda/box_copy.h"
#include "tests/cpp/comm/host_box_copy.h"
#include "tests/cpp/kernels/cuda_kernel_test_util.h"

namespace oneflow {
namespace test {
namespace {

struct BoxCase {
  std::vector<int64_t> src_dims, src_begin, dst_dims, dst_begin, extent;
};

int64_t Product(const std::vector<int64_t>& dims) {
  int64_t product = 1;
  for (int64_t dim : dims) { product *= dim; }
  return product;
}

void CheckBoxCopy(const BoxCase& c, int64_t elem_size, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> src(Product(c.src_dims) * elem_size);
  std::vector<uint8_t> dst(Product(c.dst_dims) * elem_size);
  for (uint8_t& byte : src) { byte = static_cast<uint8_t>(rng()); }
  for (uint8_t& byte : dst) { byte = static_cast<uint8_t>(rng()); }
  DeviceBuffer device_src(static_cast<int64_t>(src.size()));
  DeviceBuffer device_dst(static_cast<int64_t>(dst.size()));
  OF_CUDA_CHECK(cudaMemcpy(device_src.data, src.data(), src.size(), cudaMemcpyHostToDevice));
  OF_CUDA_CHECK(cudaMemcpy(device_dst.data, dst.data(), dst.size(), cudaMemcpyHostToDevice));
  OF_CUDA_CHECK(cudaDeviceSynchronize());
  cudaStream_t stream = TestGpu().cuda_stream();
  LaunchBoxCopy(elem_size, static_cast<int64_t>(c.extent.size()), c.extent.data(), device_src.data,
                c.src_dims.data(), c.src_begin.data(), device_dst.data, c.dst_dims.data(),
                c.dst_begin.data(), stream);
  OF_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<uint8_t> actual(dst.size());
  OF_CUDA_CHECK(cudaMemcpy(actual.data(), device_dst.data, dst.size(), cudaMemcpyDeviceToHost));
  HostBoxCopy(elem_size, c.extent, src.data(), c.src_dims, c.src_begin, dst.data(), c.dst_dims,
              c.dst_begin);
  EXPECT_EQ(actual, dst) << c.extent.size() << " axes, " << elem_size << "-byte elements";
}

TEST(BoxCopyKernel, MatchesTheHostBoxCopy) {
  SKIP_WITHOUT_GPU();
  const std::vector<BoxCase> cases = {
      {{10}, {3}, {7}, {1}, {5}},
      {{4, 6}, {1, 2}, {3, 5}, {0, 1}, {3, 4}},
      {{5, 7}, {0, 3}, {5, 2}, {0, 0}, {5, 2}},  // a column block: a reduce-scatter's chunk
      {{3, 4, 5}, {1, 0, 2}, {2, 6, 3}, {0, 1, 0}, {2, 4, 3}},
      {{2, 3, 4, 5}, {0, 1, 1, 0}, {3, 3, 3, 5}, {1, 0, 0, 0}, {2, 2, 3, 5}},
      {{2, 2, 3, 2, 3}, {1, 0, 1, 0, 1}, {1, 3, 2, 2, 2}, {0, 1, 0, 0, 0}, {1, 2, 2, 2, 2}},
      {{2, 2, 2, 2, 2, 3, 2, 3},
       {0, 1, 0, 1, 0, 1, 0, 1},
       {3, 1, 2, 2, 2, 2, 2, 2},
       {1, 0, 0, 0, 0, 0, 0, 0},
       {2, 1, 2, 1, 2, 2, 2, 2}},
      {{1, 0, 3}, {0, 0, 0}, {1, 0, 3}, {0, 0, 0}, {1, 0, 3}},  // empty: nothing launched
  };
  uint64_t seed = 0;
  for (const BoxCase& c : cases) {
    for (int64_t elem_size : {1, 2, 4, 8}) { CheckBoxCopy(c, elem_size, ++seed); }
  }
}

TEST(BoxCopyKernel, BoxesLargerThanOneGridUseTheGridStrideLoop) {
  SKIP_WITHOUT_GPU();
  // 3 million elements: more than 8192 blocks of 256 threads.
  CheckBoxCopy({{3000, 1100}, {0, 50}, {3000, 1000}, {0, 0}, {3000, 1000}}, 4, 7);
}

TEST(BoxCopyKernel, BadRanksAndElementSizesAreRejected) {
  SKIP_WITHOUT_GPU();
  const std::vector<int64_t> nine(9, 1);
  cudaStream_t stream = TestGpu().cuda_stream();
  EXPECT_THROW(LaunchBoxCopy(4, 9, nine.data(), nullptr, nine.data(), nine.data(), nullptr,
                             nine.data(), nine.data(), stream),
               Error);
  DeviceBuffer buffer(64);
  EXPECT_THROW(LaunchBoxCopy(3, 1, nine.data(), buffer.data, nine.data(), nine.data(), buffer.data,
                             nine.data(), nine.data(), stream),
               Error);
}

}  // namespace
}  // namespace test
}  // namespace oneflow

#endif  // ONEFLOW_WITH_CUDA
