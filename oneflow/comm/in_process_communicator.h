#pragma once
// Collectives among the devices of one process. The last rank to submit a collective finds every
// rank's buffers; it runs its own share of the work at once and hands each other rank's share to
// that rank's device thread (so the work is spread over the devices' threads, and no thread ever
// waits for another); the rank whose share finishes last runs every rank's `done`.
// Shares: all-reduce sums a 1/n chunk of the elements into every output; reduce-scatter, all-gather
// and all-to-all each assemble their own output from the boxes of every input.

#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <utility>
#include <vector>

#include "oneflow/comm/communicator.h"

namespace oneflow {

class InProcessCommunicator final : public Communicator {
 public:
  // Runs `work` on the thread of device (machine, device); it must not run it inline.
  using DeviceExecutor =
      std::function<void(int64_t machine, int64_t device, std::function<void()> work)>;
  explicit InProcessCommunicator(DeviceExecutor executor) : executor_(std::move(executor)) {}

  void Submit(const CollectiveCall& call, Done done) override;

 private:
  struct Rendezvous;
  static void RunShare(const Rendezvous& rendezvous, int64_t rank);
  static void FinishShare(const std::shared_ptr<Rendezvous>& rendezvous, std::exception_ptr error);

  DeviceExecutor executor_;
  std::mutex mutex_;
  // (collective id, piece, sub-piece) -> the rendezvous of its ranks
  std::map<std::tuple<int64_t, int64_t, int64_t>, std::shared_ptr<Rendezvous>> pending_;
};

}  // namespace oneflow
