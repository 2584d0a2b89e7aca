#include "oneflow/runtime/runtime.h"

#include <gtest/gtest.h>

#include <future>
#include <mutex>

#include "oneflow/compiler/pipeline.h"
#include "oneflow/compiler/plan_builder.h"
#include "oneflow/runtime/act_event.h"
#include "oneflow/runtime/job_instance.h"
#include "oneflow/session/variable_store.h"
#include "tests/cpp/test_jobs.h"

namespace oneflow {
namespace {

// x -> identity -> identity -> return, plus a watch on the first identity.
Plan MakeToyPlan(int64_t register_num) {
  JobBuildContext job(test::MakeJobConf("toy", false));
  std::string x = test::AddInput(job, "x", Shape({3}));
  const OperatorConf& first = job.AddOp(OpConfBuilder("identity", "first").Input("in", x).Build());
  std::string first_out = OutputLbn(first, "out");
  const OperatorConf& second =
      job.AddOp(OpConfBuilder("identity", "second").Input("in", first_out).Build());
  job.AddOp(OpConfBuilder("watch", "watch").Input("in", first_out).Attr("handler_id", 7).Build());
  job.AddOp(OpConfBuilder("return", "y").Input("in", OutputLbn(second, "out")).Build());
  CompleteJob(job);
  PlanOptions options;
  options.register_num = register_num;
  return BuildPlan({&job.job()}, options);
}

std::map<std::string, HostTensor> Inputs(float value) {
  HostTensor tensor = HostTensor::Allocate(BlobDesc{Shape({3}), kFloat});
  for (int i = 0; i < 3; ++i) { static_cast<float*>(tensor.data)[i] = value + i; }
  return {{"x", tensor}};
}

TEST(Runtime, RegisterWindowOrderAndEndOfData) {
  constexpr int kPieces = 50;
  Plan plan = MakeToyPlan(2);
  VariableStore variables;
  std::mutex mutex;
  std::vector<float> watched;
  std::vector<int64_t> watched_pieces;
  // Piece 0 is held in the watch kernel until every launch is queued, so the source tick then
  // sees many pending launches at once, whatever the timing.
  std::promise<void> all_launched;
  std::shared_future<void> launched = all_launched.get_future().share();
  WatchHandler handler = [&](int64_t id, int64_t piece_id, const HostTensor& value) {
    EXPECT_EQ(id, 7);
    launched.wait();
    std::lock_guard<std::mutex> lock(mutex);
    watched.push_back(static_cast<const float*>(value.data)[0]);
    watched_pieces.push_back(piece_id);
  };
  std::vector<std::shared_ptr<JobInstance>> instances;
  {
    Runtime runtime(plan, variables, handler, RuntimeOptions());
    // Launch everything before waiting: only the register window limits what is in flight.
    for (int i = 0; i < kPieces; ++i) {
      instances.push_back(std::make_shared<JobInstance>("toy", Inputs(10.0f * i)));
      runtime.Launch("toy", instances.back());
    }
    all_launched.set_value();
    for (int i = 0; i < kPieces; ++i) {
      instances[i]->Wait();
      const HostTensor& out = instances[i]->outputs().at("y");
      EXPECT_EQ(static_cast<const float*>(out.data)[2], 10.0f * i + 2);
    }
    runtime.Stop();  // returns only once every actor has seen end-of-data and finished
    std::map<int64_t, RegstStats> stats = runtime.CollectRegstStats();
    int64_t produced = 0;
    for (const TaskProto& task : plan.task()) { produced += task.produced_regst_desc_size(); }
    EXPECT_EQ(static_cast<int64_t>(stats.size()), produced) << "every actor finished";
    int64_t pipelined = 0;
    for (const auto& entry : stats) {
      EXPECT_LE(entry.second.max_in_flight, 2) << "register desc " << entry.first;
      EXPECT_EQ(entry.second.pieces, kPieces) << "register desc " << entry.first;
      if (entry.second.max_in_flight == 2) { ++pipelined; }
    }
    // Consecutive iterations overlap: a producer moved on to the next piece while its previous
    // register was still being read.
    EXPECT_GT(pipelined, 0);
  }
  ASSERT_EQ(watched.size(), static_cast<size_t>(kPieces));
  for (int i = 0; i < kPieces; ++i) {
    EXPECT_EQ(watched[i], 10.0f * i) << "pieces in order";
    EXPECT_EQ(watched_pieces[i], i) << "the handler is told each value's piece";
  }
}

TEST(Runtime, KernelErrorIsRaisedFromWaitAndNextIterationRuns) {
  Plan plan = MakeToyPlan(2);
  VariableStore variables;
  int calls = 0;
  WatchHandler handler = [&](int64_t, int64_t, const HostTensor&) {
    if (calls++ == 0) { throw Error(ErrorKind::kValue) << "handler failed"; }
  };
  Runtime runtime(plan, variables, handler, RuntimeOptions());
  auto failing = std::make_shared<JobInstance>("toy", Inputs(1));
  runtime.Launch("toy", failing);
  EXPECT_THROW(failing->Wait(), Error);
  auto fine = std::make_shared<JobInstance>("toy", Inputs(2));
  runtime.Launch("toy", fine);
  EXPECT_NO_THROW(fine->Wait());
  runtime.Stop();
}

// The actor timeline of host threads: every act timed by the host clock only (the CPU runs its
// work inline), so the Chrome trace has act events and no device rows.
TEST(Runtime, ActsOnHostThreadsHaveNoDeviceTimes) {
  Plan plan = MakeToyPlan(2);
  VariableStore variables;
  RuntimeOptions options;
  options.collect_act_events = true;
  Runtime runtime(plan, variables, [](int64_t, int64_t, const HostTensor&) {}, options);
  for (int i = 0; i < 3; ++i) {
    auto instance = std::make_shared<JobInstance>("toy", Inputs(1.0f * i));
    runtime.Launch("toy", instance);
    instance->Wait();
  }
  runtime.Stop();
  const std::vector<ActEvent> events = runtime.ActEvents();
  int64_t identity_acts = 0;
  for (const ActEvent& event : events) {
    EXPECT_LE(event.start_us, event.end_us) << event.name;
    EXPECT_EQ(event.device_begin_mark, -1) << event.name;
    EXPECT_EQ(event.device_start_us, -1) << event.name;
    if (event.name == "first@0" || event.name == "second@0") { ++identity_acts; }
  }
  EXPECT_EQ(identity_acts, 6);
  const std::string trace = ActEventsToChromeTrace(events);
  EXPECT_EQ(trace.find("\"cat\": \"device\""), std::string::npos);
  EXPECT_NE(trace.find("\"name\": \"first@0\""), std::string::npos);
}

// An act with device times gets a second event on its thread's device row, named once.
TEST(ActEvents, DeviceTimesGoOnTheDeviceRowOfTheirThread) {
  ActEvent host;
  host.name = "relu@0";
  host.thread_id = 2;
  host.start_us = 10;
  host.end_us = 12;
  ActEvent gpu = host;
  gpu.name = "conv@0";
  gpu.start_us = 12;
  gpu.end_us = 15;
  gpu.device_start_us = 20;
  gpu.device_end_us = 45.5;
  ActEvent gpu_later = gpu;
  gpu_later.device_start_us = 45.5;
  gpu_later.device_end_us = 50;
  const std::string trace = ActEventsToChromeTrace({host, gpu, gpu_later});
  auto count = [&](const std::string& text) {
    int64_t found = 0;
    for (size_t at = trace.find(text); at != std::string::npos; at = trace.find(text, at + 1)) {
      ++found;
    }
    return found;
  };
  EXPECT_EQ(count("\"cat\": \"act\""), 3);
  EXPECT_EQ(count("\"cat\": \"device\""), 2);
  const std::string row = "\"tid\": " + std::to_string(kDeviceRowOffset + 2);
  EXPECT_EQ(count(row), 3) << "two device events and the row's name";
  EXPECT_EQ(count("\"ts\": 20.000, \"dur\": 25.500"), 1) << trace;
  EXPECT_EQ(count("\"name\": \"device stream of thread 2\""), 1) << trace;
}

// x -> `length` identities -> return, every blob `elements` floats.
Plan MakeChainPlan(int64_t length, int64_t elements, int64_t register_num) {
  JobBuildContext job(test::MakeJobConf("chain", false));
  std::string blob = test::AddInput(job, "x", Shape({elements}));
  for (int64_t i = 0; i < length; ++i) {
    const OperatorConf& op = job.AddOp(
        OpConfBuilder("identity", "identity" + std::to_string(i)).Input("in", blob).Build());
    blob = OutputLbn(op, "out");
  }
  job.AddOp(OpConfBuilder("return", "y").Input("in", blob).Build());
  CompleteJob(job);
  PlanOptions options;
  options.register_num = register_num;
  return BuildPlan({&job.job()}, options);
}

std::map<std::string, HostTensor> Ramp(int64_t elements, float start) {
  HostTensor tensor = HostTensor::Allocate(BlobDesc{Shape({elements}), kFloat});
  for (int64_t i = 0; i < elements; ++i) { static_cast<float*>(tensor.data)[i] = start + i; }
  return {{"x", tensor}};
}

// Registers of a chain take memory only while they hold a piece: one call at a time needs the
// register being read and the one being written, not one buffer per op and per register_num.
TEST(Runtime, PooledRegistersOfAChainShareMemory) {
  constexpr int64_t kLength = 8;
  constexpr int64_t kElements = 1 << 18;  // 1 MB per blob
  constexpr int64_t kBlobBytes = kElements * 4;
  Plan plan = MakeChainPlan(kLength, kElements, 2);
  int64_t all_registers = 0;
  for (const TaskProto& task : plan.task()) {
    for (const RegstDescProto& desc : task.produced_regst_desc()) {
      all_registers += desc.byte_size() * desc.register_num();
    }
  }
  ASSERT_GE(all_registers, 2 * (kLength + 1) * kBlobBytes);
  VariableStore variables;
  Runtime runtime(plan, variables, WatchHandler(), RuntimeOptions());
  for (int call = 0; call < 5; ++call) {
    auto instance = std::make_shared<JobInstance>("chain", Ramp(kElements, 100.0f * call));
    runtime.Launch("chain", instance);
    instance->Wait();
    const float* y = static_cast<const float*>(instance->outputs().at("y").data);
    for (int64_t i = 0; i < kElements; i += 4093) {
      ASSERT_EQ(y[i], 100.0f * call + i) << "call " << call << ", element " << i;
    }
  }
  runtime.Stop();
  EXPECT_EQ(runtime.registers().fixed_bytes(), 0);
  EXPECT_GT(runtime.registers().pooled_peak_in_use_bytes(), 0);
  EXPECT_LE(runtime.registers().pooled_peak_in_use_bytes(), 3 * kBlobBytes);
  EXPECT_LE(runtime.registers().pooled_reserved_bytes(), 3 * kBlobBytes);
}

// Many calls in flight: a register's memory is reused only after its last reader returned it,
// so every piece still comes out intact.
TEST(Runtime, PooledRegistersKeepEveryPieceInFlightIntact) {
  constexpr int kPieces = 40;
  constexpr int64_t kElements = 4096;
  for (int64_t register_num : {1, 2, 3}) {
    Plan plan = MakeChainPlan(6, kElements, register_num);
    VariableStore variables;
    Runtime runtime(plan, variables, WatchHandler(), RuntimeOptions());
    std::vector<std::shared_ptr<JobInstance>> instances;
    for (int i = 0; i < kPieces; ++i) {
      instances.push_back(std::make_shared<JobInstance>("chain", Ramp(kElements, 7.0f * i)));
      runtime.Launch("chain", instances.back());
    }
    for (int i = 0; i < kPieces; ++i) {
      instances[i]->Wait();
      const float* y = static_cast<const float*>(instances[i]->outputs().at("y").data);
      for (int64_t j = 0; j < kElements; j += 511) {
        ASSERT_EQ(y[j], 7.0f * i + j) << "register_num " << register_num << ", piece " << i;
      }
    }
    runtime.Stop();
  }
}

TEST(Runtime, ARegisterThatCanNeverFitFailsWhenThePlanStarts) {
  Plan plan = MakeChainPlan(1, int64_t{1} << 52, 2);  // 16 PB per blob
  VariableStore variables;
  try {
    Runtime runtime(plan, variables, WatchHandler(), RuntimeOptions());
    FAIL() << "a 16 PB register was allocated";
  } catch (const Error& error) {
    EXPECT_NE(error.message().find("out of memory: cannot allocate"), std::string::npos)
        << error.message();
    EXPECT_NE(error.message().find("op '"), std::string::npos) << error.message();
  }
}

}  // namespace
}  // namespace oneflow
