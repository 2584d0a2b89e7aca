#pragma once
// A session: the jobs traced from Python's global functions, the variables they share, and the
// runtime running their Plan. Defining a job after the session has started is allowed: Python
// stops the runtime, traces the new job, and starts again; variables keep their values.

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "oneflow/device/gpu_options.h"
#include "oneflow/framework/kernel.h"
#include "oneflow/job/job_build_context.h"
#include "oneflow/runtime/act_event.h"
#include "oneflow/runtime/actor.h"
#include "oneflow/session/variable_store.h"
#include "proto/cluster.pb.h"
#include "proto/plan.pb.h"

namespace oneflow {

class Cluster;
class JobInstance;
class Runtime;

struct SessionOptions {
  int64_t cpu_device_num = 0;  // 0: not configured (see DeviceResource)
  // GPUs of each machine that "gpu" placements run on; 0: they run on the CPU devices of the
  // same ids (device_resolution.h).
  int64_t gpu_device_num = 0;
  // Threads per CPU device (BLAS and ParallelFor); 0: the machine's cores divided among the
  // devices the Plan uses.
  int64_t compute_threads = 0;
  GpuOptions gpu;  // how GPU kernels may compute, on every machine
  int64_t register_num = 2;
  std::string debug_dir;        // non-empty: dump jobs and the plan there at Start()
  // Non-empty: record the actor timeline and write it there (Chrome trace JSON) at each Stop().
  std::string act_event_file;
  // Several processes: this session is the master (machine 0) of `cluster` (owned by the caller,
  // outliving the session). Its Plan's tasks on other machines run there, its calls span them.
  Cluster* cluster = nullptr;
  // Processes sharing this host's cores (the launcher's LOCAL_WORLD_SIZE): compute_threads 0
  // divides the cores among them too.
  int64_t processes_per_host = 1;
};

class Session {
 public:
  explicit Session(const SessionOptions& options);
  ~Session();

  // Tracing: one job is open at a time.
  JobBuildContext& OpenJob(const JobConf& job_conf);
  JobBuildContext& CurrentJob();
  // Runs the compiler passes on the open job and keeps it.
  void CloseJob();
  // Drops the open job (its tracing failed).
  void AbortJob();
  bool HasJob(const std::string& job_name) const;
  // Forgets a closed job (e.g. one whose Plan could not start); the runtime must be stopped.
  void RemoveJob(const std::string& job_name);
  const Job& GetJob(const std::string& job_name) const;

  // Compiles all closed jobs into one Plan, declares their variables, starts the runtime.
  void Start();
  // Waits for nothing: callers make sure no iteration is in flight (Python syncs first).
  void Stop();
  bool running() const { return runtime_ != nullptr; }
  // Checks `inputs` against the job's input ops, then starts one iteration.
  std::shared_ptr<JobInstance> Launch(const std::string& job_name,
                                      std::map<std::string, HostTensor> inputs);
  const Plan& plan() const { return plan_; }
  const JobInfo& GetJobInfo(const std::string& job_name) const;

  VariableStore& variables() { return variables_; }
  // A variable's logical value. In a cluster, first fetches the parts that other machines
  // updated since the last fetch.
  HostTensor VariableValue(const std::string& name);
  // Replaces variables' values (checked first, see VariableStore::SetValues); in a cluster, the
  // running Plan's other machines get their parts too. No call may be in flight.
  void SetVariableValues(const std::map<std::string, HostTensor>& values);
  void SetWatchHandler(WatchHandler handler) { watch_handler_ = std::move(handler); }
  const SessionOptions& options() const { return options_; }

 private:
  // The devices jobs may place ops on (from the options and the cluster).
  DeviceResource Resource() const;

  SessionOptions options_;
  std::vector<std::unique_ptr<JobBuildContext>> jobs_;
  std::unique_ptr<JobBuildContext> open_job_;
  VariableStore variables_;
  WatchHandler watch_handler_;
  Plan plan_;
  std::unique_ptr<Runtime> runtime_;
  std::vector<ActEvent> act_events_;  // of every runtime of this session

  // Cluster (master) side of the running Plan.
  struct RemoteMachine {
    int64_t start_seq = 0;  // the start command's
    std::thread watcher;    // waits for the machine's abort report (WatchForAbort)
  };
  void StartRemote();
  void StopRemote(bool failed);
  void WatchForAbort(int64_t machine);
  // Sends each other machine its command, then waits for every reply (errors name the machine).
  std::map<int64_t, ClusterReply> CommandRemotes(
      const std::function<ClusterCommand(int64_t machine)>& command_for);
  void PullVariables();
  int64_t generation_ = 0;
  std::mutex runtime_mutex_;  // runtime_ against the cluster's failure handler
  std::map<int64_t, std::unique_ptr<RemoteMachine>> remotes_;
  bool remote_variables_stale_ = false;  // launched since the last PullVariables
};

}  // namespace oneflow
