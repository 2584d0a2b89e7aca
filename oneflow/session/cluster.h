#pragma once
// A cluster: the processes ("machines") that run one script together. Machine 0 (the master)
// traces and compiles the jobs and drives every call; the others serve the Plans it sends (as in
// OneFlow 0.3). Owns this process's end of the control plane (gRPC: rendezvous, key-value store,
// heartbeats) and of the data plane (Gloo TCP mesh), and the command channel between the master
// and each worker, which runs over the key-value store (proto/cluster.proto):
//   master -> worker  "cmd/<machine>/<seq>"     a ClusterCommand, read in order
//   worker -> master  "reply/<machine>/<seq>"   its ClusterReply (start, stop, variables)
//   worker -> master  "abort/<machine>/<generation>"  its runtime stopped on this error (empty:
//                                                     it stopped normally)
// Iterations never go through here: they start and end over the data plane.
// Every wait ends with an error when the cluster fails (a lost peer), never hangs.

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "oneflow/control/control_plane.h"
#include "proto/cluster.pb.h"

namespace oneflow {

class DataPlane;
class GlooStore;
class VariableStore;

// The variable parts (name, parallel id) whose registers live on `machine`.
std::vector<std::pair<std::string, int64_t>> VariablePartsOn(const Plan& plan, int64_t machine);
// Copies those parts out of (into) a variable store.
VariableValues CollectVariableParts(VariableStore& variables, const Plan& plan, int64_t machine);
void StoreVariableParts(VariableStore& variables, const VariableValues& values);

class Cluster {
 public:
  // Rendezvous of the control plane, then the data plane's mesh, bound to `data_address` (this
  // machine's address as the others reach it). Throws RuntimeError naming what failed.
  Cluster(const ClusterSpec& spec, const std::string& data_address);
  ~Cluster();

  int64_t machine_id() const { return spec_.rank; }
  int64_t machine_num() const { return spec_.world_size; }
  ControlPlane& control() { return *control_; }
  DataPlane& data_plane() { return *data_plane_; }

  // Master side.
  int64_t SendCommand(int64_t machine, const ClusterCommand& command);
  ClusterReply AwaitReply(int64_t machine, int64_t seq);
  // Waits until the worker's runtime of Plan `generation` stopped: the error it stopped on, or
  // empty when it was stopped normally.
  std::string AwaitAbort(int64_t machine, int64_t generation);
  int64_t NewGeneration() { return ++generation_; }
  // After a transfer with another machine broke: waits (at most the heartbeat timeout and a
  // little) for the control plane to name the machine that was lost; its message, or empty.
  std::string AwaitPeerFailure();
  // Tells every worker to leave (they exit), then leaves. Idempotent; never throws.
  void Halt();

  // Worker side.
  ClusterCommand NextCommand(int64_t* seq);
  void Reply(int64_t seq, const ClusterReply& reply);
  void ReportAbort(int64_t generation, const std::string& error);

  // How long a wait for a peer may last before the cluster is considered failed anyway.
  static constexpr std::chrono::milliseconds kForever{std::chrono::hours(24 * 365)};

 private:
  ClusterSpec spec_;
  std::unique_ptr<ControlPlane> control_;
  std::unique_ptr<GlooStore> store_;
  std::unique_ptr<DataPlane> data_plane_;
  std::mutex mutex_;
  std::map<int64_t, int64_t> next_seq_;  // master: per worker
  int64_t worker_seq_ = 0;               // worker: the next command to read
  int64_t generation_ = 0;
  bool halted_ = false;
};

}  // namespace oneflow
