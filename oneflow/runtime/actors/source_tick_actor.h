#pragma once
// The source of a job's iterations on one machine: it acts once per launch (a kLaunch message
// carrying the call's job instance), numbering the pieces, and its register count bounds how many
// iterations of the job are in flight; kStop ends the stream (end of data). Launches come from
// Runtime::Launch on machine 0, and on the other machines from machine 0's ticks received over
// the data plane (RemoteLaunchActor, transfer_actors.cpp). A source tick that reads a register
// (another machine's, fed by that receiver) only passes the tick on.

#include <deque>
#include <memory>

#include "oneflow/runtime/actor.h"

namespace oneflow {

class SourceTickActor : public Actor {
 public:
  using Actor::Actor;

 protected:
  void HandleCommand(const ActorMessage& message) override;
  bool CanAct() const override { return !consumed_ids().empty() || !pending_.empty(); }
  bool SourceExhausted() const override { return stopping_ && pending_.empty(); }
  void NextPiece(int64_t* piece_id, std::shared_ptr<JobInstance>* instance) override;
  void Act(const std::vector<Regst*>&, const std::vector<Regst*>&) override {}

 private:
  std::deque<std::shared_ptr<JobInstance>> pending_;
  int64_t next_piece_id_ = 0;
  bool stopping_ = false;
};

}  // namespace oneflow
