#include "oneflow/session/worker.h"

#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>

#include "oneflow/common/error.h"
#include "oneflow/runtime/act_event.h"
#include "oneflow/runtime/runtime.h"
#include "oneflow/session/cluster.h"
#include "oneflow/session/variable_store.h"

namespace oneflow {

namespace {

class Worker {
 public:
  explicit Worker(Cluster& cluster) : cluster_(cluster) {
    // A lost peer stops the running Plan at once: transfers waiting for it end.
    cluster_.control().SetFailureHandler([this](const std::string& message) {
      std::lock_guard<std::mutex> lock(runtime_mutex_);
      if (runtime_) {
        runtime_->Abort(std::make_exception_ptr(Error(ErrorKind::kRuntime) << message));
      }
    });
  }
  ~Worker() {
    cluster_.control().SetFailureHandler([](const std::string&) {});
    try {
      StopPlan();
    } catch (...) {
      // The cluster failed; Serve() has thrown that error already.
    }
  }

  void Serve() {
    while (true) {
      int64_t seq = 0;
      const ClusterCommand command = cluster_.NextCommand(&seq);
      switch (command.command_case()) {
        case ClusterCommand::kStart:
          Answer(seq, [&](ClusterReply*) { Start(command.start()); });
          break;
        case ClusterCommand::kStop:
          Answer(seq, [&](ClusterReply*) { StopPlan(command.abandon()); });
          break;
        case ClusterCommand::kPullVariables:
          Answer(seq, [&](ClusterReply* reply) {
            if (runtime_) { runtime_->PullVariables(); }
            *reply->mutable_variables() =
                CollectVariableParts(variables_, plan_, cluster_.machine_id());
          });
          break;
        case ClusterCommand::kPushVariables:
          Answer(seq, [&](ClusterReply*) {
            StoreVariableParts(variables_, command.push_variables());
            if (runtime_) { runtime_->PushVariables(); }
          });
          break;
        case ClusterCommand::kHalt:
          return;
        default:
          OF_CHECK(false) << "unknown cluster command " << command.command_case();
      }
    }
  }

 private:
  template <typename Fn>
  void Answer(int64_t seq, Fn fn) {
    ClusterReply reply;
    try {
      fn(&reply);
    } catch (std::exception& error) {
      reply.Clear();
      reply.set_error(error.what());
    }
    cluster_.Reply(seq, reply);
  }

  void Start(const StartCommand& start) {
    StopPlan();
    plan_ = start.plan();
    generation_ = start.generation();
    // The master sends the current value of every part this machine holds (its session may be a
    // new one, with other variables of the same names).
    variables_ = VariableStore();
    for (const TaskProto& task : plan_.task()) {
      if (task.machine_id() != cluster_.machine_id()) { continue; }
      for (const ExecNode& exec : task.exec_node()) {
        if (exec.op_conf().op_type() == "variable") { variables_.Declare(exec.op_conf()); }
      }
    }
    StoreVariableParts(variables_, start.variables());
    RuntimeOptions options;
    options.compute_threads = std::max<int64_t>(1, start.compute_threads());
    options.gpu.allow_tf32 = start.gpu_allow_tf32();
    options.gpu.conv_heuristic_search = start.gpu_conv_heuristic_search();
    options.machine_id = cluster_.machine_id();
    options.data_plane = &cluster_.data_plane();
    options.generation = generation_;
    // ONEFLOW_ACT_EVENT_FILE=<path>: this machine's actor timeline goes to <path>.machine<m>.
    const char* timeline = std::getenv("ONEFLOW_ACT_EVENT_FILE");
    timeline_file_ =
        timeline == nullptr || *timeline == '\0'
            ? ""
            : std::string(timeline) + ".machine" + std::to_string(cluster_.machine_id());
    options.collect_act_events = !timeline_file_.empty();
    Cluster* cluster = &cluster_;
    options.explain_peer_lost = [cluster] { return cluster->AwaitPeerFailure(); };
    // Machine 0 learns at once that this machine's part of every call is lost.
    const int64_t generation = generation_;
    options.on_abort = [cluster, generation](const std::string& message) {
      cluster->ReportAbort(generation, message.empty() ? "unknown error" : message);
    };
    auto runtime = std::make_unique<Runtime>(plan_, variables_, watch_handler_, options);
    std::lock_guard<std::mutex> lock(runtime_mutex_);
    runtime_ = std::move(runtime);
  }

  // `abandon`: machine 0 failed, so transfers in flight will never complete.
  void StopPlan(bool abandon = false) {
    if (!runtime_) { return; }
    if (abandon) {
      runtime_->Abort(std::make_exception_ptr(Error(ErrorKind::kRuntime)
                                              << "machine 0 abandoned the running Plan"));
    }
    runtime_->Stop();
    const bool aborted = runtime_->aborted();
    if (!timeline_file_.empty()) {
      std::ofstream(timeline_file_) << ActEventsToChromeTrace(runtime_->ActEvents());
    }
    {
      std::lock_guard<std::mutex> lock(runtime_mutex_);
      runtime_.reset();
    }
    if (!aborted) { cluster_.ReportAbort(generation_, ""); }  // releases machine 0's watcher
  }

  Cluster& cluster_;
  VariableStore variables_;
  WatchHandler watch_handler_ = [](int64_t, int64_t, const HostTensor&) {};
  Plan plan_;
  int64_t generation_ = 0;
  std::string timeline_file_;  // where this machine's actor timeline goes, if anywhere
  std::mutex runtime_mutex_;   // runtime_ against the failure handler's thread
  std::unique_ptr<Runtime> runtime_;
};

}  // namespace

void ServeAsWorker(Cluster& cluster) {
  Worker worker(cluster);
  worker.Serve();
}

}  // namespace oneflow
