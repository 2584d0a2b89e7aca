#include "oneflow/session/session.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "oneflow/compiler/pipeline.h"
#include "oneflow/compiler/plan_builder.h"
#include "oneflow/compiler/plan_dump.h"
#include "oneflow/runtime/job_instance.h"
#include "oneflow/runtime/runtime.h"
#include "oneflow/sbp/tensor_slice.h"
#include "oneflow/session/cluster.h"

namespace oneflow {

Session::Session(const SessionOptions& options) : options_(options) {
  watch_handler_ = [](int64_t, int64_t, const HostTensor&) {};
}

Session::~Session() {
  try {
    Stop();
  } catch (...) {
    // Python stops the session explicitly (and sees errors there); a destructor cannot throw.
  }
}

JobBuildContext& Session::OpenJob(const JobConf& job_conf) {
  if (open_job_) {
    throw Error(ErrorKind::kRuntime) << "cannot start tracing job '" << job_conf.job_name()
                                     << "' while job '" << open_job_->job_name()
                                     << "' is being traced";
  }
  if (HasJob(job_conf.job_name())) {
    throw Error(ErrorKind::kValue) << "a job named '" << job_conf.job_name()
                                   << "' already exists in this session";
  }
  open_job_ = std::make_unique<JobBuildContext>(job_conf, Resource());
  return *open_job_;
}

DeviceResource Session::Resource() const {
  DeviceResource resource;
  resource.cpu_device_num = options_.cpu_device_num;
  resource.gpu_device_num = options_.gpu_device_num;
  resource.machine_num = options_.cluster == nullptr ? 1 : options_.cluster->machine_num();
  return resource;
}

JobBuildContext& Session::CurrentJob() {
  if (!open_job_) {
    throw Error(ErrorKind::kRuntime)
        << "no job is being traced: ops can only be created inside a @flow.global_function";
  }
  return *open_job_;
}

void Session::CloseJob() {
  CurrentJob();
  if (!options_.debug_dir.empty()) { DumpJob(options_.debug_dir, open_job_->job(), "traced"); }
  CompleteJob(*open_job_);
  if (!options_.debug_dir.empty()) { DumpJob(options_.debug_dir, open_job_->job(), "completed"); }
  jobs_.push_back(std::move(open_job_));
}

void Session::AbortJob() { open_job_.reset(); }

bool Session::HasJob(const std::string& job_name) const {
  for (const auto& job : jobs_) {
    if (job->job_name() == job_name) { return true; }
  }
  return false;
}

void Session::RemoveJob(const std::string& job_name) {
  if (runtime_) {
    throw Error(ErrorKind::kRuntime) << "cannot remove job '" << job_name
                                     << "' while the session is running";
  }
  for (auto it = jobs_.begin(); it != jobs_.end(); ++it) {
    if ((*it)->job_name() == job_name) {
      jobs_.erase(it);
      return;
    }
  }
  throw Error(ErrorKind::kValue) << "no job named '" << job_name << "'";
}

const Job& Session::GetJob(const std::string& job_name) const {
  for (const auto& job : jobs_) {
    if (job->job_name() == job_name) { return job->job(); }
  }
  throw Error(ErrorKind::kValue) << "no job named '" << job_name << "'";
}

const JobInfo& Session::GetJobInfo(const std::string& job_name) const {
  for (const JobInfo& info : plan_.job()) {
    if (info.job_name() == job_name) { return info; }
  }
  throw Error(ErrorKind::kValue) << "no compiled job named '" << job_name << "'";
}

void Session::Start() {
  if (runtime_) { return; }
  std::vector<const Job*> jobs;
  for (const auto& job : jobs_) { jobs.push_back(&job->job()); }
  // A variable is stored in one layout: every job must place and lay it out alike (the same
  // devices however written, "0:0" or "0:0-0").
  std::map<std::string, std::pair<std::string, const OperatorConf*>> layouts;  // name -> sbp, op
  auto describe = [](const OperatorConf& op, const std::string& sbp) {
    return PlacementToString(op.placement()) + " " + sbp;
  };
  for (const Job* job : jobs) {
    for (const OperatorConf& op : job->op()) {
      if (op.op_type() != "variable") { continue; }
      auto found = op.sbp_signature().argument_to_sbp().find("out_0");
      const std::string sbp = found == op.sbp_signature().argument_to_sbp().end()
                                  ? "B"
                                  : SbpToString(found->second);
      auto [it, inserted] = layouts.emplace(op.name(), std::make_pair(sbp, &op));
      const OperatorConf& first = *it->second.second;
      if (!inserted && (it->second.first != sbp ||
                        first.placement().device_tag() != op.placement().device_tag() ||
                        !SamePlacement(first.placement(), op.placement()))) {
        throw Error(ErrorKind::kValue)
            << "variable '" << op.name() << "' is laid out as " << describe(first, it->second.first)
            << " in one job and as " << describe(op, sbp) << " in job '"
            << job->job_conf().job_name() << "'; jobs sharing a variable must place it alike";
      }
    }
  }
  for (const auto& entry : layouts) { variables_.Declare(*entry.second.second); }
  PlanOptions plan_options;
  plan_options.register_num = options_.register_num;
  plan_options.resource = Resource();
  std::vector<TaskGraphProto> task_graphs;
  plan_ = BuildPlan(jobs, plan_options, &task_graphs);
  if (!options_.debug_dir.empty()) {
    for (const TaskGraphProto& graph : task_graphs) { DumpTaskGraph(options_.debug_dir, graph); }
    DumpPlan(options_.debug_dir, plan_);
  }
  Cluster* cluster = options_.cluster;
  const int64_t machines = cluster == nullptr ? 1 : cluster->machine_num();
  if (plan_.machine_num() > machines) {
    throw Error(ErrorKind::kValue)
        << "the jobs place ops on machine " << plan_.machine_num() - 1 << ", but this run has "
        << machines
        << (machines == 1 ? " machine (start one process per machine, e.g. with "
                            "python -m oneflow.distributed.launch)"
                          : " machines");
  }
  RuntimeOptions runtime_options;
  runtime_options.compute_threads = options_.compute_threads;
  runtime_options.gpu = options_.gpu;
  if (runtime_options.compute_threads == 0) {
    std::set<int64_t> used_threads;
    for (const TaskProto& task : plan_.task()) {
      // GPU threads only enqueue work: the cores go to the CPU devices.
      if (task.machine_id() == 0 && task.device_tag() != "gpu") {
        used_threads.insert(task.thread_id());
      }
    }
    const int64_t cores = std::max<int64_t>(
        1, std::thread::hardware_concurrency() / std::max<int64_t>(1, options_.processes_per_host));
    runtime_options.compute_threads =
        std::max<int64_t>(1, cores / std::max<int64_t>(1, used_threads.size()));
  }
  runtime_options.collect_act_events = !options_.act_event_file.empty();
  if (cluster != nullptr) {
    generation_ = cluster->NewGeneration();
    runtime_options.data_plane = &cluster->data_plane();
    runtime_options.generation = generation_;
    runtime_options.explain_peer_lost = [cluster] { return cluster->AwaitPeerFailure(); };
    // The workers build their runtimes while this one is built: they connect to each other.
    for (int64_t machine = 1; machine < machines; ++machine) {
      ClusterCommand command;
      StartCommand* start = command.mutable_start();
      *start->mutable_plan() = plan_;
      start->set_generation(generation_);
      start->set_compute_threads(runtime_options.compute_threads);
      start->set_gpu_allow_tf32(options_.gpu.allow_tf32);
      start->set_gpu_conv_heuristic_search(options_.gpu.conv_heuristic_search);
      *start->mutable_variables() = CollectVariableParts(variables_, plan_, machine);
      remotes_[machine] = std::make_unique<RemoteMachine>();
      remotes_[machine]->start_seq = cluster->SendCommand(machine, command);
    }
  }
  auto runtime = std::make_unique<Runtime>(plan_, variables_, watch_handler_, runtime_options);
  {
    std::lock_guard<std::mutex> lock(runtime_mutex_);
    runtime_ = std::move(runtime);
  }
  if (cluster != nullptr) { StartRemote(); }
}

void Session::StartRemote() {
  Cluster* cluster = options_.cluster;
  cluster->control().SetFailureHandler([this](const std::string& message) {
    std::lock_guard<std::mutex> lock(runtime_mutex_);
    if (runtime_) {
      runtime_->Abort(std::make_exception_ptr(Error(ErrorKind::kRuntime) << message));
    }
  });
  try {
    for (auto& entry : remotes_) { cluster->AwaitReply(entry.first, entry.second->start_seq); }
  } catch (...) {
    remotes_.clear();
    Stop();
    throw;
  }
  for (auto& entry : remotes_) {
    RemoteMachine* remote = entry.second.get();
    remote->watcher = std::thread([this, machine = entry.first] { WatchForAbort(machine); });
  }
}

// A worker whose runtime stops on an error says so once (Cluster::ReportAbort); machine 0's
// runtime then stops too, so no call waits for that worker's part. The worker's stop releases
// the watcher with an empty report.
void Session::WatchForAbort(int64_t machine) {
  std::string message;
  try {
    message = options_.cluster->AwaitAbort(machine, generation_);
  } catch (std::exception&) {
    return;  // the cluster failed: the failure handler stops the runtime, naming the lost machine
  }
  if (message.empty()) { return; }
  std::lock_guard<std::mutex> lock(runtime_mutex_);
  if (runtime_) {
    runtime_->Abort(std::make_exception_ptr(Error(ErrorKind::kRuntime)
                                            << "machine " << machine << " stopped: " << message));
  }
}

std::map<int64_t, ClusterReply> Session::CommandRemotes(
    const std::function<ClusterCommand(int64_t machine)>& command_for) {
  std::map<int64_t, int64_t> seqs;  // all sent first: the machines serve them at once
  for (auto& entry : remotes_) {
    seqs[entry.first] = options_.cluster->SendCommand(entry.first, command_for(entry.first));
  }
  std::map<int64_t, ClusterReply> replies;
  for (auto& entry : seqs) {
    replies[entry.first] = options_.cluster->AwaitReply(entry.first, entry.second);
  }
  return replies;
}

void Session::PullVariables() {
  if (remotes_.empty() || !remote_variables_stale_) { return; }
  ClusterCommand command;
  command.set_pull_variables(true);
  for (auto& entry : CommandRemotes([&](int64_t) { return command; })) {
    StoreVariableParts(variables_, entry.second.variables());
  }
  remote_variables_stale_ = false;
}

// After machine 0's runtime has stopped (every transfer to the workers is done): the master's
// copy of the variables is made whole, then the workers stop their runtimes. After a failure
// the workers are told to abandon what they were doing.
void Session::StopRemote(bool failed) {
  if (remotes_.empty()) { return; }
  Cluster* cluster = options_.cluster;
  std::exception_ptr error;
  if (cluster->control().failure().empty()) {
    try {
      if (!failed) { PullVariables(); }
      ClusterCommand command;
      command.set_stop(true);
      command.set_abandon(failed);
      CommandRemotes([&](int64_t) { return command; });
    } catch (...) { error = std::current_exception(); }
  }
  for (auto& entry : remotes_) {
    // A watcher ends with its worker's stop, or with the cluster's failure.
    if (entry.second->watcher.joinable()) { entry.second->watcher.join(); }
  }
  remotes_.clear();
  remote_variables_stale_ = false;
  if (error && !failed) { std::rethrow_exception(error); }
}

HostTensor Session::VariableValue(const std::string& name) {
  PullVariables();
  if (runtime_) { runtime_->PullVariables(); }
  return variables_.Value(name);
}

void Session::SetVariableValues(const std::map<std::string, HostTensor>& values) {
  // First the other machines' current parts: pushing back below must not undo their updates of
  // the variables not set here.
  PullVariables();
  if (runtime_) { runtime_->PullVariables(); }
  variables_.SetValues(values);
  if (runtime_) { runtime_->PushVariables(); }
  CommandRemotes([&](int64_t machine) {
    ClusterCommand command;
    *command.mutable_push_variables() = CollectVariableParts(variables_, plan_, machine);
    return command;
  });
}

void Session::Stop() {
  if (!runtime_) { return; }
  const bool failed = runtime_->aborted();
  runtime_->Stop();
  std::exception_ptr remote_error;
  try {
    StopRemote(failed || runtime_->aborted());
  } catch (...) { remote_error = std::current_exception(); }
  if (!options_.act_event_file.empty()) {
    std::vector<ActEvent> events = runtime_->ActEvents();
    const double offset = act_events_.empty() ? 0.0 : act_events_.back().end_us;
    for (ActEvent& event : events) {  // later runtimes continue the timeline
      event.start_us += offset;
      event.end_us += offset;
      if (event.device_start_us >= 0) {
        event.device_start_us += offset;
        event.device_end_us += offset;
      }
      act_events_.push_back(std::move(event));
    }
    std::filesystem::path path(options_.act_event_file);
    if (path.has_parent_path()) { std::filesystem::create_directories(path.parent_path()); }
    std::ofstream file(path);
    if (!file) {
      throw Error(ErrorKind::kRuntime) << "cannot write the actor timeline to " << path.string();
    }
    file << ActEventsToChromeTrace(act_events_);
  }
  {
    std::lock_guard<std::mutex> lock(runtime_mutex_);
    runtime_.reset();
  }
  if (remote_error) { std::rethrow_exception(remote_error); }
}

std::shared_ptr<JobInstance> Session::Launch(const std::string& job_name,
                                             std::map<std::string, HostTensor> inputs) {
  if (!runtime_) { throw Error(ErrorKind::kRuntime) << "the session is not running"; }
  const JobInfo& info = GetJobInfo(job_name);
  for (const auto& entry : info.input()) {
    auto it = inputs.find(entry.first);
    BlobDesc expected = BlobDesc::FromProto(entry.second);
    if (it == inputs.end()) {
      throw Error(ErrorKind::kValue) << "job '" << job_name << "': no value given for input '"
                                     << entry.first << "' " << expected.ToString();
    }
    if (it->second.desc.data_type != expected.data_type) {
      throw Error(ErrorKind::kType) << "job '" << job_name << "': input '" << entry.first
                                    << "' expects dtype " << DataTypeName(expected.data_type)
                                    << ", got " << DataTypeName(it->second.desc.data_type);
    }
    if (it->second.desc.shape != expected.shape) {
      throw Error(ErrorKind::kValue) << "job '" << job_name << "': input '" << entry.first
                                     << "' expects shape " << expected.shape.ToString()
                                     << ", got " << it->second.desc.shape.ToString();
    }
  }
  for (const auto& entry : inputs) {
    if (!info.input().count(entry.first)) {
      throw Error(ErrorKind::kValue) << "job '" << job_name << "' has no input named '"
                                     << entry.first << "'";
    }
  }
  auto instance = std::make_shared<JobInstance>(job_name, std::move(inputs));
  // Other machines start the iteration when machine 0's source tick reaches them.
  if (!remotes_.empty()) { remote_variables_stale_ = true; }
  runtime_->Launch(job_name, instance);
  return instance;
}

}  // namespace oneflow
