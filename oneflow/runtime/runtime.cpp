#include "oneflow/runtime/runtime.h"

#include <algorithm>
#include <cstdio>

#include "oneflow/comm/gloo_communicator.h"
#include "oneflow/comm/in_process_communicator.h"
#include "oneflow/comm/nccl_communicator.h"
#include "oneflow/comm/point_to_point.h"
#include "oneflow/common/error.h"
#include "oneflow/device/cpu_device_context.h"
#include "oneflow/device/cuda_device_context.h"
#include "oneflow/runtime/job_instance.h"

namespace oneflow {

Runtime::Runtime(const Plan& plan, VariableStore& variables, WatchHandler watch_handler,
                 const RuntimeOptions& options)
    : plan_(plan),
      machine_id_(options.machine_id),
      watch_handler_(std::move(watch_handler)),
      registers_(plan_, variables, options.machine_id) {
  // Collectives run their shares on the devices' own threads (thread id = device id on this
  // machine).
  communicator_ = std::make_unique<InProcessCommunicator>(
      [this](int64_t /*machine*/, int64_t device, std::function<void()> work) {
        ActorMessage message;
        message.type = ActorMessageType::kCall;
        message.call = std::move(work);
        threads_.at(device)->Send(std::move(message));
      });
#ifdef ONEFLOW_WITH_CUDA
  if (NcclCommunicator::Needed(plan_, machine_id_)) {
    gpu_communicator_ = std::make_unique<NcclCommunicator>(
        plan_, machine_id_, options.data_plane, "plan" + std::to_string(options.generation));
    actor_context_.gpu_communicator = gpu_communicator_.get();
  }
#endif
  actor_context_.bus = &bus_;
  actor_context_.watch_handler = &watch_handler_;
  actor_context_.registers = &registers_;
  actor_context_.communicator = communicator_.get();
  if (options.data_plane != nullptr) {
    point_to_point_ = std::make_unique<PointToPoint>(*options.data_plane, options.generation);
    cross_machine_communicator_ = std::make_unique<GlooCommunicator>(
        *options.data_plane, plan_, "plan" + std::to_string(options.generation));
    actor_context_.point_to_point = point_to_point_.get();
    actor_context_.cross_machine_communicator = cross_machine_communicator_.get();
  }
  actor_context_.on_fatal_error = [this](std::exception_ptr error) { Abort(error); };
  on_abort_ = options.on_abort;
  explain_peer_lost_ = options.explain_peer_lost;
  actor_context_.collect_act_events = options.collect_act_events;
  actor_context_.start_time = std::chrono::steady_clock::now();
  actor_context_.on_iteration_finished = [this](int64_t job_id, JobInstance* instance) {
    OnIterationFinished(job_id, instance);
  };
  for (const TaskProto& task : plan_.task()) {
    for (const RegstDescProto& regst : task.produced_regst_desc()) {
      actor_context_.regst_descs[regst.regst_desc_id()] = &regst;
    }
  }
  for (const JobInfo& job : plan_.job()) {
    if (job.machine_source_tick().count(machine_id_)) { job_ids_[job.job_name()] = job.job_id(); }
  }
  for (int64_t i = 0; i < plan_.thread_num(); ++i) {
    threads_.push_back(std::make_unique<Thread>(
        i, NewDeviceContext(i, options), [this](std::exception_ptr error) { Abort(error); }));
  }
  std::vector<Actor*> actors;
  for (const TaskProto& task : plan_.task()) {
    if (task.machine_id() != machine_id_) { continue; }
    Thread& thread = *threads_.at(task.thread_id());
    std::unique_ptr<Actor> actor = NewActor(task, actor_context_, thread.device());
    bus_.Register(task.task_id(), &thread);
    if (actor->own_stream() == nullptr) {
      actor_context_.device_stream_thread[task.task_id()] = task.thread_id();
    }
    actors.push_back(actor.get());
    thread.AddActor(std::move(actor));
  }
  // Messages sent now wait in the threads' queues.
  for (Actor* actor : actors) { actor->OnRuntimeStarted(); }
  for (auto& thread : threads_) { thread->Start(); }
}

std::unique_ptr<DeviceContext> Runtime::NewDeviceContext(int64_t thread_id,
                                                         const RuntimeOptions& options) {
  if (thread_id >= plan_.thread_size() || plan_.thread(thread_id).device_tag() != "gpu") {
    return std::make_unique<CpuDeviceContext>(options.compute_threads);
  }
#ifdef ONEFLOW_WITH_CUDA
  return std::make_unique<CudaDeviceContext>(
      plan_.thread(thread_id).device_id(), [this](std::exception_ptr error) { Abort(error); },
      options.gpu);
#else
  throw Error(ErrorKind::kRuntime)
      << "the plan runs tasks on GPU " << plan_.thread(thread_id).device_id()
      << ", but this build has no CUDA";
#endif
}

Runtime::~Runtime() {
  Stop();
  // A GPU stream's callbacks post to other threads: all of them run before any thread goes.
  for (auto& thread : threads_) {
    try {
      thread->device().Synchronize();
    } catch (std::exception& error) {
      std::fprintf(stderr, "oneflow: a device did not finish its work: %s\n", error.what());
    }
  }
  if (!aborted()) {
    try {
      registers_.PullVariables();  // the session keeps the values the GPUs computed
    } catch (std::exception& error) {
      std::fprintf(stderr, "oneflow: could not copy the GPU variables back: %s\n", error.what());
    }
  }
  point_to_point_.reset();
  // After an abort, collectives waiting for a peer that stopped answering are left behind.
  const bool left_behind = cross_machine_communicator_ != nullptr && aborted();
  cross_machine_communicator_.reset();
  if (left_behind) { registers_.LeakMemory(); }
}

bool Runtime::aborted() const {
  std::lock_guard<std::mutex> lock(launch_mutex_);
  return static_cast<bool>(abort_error_);
}

void Runtime::Launch(const std::string& job_name, std::shared_ptr<JobInstance> instance) {
  auto it = job_ids_.find(job_name);
  if (it == job_ids_.end()) {
    throw Error(ErrorKind::kValue) << "the running plan has no job named '" << job_name << "'";
  }
  std::lock_guard<std::mutex> lock(launch_mutex_);
  if (abort_error_) { std::rethrow_exception(abort_error_); }
  if (stopped_) { throw Error(ErrorKind::kRuntime) << "the runtime has been stopped"; }
  in_flight_[instance.get()] = instance;
  if (waiting_.empty() && (running_count_ == 0 || running_job_ == it->second)) {
    running_job_ = it->second;
    ++running_count_;
    SendLaunch(it->second, std::move(instance));
  } else {
    waiting_.emplace_back(it->second, std::move(instance));
  }
}

void Runtime::SendLaunch(int64_t job_id, std::shared_ptr<JobInstance> instance) {
  ActorMessage message;
  message.type = ActorMessageType::kLaunch;
  message.dst_actor_id = plan_.job(job_id).machine_source_tick().at(machine_id_);
  message.job_instance = std::move(instance);
  bus_.Send(std::move(message));
}

void Runtime::OnIterationFinished(int64_t job_id, JobInstance* instance) {
  std::lock_guard<std::mutex> lock(launch_mutex_);
  in_flight_.erase(instance);
  OF_CHECK(running_job_ == job_id && running_count_ > 0)
      << "iteration of job " << job_id << " finished while job " << running_job_ << " runs";
  if (--running_count_ > 0) { return; }
  running_job_ = -1;
  // Admit the next job's consecutive launches together, so they pipeline.
  while (!waiting_.empty() && (running_job_ == -1 || waiting_.front().first == running_job_)) {
    running_job_ = waiting_.front().first;
    ++running_count_;
    SendLaunch(waiting_.front().first, std::move(waiting_.front().second));
    waiting_.pop_front();
  }
}

void Runtime::Abort(std::exception_ptr error) {
  if (explain_peer_lost_) {
    try {
      std::rethrow_exception(error);
    } catch (Error& cause) {
      if (cause.kind() == ErrorKind::kPeerLost) {
        const std::string reason = explain_peer_lost_();  // may wait a few seconds
        if (!reason.empty()) {
          error = std::make_exception_ptr(Error(ErrorKind::kRuntime)
                                          << reason << " (seen here as: " << cause.what() << ")");
        }
      }
    } catch (...) {}
  }
  std::map<JobInstance*, std::shared_ptr<JobInstance>> failed;
  {
    std::lock_guard<std::mutex> lock(launch_mutex_);
    if (abort_error_) { return; }
    try {
      std::rethrow_exception(error);
    } catch (Error& cause) {
      Error wrapped(cause.kind());
      wrapped << cause.what();
      wrapped.AddContext("the runtime stopped: every call in flight fails, and so will later calls "
                         "until the session is cleared (flow.clear_default_session())");
      abort_error_ = std::make_exception_ptr(wrapped);
    } catch (std::exception& cause) {
      abort_error_ = std::make_exception_ptr(
          Error(ErrorKind::kRuntime)
          << cause.what() << "\n  the runtime stopped: every call in flight fails, and so will "
          << "later calls until the session is cleared (flow.clear_default_session())");
    } catch (...) {
      abort_error_ = std::make_exception_ptr(Error(ErrorKind::kRuntime)
                                             << "the runtime stopped on an unknown exception");
    }
    failed.swap(in_flight_);
    waiting_.clear();
  }
  for (auto& thread : threads_) { thread->Abort(); }
  if (point_to_point_) { point_to_point_->Abort(); }
  if (on_abort_) {
    try {
      try {
        std::rethrow_exception(error);
      } catch (std::exception& cause) { on_abort_(cause.what()); }
    } catch (...) {
      // Telling others is best effort: they also learn of a lost peer from the control plane.
    }
  }
  if (cross_machine_communicator_) { cross_machine_communicator_->Abort(); }
  for (auto& entry : failed) {
    entry.second->AddError(abort_error_);
    entry.second->FinishNow();
  }
}

void Runtime::Stop() {
  std::deque<std::pair<int64_t, std::shared_ptr<JobInstance>>> never_started;
  {
    std::lock_guard<std::mutex> lock(launch_mutex_);
    if (stopped_) { return; }
    stopped_ = true;
    never_started.swap(waiting_);
    for (auto& entry : never_started) { in_flight_.erase(entry.second.get()); }
  }
  for (auto& entry : never_started) {
    entry.second->AddError(std::make_exception_ptr(
        Error(ErrorKind::kRuntime) << "the session stopped before this call of job '"
                                   << entry.second->job_name() << "' could start"));
    entry.second->FinishNow();
  }
  // Every source of this machine: the source ticks of machine 0, and on other machines the
  // receivers of machine 0's ticks (which nothing more will be sent to).
  for (const TaskProto& task : plan_.task()) {
    if (task.machine_id() != machine_id_ || task.consumed_regst_desc_id_size() > 0) { continue; }
    ActorMessage message;
    message.type = ActorMessageType::kStop;
    message.dst_actor_id = task.task_id();
    bus_.Send(std::move(message));
  }
  for (auto& thread : threads_) { thread->Join(); }
}

std::vector<ActEvent> Runtime::ActEvents() const {
  std::vector<ActEvent> events;
  for (const auto& thread : threads_) {
    const size_t first = events.size();
    thread->ForEachFinishedActor([&](const Actor& actor) {
      events.insert(events.end(), actor.act_events().begin(), actor.act_events().end());
    });
    // Device marks to times: mark 0 was made when the device was idle (the thread's first act
    // on it), so it ran at about the host time of that act's start.
    double mark0_host_us = -1;
    for (size_t i = first; i < events.size(); ++i) {
      if (events[i].device_begin_mark == 0) { mark0_host_us = events[i].start_us; }
    }
    if (mark0_host_us < 0) { continue; }
    DeviceContext& device = thread->device();
    for (size_t i = first; i < events.size(); ++i) {
      ActEvent& event = events[i];
      if (event.device_begin_mark < 0 || event.device_end_mark < 0) { continue; }
      event.device_start_us =
          mark0_host_us + device.MicrosecondsBetween(0, event.device_begin_mark);
      event.device_end_us = mark0_host_us + device.MicrosecondsBetween(0, event.device_end_mark);
    }
  }
  std::sort(events.begin(), events.end(),
            [](const ActEvent& a, const ActEvent& b) { return a.start_us < b.start_us; });
  return events;
}

std::map<int64_t, RegstStats> Runtime::CollectRegstStats() const {
  std::map<int64_t, RegstStats> stats;
  for (const auto& thread : threads_) {
    thread->ForEachFinishedActor([&](const Actor& actor) {
      for (const auto& entry : actor.stats()) { stats[entry.first] = entry.second; }
    });
  }
  return stats;
}

}  // namespace oneflow
