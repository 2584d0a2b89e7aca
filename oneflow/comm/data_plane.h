#pragma once
// The data plane between the processes (machines) of a cluster: Gloo over TCP. One TCP device
// per process, bound to this machine's address, and a full mesh of all machines (the world
// context: rank = machine id) for point-to-point transfers of registers. Collectives whose ranks
// span machines get contexts of their own (ConnectGroup), one per device rank.
//
// Connecting rendezvous through a key-value store (the control plane's, see
// oneflow/control/gloo_store.h); every machine must connect the same groups in the same order.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace gloo {
class Context;
namespace rendezvous {
class Store;
}
namespace transport {
class Device;
}
}  // namespace gloo

namespace oneflow {

class DataPlane {
 public:
  // Binds the TCP device to `hostname` and connects the world mesh (keys under `prefix`).
  // Throws RuntimeError naming the address if binding or connecting fails.
  DataPlane(gloo::rendezvous::Store& store, const std::string& prefix, int64_t machine_id,
            int64_t machine_num, const std::string& hostname);
  ~DataPlane();

  int64_t machine_id() const { return machine_id_; }
  int64_t machine_num() const { return machine_num_; }
  const std::shared_ptr<gloo::Context>& world() const { return world_; }
  // The control plane's key-value store (for rendezvous of other transports, such as NCCL's
  // unique ids); keys should be prefixed by the caller.
  gloo::rendezvous::Store& store() { return store_; }
  // A full mesh of `size` ranks, of which this call is `rank`; every member calls it with the
  // same `key` at about the same time (it blocks until all have).
  std::shared_ptr<gloo::Context> ConnectGroup(const std::string& key, int64_t rank, int64_t size);

  // How long one transfer may wait for its peer. Long: a peer that died is detected by the
  // control plane's heartbeats (and its TCP connection closing), not by this timeout.
  static constexpr std::chrono::milliseconds kTransferTimeout{std::chrono::hours(24)};

 private:
  gloo::rendezvous::Store& store_;
  std::string prefix_;
  int64_t machine_id_;
  int64_t machine_num_;
  std::string hostname_;
  std::shared_ptr<gloo::transport::Device> device_;
  std::shared_ptr<gloo::Context> world_;
};

}  // namespace oneflow
