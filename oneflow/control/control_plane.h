#pragma once
// The control plane of a job that runs over several processes ("machines", one rank each).
// Rank 0 is the master: it serves a gRPC ControlService (proto/control.proto, control_server.h)
// that holds the cluster's key-value store, barriers and membership. Every rank, rank 0 too,
// owns one ControlPlane, its client: the constructor is the rendezvous (all ranks registered),
// then Set/Get/Add/Barrier exchange small control data (a Plan, a Gloo or NCCL id, variable
// values), and a heartbeat thread watches the cluster: the master marks a silent rank lost, every
// rank learns it from its heartbeat replies, and blocked calls wake and throw the failure message.
// Tensors never travel here: the data plane (Gloo, NCCL) rendezvous through this store
// (gloo_store.h) and then talks directly between ranks. Not a singleton: the session owns it.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

namespace grpc {
class Channel;
class ClientContext;
class Status;
}  // namespace grpc

namespace oneflow {

class ControlServer;

// Where the cluster meets and how patient it is. Every rank passes the same values except `rank`.
struct ClusterSpec {
  int64_t rank = 0;
  int64_t world_size = 1;
  std::string master_addr = "127.0.0.1";  // where rank 0 serves the control service
  int master_port = 0;
  std::chrono::milliseconds rendezvous_timeout{300000};  // 5 minutes
  std::chrono::milliseconds heartbeat_interval{1000};
  std::chrono::milliseconds heartbeat_timeout{30000};  // a peer silent this long is lost
};

// One rank's handle on the cluster (see the file comment). Thread-safe: any method may be called
// from several threads at once.
class ControlPlane {
 public:
  // Rank 0 starts the gRPC server on master_addr:master_port; every rank connects and registers.
  // Returns once all world_size ranks have registered; throws Error (kRuntime) after
  // rendezvous_timeout naming the ranks that never registered (or, on a worker, saying that the
  // master could not be reached) and the address, or at once if rank 0 cannot bind the port.
  // master_port 0 is accepted only for world_size 1 (no other rank could find the port).
  explicit ControlPlane(const ClusterSpec& spec);
  ~ControlPlane();  // calls Shutdown(); never throws
  ControlPlane(const ControlPlane&) = delete;
  ControlPlane& operator=(const ControlPlane&) = delete;

  int64_t rank() const { return spec_.rank; }
  int64_t world_size() const { return spec_.world_size; }
  // "host:port" of the master's control service.
  const std::string& master_address() const { return master_address_; }

  // Key-value store held by rank 0. Set overwrites; values are arbitrary bytes (up to 2 GiB).
  void Set(const std::string& key, const std::string& value);
  // Blocks until the key exists, then returns its value. Throws Error after `timeout`, or as soon
  // as the cluster has failed, naming the key.
  std::string Get(const std::string& key, std::chrono::milliseconds timeout);
  // Returns false (and leaves *value alone) when the key does not exist.
  bool TryGet(const std::string& key, std::string* value);
  void Erase(const std::string& key);
  // Atomically adds `delta` to an integer counter (a missing key counts as 0), returns the new
  // value. The counter is stored as decimal text, so Get reads it too.
  int64_t Add(const std::string& key, int64_t delta);
  // Returns when all world_size ranks called Barrier(name). Each name is used once per cluster
  // lifetime, or again only after every rank passed it. Throws on timeout or failure, naming the
  // ranks that did not arrive.
  void Barrier(const std::string& name, std::chrono::milliseconds timeout);

  // Runs once, on the heartbeat thread, when the cluster first fails (a rank was lost). A handler
  // set after the failure does not run; failure() tells.
  void SetFailureHandler(std::function<void(const std::string& message)> handler);
  // Empty while healthy; else the failure message.
  std::string failure() const;

  // Clean leave, idempotent, never hangs or throws: a worker tells the master it leaves and stops
  // its heartbeat; rank 0 waits (a few seconds at most) until every other rank has left or been
  // lost, then stops its server.
  void Shutdown();

  // Test hook: behaves like a process that died. Stops the heartbeat without leaving, drops the
  // connection and fails this rank's own calls; on rank 0 the server stops at once.
  void SimulateCrashForTesting();

 private:
  // One RPC on the stub, cancelled if this rank fails, crashes or shuts down meanwhile:
  // `invoke(stub, context)` returns the gRPC status.
  template <typename Invoke>
  auto CallMaster(std::chrono::system_clock::time_point deadline, Invoke&& invoke);
  // CallMaster until the master answers or `deadline`; while the master is away (a broken
  // connection, a master that stopped) repeats the call if `may_repeat`, else only waits for the
  // heartbeat to declare a failure. Throws the failure once this rank knows of one.
  // `invoke(stub, context, remaining)` returns the gRPC status.
  template <typename Invoke>
  grpc::Status CallMasterPatiently(const std::string& what,
                                   std::chrono::steady_clock::time_point deadline, bool may_repeat,
                                   Invoke&& invoke);
  void Rendezvous();
  void HeartbeatLoop();
  // Keeps the first failure message (later ones are consequences) and cancels the calls in flight.
  void RecordFailure(const std::string& message);
  // On the heartbeat thread: runs the handler for the recorded failure, once.
  void RunFailureHandlerOnce();
  // Whether this rank cancels its own calls (failure, crash, shutdown): then ThrowFailure says why.
  bool CancelledHere() const;
  // Throws the reason this rank's calls are cancelled: the failure, a crash or a shutdown.
  [[noreturn]] void ThrowFailure(const std::string& what) const;
  void StopHeartbeat();

  struct StubHolder;

  ClusterSpec spec_;
  std::string master_address_;
  std::unique_ptr<ControlServer> server_;  // rank 0 only
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<StubHolder> stub_;
  uint64_t token_ = 0;

  mutable std::mutex mutex_;
  std::condition_variable heartbeat_wakeup_;
  std::string failure_;
  std::function<void(const std::string&)> failure_handler_;
  bool failure_handled_ = false;
  std::set<grpc::ClientContext*> calls_in_flight_;
  bool crashed_ = false;
  bool shut_down_ = false;
  bool stop_heartbeat_ = false;
  std::thread heartbeat_thread_;
};

}  // namespace oneflow
