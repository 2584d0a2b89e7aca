#pragma once
// Runtime: instantiates a Plan as threads and actors and runs job instances through it.
// Python's calls become Launch(); iterations of the same job pipeline through the Plan, while
// iterations of different jobs (which may share variables) run one job at a time, in launch
// order. Stop() sends end-of-data through every job and joins the threads.
//
// An exception that escapes an actor (a broken invariant, not a kernel's user error, which stays
// with its iteration) aborts the runtime: every thread stops, every call in flight or queued
// fails with that error, and later launches raise it. The process never terminates.

#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "oneflow/comm/communicator.h"
#include "oneflow/device/gpu_options.h"
#include "oneflow/runtime/actor.h"
#include "oneflow/runtime/register_manager.h"
#include "oneflow/runtime/thread.h"
#include "proto/plan.pb.h"

namespace oneflow {

class JobInstance;
class VariableStore;

class DataPlane;
class GlooCommunicator;
class PointToPoint;

struct RuntimeOptions {
  int64_t compute_threads = 1;  // threads per CPU device for ParallelFor and BLAS
  GpuOptions gpu;               // how GPU kernels may compute
  bool collect_act_events = false;  // record the actor timeline (ActEvents())
  // Several processes: this process runs the tasks of machine `machine_id` only, and reaches the
  // others through `data_plane` (which outlives the runtime).
  int64_t machine_id = 0;
  DataPlane* data_plane = nullptr;
  int64_t generation = 0;  // of the Plan on this data plane: names its channels and rendezvous
  // Called once when the runtime aborts, with the error's message (a worker tells machine 0).
  std::function<void(const std::string& message)> on_abort;
  // When a transfer with another machine breaks (ErrorKind::kPeerLost), the runtime asks this
  // for the reason (waiting, bounded, for the control plane to name the lost machine); empty: no
  // better reason than the transfer's own error.
  std::function<std::string()> explain_peer_lost;
};

// Threads and actors are created for the tasks of this machine only.
class Runtime {
 public:
  Runtime(const Plan& plan, VariableStore& variables, WatchHandler watch_handler,
          const RuntimeOptions& options);
  ~Runtime();

  // Starts one iteration of `job_name` for `instance` (at once, or after the iterations of
  // another job in flight have finished). Never blocks. Throws if the runtime has stopped or
  // aborted.
  void Launch(const std::string& job_name, std::shared_ptr<JobInstance> instance);
  // Ends every job's stream of iterations; waits for all actors to finish. Idempotent.
  void Stop();
  // Register instrumentation of every actor, by register desc id (valid after Stop()).
  std::map<int64_t, RegstStats> CollectRegstStats() const;
  // The registers and their memory: fixed bytes, the pools' reserved and peak bytes (the pools'
  // figures are valid after Stop()).
  const RegisterManager& registers() const { return registers_; }
  // Every act of every actor, when options.collect_act_events (valid after Stop()).
  std::vector<ActEvent> ActEvents() const;
  // Stops the runtime with `error` (see above), from any thread: an actor's broken invariant,
  // a failed transfer, a lost peer. The first error wins.
  void Abort(std::exception_ptr error);
  bool aborted() const;
  // Variables held in GPU memory: copied into the session's values (before Python reads them;
  // also when the runtime ends) or from them (after Python set them). No iteration may be in
  // flight (Python syncs first).
  void PullVariables() { registers_.PullVariables(); }
  void PushVariables() { registers_.PushVariables(); }

 private:
  // The device context of thread `thread_id`: a GPU's for GPU threads of the Plan, else a CPU's.
  std::unique_ptr<DeviceContext> NewDeviceContext(int64_t thread_id, const RuntimeOptions& options);
  void SendLaunch(int64_t job_id, std::shared_ptr<JobInstance> instance);
  void OnIterationFinished(int64_t job_id, JobInstance* instance);

  Plan plan_;
  int64_t machine_id_;
  WatchHandler watch_handler_;
  RegisterManager registers_;  // allocated before any actor exists
  std::unique_ptr<Communicator> communicator_;
  std::unique_ptr<Communicator> gpu_communicator_;  // NCCL, when the Plan has GPU collectives
  ActorContext actor_context_;
  MessageBus bus_;
  std::vector<std::unique_ptr<Thread>> threads_;
  // Declared after the threads, so destroyed (their transfers ended) before the actors are.
  std::unique_ptr<PointToPoint> point_to_point_;
  std::unique_ptr<GlooCommunicator> cross_machine_communicator_;
  std::map<std::string, int64_t> job_ids_;
  std::function<void(const std::string& message)> on_abort_;
  std::function<std::string()> explain_peer_lost_;

  mutable std::mutex launch_mutex_;
  int64_t running_job_ = -1;
  int64_t running_count_ = 0;
  std::deque<std::pair<int64_t, std::shared_ptr<JobInstance>>> waiting_;
  std::map<JobInstance*, std::shared_ptr<JobInstance>> in_flight_;  // launched, not finished
  std::exception_ptr abort_error_;
  bool stopped_ = false;
};

}  // namespace oneflow
