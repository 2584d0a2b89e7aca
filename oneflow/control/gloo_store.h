#pragma once
// Lets Gloo rendezvous through the control plane: a gloo::rendezvous::Store over the ControlPlane's
// key-value store, with a key prefix per communicator (so several Gloo contexts, or successive
// ones, never read each other's keys). Gloo's connectFullMesh sets each rank's address under its
// rank and reads every other rank's, so get() waits for the key as Gloo expects.

#include <gloo/rendezvous/store.h>

#include <chrono>
#include <string>
#include <vector>

#include "oneflow/control/control_plane.h"

namespace oneflow {

class GlooStore final : public gloo::rendezvous::Store {
 public:
  // The ControlPlane must outlive the store.
  GlooStore(ControlPlane& control_plane, std::string prefix,
            std::chrono::milliseconds timeout = kDefaultTimeout)
      : control_plane_(control_plane), prefix_(std::move(prefix)), timeout_(timeout) {}

  void set(const std::string& key, const std::vector<char>& data) override;
  // Waits up to the store's timeout for the key.
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override;

 private:
  std::string FullKey(const std::string& key) const { return prefix_ + "/" + key; }

  ControlPlane& control_plane_;
  std::string prefix_;
  std::chrono::milliseconds timeout_;
};

}  // namespace oneflow
