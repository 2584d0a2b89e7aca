// A real Gloo TCP full mesh (ranks on threads of this process) that rendezvous through the
// control plane's key-value store.
#include "oneflow/control/gloo_store.h"

#include <gloo/allreduce.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/transport/tcp/device.h>
#include <gtest/gtest.h>

#include "oneflow/common/error.h"
#include "tests/cpp/control/cluster_test_util.h"

namespace oneflow {
namespace {

using std::chrono::milliseconds;
using testing::FreePort;
using testing::MessageOf;
using testing::RunOnThreads;
using testing::TestSpec;

class GlooStoreTest : public ::testing::TestWithParam<int64_t> {};

TEST_P(GlooStoreTest, FullMeshAllReduceSums) {
  int64_t world_size = GetParam();
  int port = FreePort();
  std::vector<std::exception_ptr> errors = RunOnThreads(world_size, [&](int64_t rank) {
    ControlPlane control(TestSpec(rank, world_size, port));
    GlooStore store(control, "gloo/world", milliseconds(5000));
    gloo::transport::tcp::attr attributes;
    attributes.hostname = "127.0.0.1";
    auto device = gloo::transport::tcp::CreateDevice(attributes);
    auto context = std::make_shared<gloo::rendezvous::Context>(rank, world_size);
    context->setTimeout(milliseconds(5000));
    context->connectFullMesh(store, device);

    std::vector<float> values(5);
    for (size_t i = 0; i < values.size(); ++i) values[i] = float(rank + 1) * float(i + 1);
    gloo::AllreduceOptions options(context);
    options.setOutput(values.data(), values.size());
    options.setReduceFunction(
        static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<float>));
    options.setTag(7);
    gloo::allreduce(options);

    float rank_sum = float(world_size * (world_size + 1) / 2);
    for (size_t i = 0; i < values.size(); ++i) {
      EXPECT_EQ(values[i], rank_sum * float(i + 1)) << "rank " << rank << " element " << i;
    }
    control.Barrier("reduced", milliseconds(5000));
  });
  for (int64_t rank = 0; rank < world_size; ++rank) {
    EXPECT_EQ(MessageOf(errors[rank]), "") << "rank " << rank;
  }
}

INSTANTIATE_TEST_SUITE_P(WorldSizes, GlooStoreTest, ::testing::Values(2, 3));

TEST(GlooStoreTest, WaitTimesOutThroughTheControlPlane) {
  ControlPlane control(TestSpec(0, 1, FreePort()));
  GlooStore store(control, "prefix", milliseconds(100));
  store.set("present", {'a', 'b'});
  EXPECT_EQ(store.get("present"), std::vector<char>({'a', 'b'}));
  std::string raw;
  EXPECT_TRUE(control.TryGet("prefix/present", &raw));  // the prefix namespaces the keys
  EXPECT_EQ(raw, "ab");
  EXPECT_THROW(store.wait({"present", "absent"}, milliseconds(100)), Error);
  EXPECT_THROW(store.get("absent"), Error);
}

}  // namespace
}  // namespace oneflow
