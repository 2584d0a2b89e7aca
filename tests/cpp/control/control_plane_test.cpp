// The control plane with whole clusters in one process (one thread per rank): rendezvous, the
// key-value store, barriers, lost ranks and clean shutdown.
#include "oneflow/control/control_plane.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>

#include "oneflow/common/error.h"
#include "tests/cpp/control/cluster_test_util.h"

namespace oneflow {
namespace {

using std::chrono::milliseconds;
using testing::BoundSocket;
using testing::FreePort;
using testing::MessageOf;
using testing::RunOnThreads;
using testing::TestSpec;

constexpr milliseconds kWait{3000};

void ExpectNoErrors(const std::vector<std::exception_ptr>& errors) {
  for (size_t rank = 0; rank < errors.size(); ++rank) {
    EXPECT_EQ(MessageOf(errors[rank]), "") << "rank " << rank;
  }
}

class ControlPlaneWorldTest : public ::testing::TestWithParam<int64_t> {};

TEST_P(ControlPlaneWorldTest, KeyValueStoreAcrossRanks) {
  int64_t world_size = GetParam();
  int port = FreePort();
  ExpectNoErrors(RunOnThreads(world_size, [&](int64_t rank) {
    ControlPlane control(TestSpec(rank, world_size, port));
    EXPECT_EQ(control.rank(), rank);
    EXPECT_EQ(control.world_size(), world_size);
    control.Set("from/" + std::to_string(rank), "value of " + std::to_string(rank));
    for (int64_t peer = 0; peer < world_size; ++peer) {
      EXPECT_EQ(control.Get("from/" + std::to_string(peer), kWait),
                "value of " + std::to_string(peer));
    }
    std::string value = "untouched";
    EXPECT_FALSE(control.TryGet("missing", &value));
    EXPECT_EQ(value, "untouched");

    control.Add("counter", rank + 1);
    control.Barrier("counted", kWait);
    int64_t expected_sum = world_size * (world_size + 1) / 2;
    EXPECT_EQ(control.Get("counter", kWait), std::to_string(expected_sum));
    EXPECT_EQ(control.Add("counter", 0), expected_sum);

    control.Barrier("read", kWait);
    if (rank == 0) {
      control.Set("from/0", "overwritten");
      control.Erase("from/1");
    }
    control.Barrier("changed", kWait);
    EXPECT_EQ(control.Get("from/0", kWait), "overwritten");
    EXPECT_FALSE(control.TryGet("from/1", &value));
    control.Barrier("done", kWait);
  }));
}

TEST_P(ControlPlaneWorldTest, BarriersHoldEveryRankUntilAllArrive) {
  int64_t world_size = GetParam();
  int port = FreePort();
  ExpectNoErrors(RunOnThreads(world_size, [&](int64_t rank) {
    ControlPlane control(TestSpec(rank, world_size, port));
    for (int round = 0; round < 3; ++round) {
      // Every rank counts itself before arriving, so past the barrier the count is complete.
      std::string counter = "arrived/" + std::to_string(round);
      control.Add(counter, 1);
      control.Barrier("round/" + std::to_string(round), kWait);
      std::string count;
      ASSERT_TRUE(control.TryGet(counter, &count));
      EXPECT_EQ(count, std::to_string(world_size)) << "round " << round;
      // A reused name: legal once every rank passed it (the barrier above guarantees that).
      control.Add("reused/" + std::to_string(round), 1);
      control.Barrier("reused", kWait);
      ASSERT_TRUE(control.TryGet("reused/" + std::to_string(round), &count));
      EXPECT_EQ(count, std::to_string(world_size)) << "round " << round;
    }
  }));
}

INSTANTIATE_TEST_SUITE_P(WorldSizes, ControlPlaneWorldTest, ::testing::Values(2, 4));

TEST(ControlPlaneTest, GetWaitsForALaterSet) {
  int port = FreePort();
  ExpectNoErrors(RunOnThreads(2, [&](int64_t rank) {
    ControlPlane control(TestSpec(rank, 2, port));
    if (rank == 1) {
      control.Set("reader is waiting", "");
      EXPECT_EQ(control.Get("written later", kWait), "hello");
    } else {
      control.Get("reader is waiting", kWait);
      control.Set("written later", "hello");
    }
    control.Barrier("done", kWait);
  }));
}

TEST(ControlPlaneTest, LargeValuesPassGrpcDefaultMessageLimit) {
  int port = FreePort();
  std::string large(8 << 20, '\0');  // gRPC refuses messages over 4 MiB unless told otherwise
  for (size_t i = 0; i < large.size(); ++i) large[i] = static_cast<char>(i * 7);
  ExpectNoErrors(RunOnThreads(2, [&](int64_t rank) {
    ControlPlane control(TestSpec(rank, 2, port));
    if (rank == 0) control.Set("plan", large);
    EXPECT_TRUE(control.Get("plan", kWait) == large);
    control.Barrier("done", kWait);
  }));
}

TEST(ControlPlaneTest, GetTimesOutNamingTheKey) {
  ClusterSpec spec = TestSpec(0, 1, FreePort());
  ControlPlane control(spec);
  try {
    control.Get("never set", milliseconds(200));
    FAIL() << "Get should time out";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kRuntime);
    EXPECT_NE(error.message().find("Get('never set') on rank 0 timed out after 0.2 s"),
              std::string::npos)
        << error.message();
  }
}

TEST(ControlPlaneTest, BarrierTimeoutNamesRanksThatDidNotArrive) {
  int port = FreePort();
  std::vector<std::exception_ptr> errors = RunOnThreads(3, [&](int64_t rank) {
    ControlPlane control(TestSpec(rank, 3, port));
    if (rank != 2) control.Barrier("without rank 2", milliseconds(300));
  });
  for (int64_t rank : {0, 1}) {
    EXPECT_NE(MessageOf(errors[rank])
                  .find("Barrier('without rank 2') on rank " + std::to_string(rank) +
                        " timed out after 0.3 s: "
                        "machine 2 of 3 did not arrive"),
              std::string::npos)
        << MessageOf(errors[rank]);
  }
}

TEST(ControlPlaneTest, RendezvousTimeoutNamesTheMissingRanks) {
  int port = FreePort();
  std::vector<std::exception_ptr> errors = RunOnThreads(2, [&](int64_t rank) {
    ClusterSpec spec = TestSpec(rank, 4, port);  // ranks 2 and 3 never start
    spec.rendezvous_timeout = milliseconds(1000);
    ControlPlane control(spec);
  });
  std::string expected = "rendezvous at 127.0.0.1:" + std::to_string(port) +
                         " timed out after 1 s: machines 2, 3 of 4 never registered";
  for (int64_t rank : {0, 1}) {
    EXPECT_NE(MessageOf(errors[rank]).find(expected), std::string::npos) << MessageOf(errors[rank]);
  }
}

TEST(ControlPlaneTest, WorkerThatCannotReachTheMasterSaysSo) {
  int port = FreePort();
  ClusterSpec spec = TestSpec(1, 2, port);
  spec.rendezvous_timeout = milliseconds(500);
  try {
    ControlPlane control(spec);
    FAIL() << "no master is running";
  } catch (const Error& error) {
    EXPECT_NE(error.message().find("rank 1 could not reach the master (rank 0) at 127.0.0.1:" +
                                   std::to_string(port) + " within 0.5 s"),
              std::string::npos)
        << error.message();
  }
}

TEST(ControlPlaneTest, MasterReportsAPortInUse) {
  BoundSocket taken(/*listen_on_it=*/true);
  try {
    ControlPlane control(TestSpec(0, 2, taken.port()));
    FAIL() << "the port is taken";
  } catch (const Error& error) {
    EXPECT_NE(error.message().find("port " + std::to_string(taken.port()) + " is in use"),
              std::string::npos)
        << error.message();
  }
}

TEST(ControlPlaneTest, MasterRefusesDisagreeingRanks) {
  int port = FreePort();
  std::vector<std::exception_ptr> errors = RunOnThreads(2, [&](int64_t thread) {
    if (thread == 0) {
      ControlPlane master(TestSpec(0, 2, port));
      master.Barrier("checked", kWait);
      return;
    }
    auto expect_refused = [&](const ClusterSpec& spec, const std::string& expected) {
      try {
        ControlPlane refused(spec);
        ADD_FAILURE() << "the master should refuse: " << expected;
      } catch (const Error& error) {
        EXPECT_NE(error.message().find(expected), std::string::npos) << error.message();
      }
    };
    expect_refused(TestSpec(1, 3, port), "rank 1 has world size 3 but the master has 2");
    ControlPlane worker(TestSpec(1, 2, port));
    expect_refused(TestSpec(1, 2, port), "rank 1 was already registered by another process");
    worker.Barrier("checked", kWait);
  });
  ExpectNoErrors(errors);
}

TEST(ControlPlaneTest, SpecIsChecked) {
  EXPECT_THROW(ControlPlane(TestSpec(2, 2, FreePort())), Error);
  EXPECT_THROW(ControlPlane(TestSpec(1, 2, 0)), Error);
}

// Ranks other than `crashing_rank` block in Get until the failure wakes them; returns, per rank,
// the message their failure handler received.
std::vector<std::string> CrashOneRank(int64_t world_size, int64_t crashing_rank) {
  int port = FreePort();
  std::vector<std::promise<std::string>> handled(world_size);
  std::vector<std::string> messages(world_size);
  std::vector<std::exception_ptr> errors = RunOnThreads(world_size, [&](int64_t rank) {
    ClusterSpec spec = TestSpec(rank, world_size, port);
    spec.heartbeat_timeout = milliseconds(1000);
    ControlPlane control(spec);
    std::future<std::string> handled_message = handled[rank].get_future();
    control.SetFailureHandler(
        [&handled, rank](const std::string& message) { handled[rank].set_value(message); });
    control.Barrier("handlers set", kWait);
    if (rank == crashing_rank) {
      // Crash only once every other rank is past the barrier (its reply could be lost otherwise).
      for (int64_t peer = 0; peer < world_size; ++peer) {
        if (peer != rank) control.Get("passed/" + std::to_string(peer), kWait);
      }
      control.SimulateCrashForTesting();
      return;
    }
    try {
      // The crash may interrupt the reply to this Set: then it throws the failure too.
      control.Set("passed/" + std::to_string(rank), "");
      control.Get("never set", milliseconds(10000));
      ADD_FAILURE() << "rank " << rank << ": Get should throw once the cluster failed";
    } catch (const Error& error) {
      EXPECT_NE(
          error.message().find("the cluster failed: machine " + std::to_string(crashing_rank)),
          std::string::npos)
          << error.message();
    }
    EXPECT_NE(control.failure(), "");
    // Bounded: the heartbeat thread runs the handler right after the failure is known.
    if (handled_message.wait_for(std::chrono::seconds(5)) == std::future_status::ready) {
      messages[rank] = handled_message.get();
    }
  });
  ExpectNoErrors(errors);
  return messages;
}

TEST(ControlPlaneTest, LostWorkerFailsEveryOtherRank) {
  std::vector<std::string> messages = CrashOneRank(3, 1);
  for (int64_t rank : {0, 2}) {
    EXPECT_EQ(messages[rank],
              "machine 1 (rank 1 of 3) stopped answering heartbeats for 1 s: its process died "
              "or hangs")
        << "rank " << rank;
  }
}

TEST(ControlPlaneTest, LostMasterFailsTheWorkers) {
  std::vector<std::string> messages = CrashOneRank(3, 0);
  for (int64_t rank : {1, 2}) {
    EXPECT_NE(messages[rank].find("machine 0 (rank 0 of 3, the master) stopped answering "
                                  "heartbeats for 1 s"),
              std::string::npos)
        << "rank " << rank << ": " << messages[rank];
  }
}

TEST(ControlPlaneTest, CleanShutdownIsNoFailureAndThePortCanBeReplaced) {
  for (int cluster = 0; cluster < 2; ++cluster) {
    int port = FreePort();
    int64_t world_size = cluster == 0 ? 3 : 2;
    std::atomic<int> handler_calls{0};
    ExpectNoErrors(RunOnThreads(world_size, [&](int64_t rank) {
      ControlPlane control(TestSpec(rank, world_size, port));
      control.SetFailureHandler([&](const std::string&) { ++handler_calls; });
      control.Set("rank/" + std::to_string(rank), "here");
      control.Barrier("all set", kWait);
      for (int64_t peer = 0; peer < world_size; ++peer) {
        EXPECT_EQ(control.Get("rank/" + std::to_string(peer), kWait), "here");
      }
      control.Shutdown();
      control.Shutdown();  // idempotent
      EXPECT_EQ(control.failure(), "");
      EXPECT_THROW(control.Get("rank/0", kWait), Error);  // no calls after shutdown
    }));
    EXPECT_EQ(handler_calls.load(), 0) << "cluster " << cluster;
  }
}

}  // namespace
}  // namespace oneflow
