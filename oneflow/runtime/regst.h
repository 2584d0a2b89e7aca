#pragma once
// A register (Regst): one buffer set produced by an actor and lent to its consumers. It carries
// the iteration (piece) it holds and that iteration's job instance. The producer owns it; it is
// writable again once every consumer has returned it.

#include <memory>
#include <string>
#include <vector>

#include "oneflow/framework/blob.h"
#include "proto/plan.pb.h"

namespace oneflow {

class JobInstance;

class Regst {
 public:
  // `memory` is the register's buffer (or a variable's memory); blobs are carved from it. A
  // register whose memory comes from a RegisterMemoryPool starts with none (nullptr).
  Regst(const RegstDescProto& desc, void* memory);

  int64_t regst_desc_id() const { return regst_desc_id_; }
  int64_t producer_actor_id() const { return producer_actor_id_; }
  int64_t piece_id() const { return piece_id_; }
  const std::shared_ptr<JobInstance>& job_instance() const { return job_instance_; }
  void SetPiece(int64_t piece_id, std::shared_ptr<JobInstance> instance) {
    piece_id_ = piece_id;
    job_instance_ = std::move(instance);
  }
  // Index of `lbn` among blobs(), or -1.
  int64_t BlobIndex(const std::string& lbn) const;
  Blob& blob(int64_t index) { return blobs_[index]; }
  // The buffer the blobs are carved from; Bind points them into another one (or none).
  void* memory() const { return memory_; }
  void Bind(void* memory);

  int64_t reading_count = 0;  // consumers that have not returned it yet

 private:
  int64_t regst_desc_id_;
  int64_t producer_actor_id_;
  int64_t piece_id_ = -1;
  std::shared_ptr<JobInstance> job_instance_;
  std::vector<std::string> lbns_;
  std::vector<int64_t> offsets_;  // of each blob in the buffer
  std::vector<Blob> blobs_;
  void* memory_ = nullptr;
};

}  // namespace oneflow
