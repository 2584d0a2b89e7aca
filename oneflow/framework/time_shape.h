#pragma once
// Time shapes: how many pieces of a blob pass per iteration. OneFlow's repeat / unpack hand
// their consumers N pieces for each piece they read (repeat: the same blob N times; unpack: its
// N row blocks, one after another), and acc / pack turn N pieces back into one (acc: their sum;
// pack: their rows concatenated). Ops between them act N times per iteration (gradient
// accumulation over micro-batches). acc_tick, inserted by the compiler, passes every N-th tick
// of a control edge on.
//
// The runtime sees such an op as a cycle of N acts (compute_actor.cpp): an expanding op keeps
// its input for the next act until the last act of the cycle; a reducing op keeps its output
// until the last act; the kernel reads the act's position in the cycle (KernelContext::
// cycle_step). The compiler pass time_shape (compiler/passes/time_shape.cpp) checks that
// piece counts match and inserts the repeats and acc_ticks that make them match.

#include <cstdint>

#include "proto/op_conf.pb.h"

namespace oneflow {

enum class CycleKind {
  kNone,    // one output per input
  kExpand,  // repeat, unpack: N outputs per input
  kReduce,  // acc, pack, acc_tick: one output per N inputs
};

struct Cycle {
  CycleKind kind = CycleKind::kNone;
  int64_t length = 1;  // N
};

// The cycle of `op` (kNone for every op but the five above).
Cycle CycleOfOp(const OperatorConf& op);

}  // namespace oneflow
