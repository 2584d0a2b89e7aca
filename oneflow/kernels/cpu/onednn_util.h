#pragma once
// oneDNN glue for CPU kernels: memory descriptors of the framework's plain layouts, and one
// primitive bound to its scratchpad and argument memories, built once and re-pointed at each
// iteration's blobs, with its temporaries in the runtime thread's scratch buffer.
//
// Threads: oneDNN is built on OpenMP here and takes its thread count from the calling thread
// (CpuDeviceContext::BindCurrentThread sets it per runtime thread). Some implementations fix
// their work partition when the primitive is created, so kernels create primitives on their
// first call, on the runtime thread, not in the constructor (which runs on the plan loader's).
// Scratchpads are user-provided (scratchpad_mode::user) from the calling runtime thread's
// CpuDeviceContext::Scratch: kernels on different runtime threads never share one.

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "oneflow/common/alignment.h"
#include "oneflow/common/error.h"
#include "oneflow/device/cpu_device_context.h"

namespace oneflow {

// The CPU engine (stateless, shared by every oneDNN kernel).
inline const dnnl::engine& OneDnnCpuEngine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// Row-major strides of `dims` listed in `order` (outermost first): the stride of dims[order[i]].
inline dnnl::memory::dims StridesInOrder(const dnnl::memory::dims& dims,
                                         const std::vector<int>& order) {
  dnnl::memory::dims strides(dims.size(), 0);
  int64_t stride = 1;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    strides[*it] = stride;
    stride *= dims[*it];
  }
  return strides;
}

// An activation (N, C, spatial...) stored as (N, C, spatial...) or (N, spatial..., C).
inline dnnl::memory::desc ActivationDesc(int64_t batch, int64_t channels,
                                         const std::vector<int64_t>& spatial,
                                         bool channels_first, dnnl::memory::data_type type) {
  dnnl::memory::dims dims{batch, channels};
  dims.insert(dims.end(), spatial.begin(), spatial.end());
  std::vector<int> order{0};
  if (channels_first) { order.push_back(1); }
  for (size_t axis = 0; axis < spatial.size(); ++axis) { order.push_back(2 + axis); }
  if (!channels_first) { order.push_back(1); }
  return dnnl::memory::desc(dims, type, StridesInOrder(dims, order));
}

// A convolution weight stored as (O, I/G, kernel...) (channels_first) or (O, kernel..., I/G)
// (channels_last); oneDNN's logical view is (O, I, kernel...) or, grouped, (G, O/G, I/G,
// kernel...), which is the same memory since the groups are the outermost split of O.
inline dnnl::memory::desc ConvWeightDesc(int64_t out_channels, int64_t in_channels_per_group,
                                         const std::vector<int64_t>& kernel, int64_t groups,
                                         bool channels_first, dnnl::memory::data_type type) {
  dnnl::memory::dims dims;
  if (groups > 1) { dims.push_back(groups); }
  dims.push_back(out_channels / groups);
  dims.push_back(in_channels_per_group);
  dims.insert(dims.end(), kernel.begin(), kernel.end());
  const int offset = groups > 1 ? 1 : 0;  // position of O/G in dims
  std::vector<int> order;
  if (groups > 1) { order.push_back(0); }
  order.push_back(offset);
  if (channels_first) { order.push_back(offset + 1); }
  for (size_t axis = 0; axis < kernel.size(); ++axis) { order.push_back(offset + 2 + axis); }
  if (!channels_first) { order.push_back(offset + 1); }
  return dnnl::memory::desc(dims, type, StridesInOrder(dims, order));
}

// A primitive attribute set asking for a user-provided scratchpad.
inline dnnl::primitive_attr UserScratchpadAttr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

// One primitive with a memory object per argument (DNNL_ARG_*), built once; Run points the
// memories at this iteration's data and executes. Its scratchpad is lent by the runtime thread's
// device for the duration of a Run (CpuDeviceContext::Scratch), so kernels hold no temporaries
// between acts.
class OneDnnPrimitive {
 public:
  OneDnnPrimitive() = default;
  // `scratchpad`: the primitive descriptor's scratchpad_desc().
  OneDnnPrimitive(dnnl::primitive primitive, const dnnl::memory::desc& scratchpad,
                  const std::vector<std::pair<int, dnnl::memory::desc>>& arguments)
      : primitive_(std::move(primitive)),
        stream_(OneDnnCpuEngine()),
        scratchpad_bytes_(static_cast<int64_t>(scratchpad.get_size())) {
    arguments_[DNNL_ARG_SCRATCHPAD] =
        dnnl::memory(scratchpad, OneDnnCpuEngine(), DNNL_MEMORY_NONE);
    for (const auto& argument : arguments) {
      arguments_[argument.first] =
          dnnl::memory(argument.second, OneDnnCpuEngine(), DNNL_MEMORY_NONE);
    }
  }
  bool built() const { return static_cast<bool>(primitive_); }
  int64_t scratchpad_bytes() const { return scratchpad_bytes_; }

  // `data`: (DNNL_ARG_*, pointer) for every argument given at construction; the scratchpad from
  // the device's scratch buffer.
  void Run(CpuDeviceContext& device, std::initializer_list<std::pair<int, const void*>> data) {
    Run(device.Scratch(scratchpad_bytes_), std::vector<std::pair<int, const void*>>(data));
  }
  // The same with the scratchpad at `scratchpad` (scratchpad_bytes() of it).
  void Run(void* scratchpad, const std::vector<std::pair<int, const void*>>& data) {
    if (scratchpad_bytes_ > 0) { arguments_.at(DNNL_ARG_SCRATCHPAD).set_data_handle(scratchpad); }
    for (const auto& entry : data) {
      arguments_.at(entry.first).set_data_handle(const_cast<void*>(entry.second));
    }
    primitive_.execute(stream_, arguments_);
    stream_.wait();
  }

 private:
  dnnl::primitive primitive_;
  dnnl::stream stream_;
  int64_t scratchpad_bytes_ = 0;
  std::unordered_map<int, dnnl::memory> arguments_;
};

// One argument of a primitive: its DNNL_ARG_*, whether the primitive reads it, the framework's
// (plain) layout and the layout the primitive descriptor chose (equal unless it was created
// with format_tag::any).
struct OneDnnArgument {
  int id;
  bool is_input;
  dnnl::memory::desc plain;
  dnnl::memory::desc chosen;
};

// A primitive that may run on layouts of its own choosing (oneDNN's blocked formats): inputs
// whose chosen layout differs from the plain one are reordered into a staging buffer before it,
// outputs reordered back after it. With equal layouts it is a plain OneDnnPrimitive. The staging
// buffers and all scratchpads are carved from the device's scratch buffer for one Run (setting a
// blocked memory's data handle zero-fills its padding, so leftover contents do no harm).
class OneDnnReorderedPrimitive {
 public:
  OneDnnReorderedPrimitive() = default;
  OneDnnReorderedPrimitive(dnnl::primitive primitive, const dnnl::memory::desc& scratchpad,
                           const std::vector<OneDnnArgument>& arguments) {
    std::vector<std::pair<int, dnnl::memory::desc>> chosen;
    staged_.reserve(arguments.size());
    for (const OneDnnArgument& argument : arguments) {
      chosen.emplace_back(argument.id, argument.chosen);
      if (argument.chosen == argument.plain) { continue; }
      Staged staged;
      staged.id = argument.id;
      staged.is_input = argument.is_input;
      const dnnl::memory::desc& from = argument.is_input ? argument.plain : argument.chosen;
      const dnnl::memory::desc& to = argument.is_input ? argument.chosen : argument.plain;
      dnnl::reorder::primitive_desc pd(OneDnnCpuEngine(), from, OneDnnCpuEngine(), to,
                                       UserScratchpadAttr());
      staged.reorder = OneDnnPrimitive(dnnl::reorder(pd), pd.scratchpad_desc(),
                                       {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}});
      // Layout of the scratch buffer: [primitive's scratchpad][each staged argument, then its
      // reorder's scratchpad]..., each part aligned (some of oneDNN's JIT kernels, Winograd's,
      // use aligned vector loads and stores on their scratchpad and staged arguments).
      staged.buffer_offset = workspace_bytes_;
      workspace_bytes_ += AlignedSize(static_cast<int64_t>(argument.chosen.get_size()));
      staged.reorder_scratchpad_offset = workspace_bytes_;
      workspace_bytes_ += AlignedSize(staged.reorder.scratchpad_bytes());
      staged_.push_back(std::move(staged));
    }
    primitive_ = OneDnnPrimitive(std::move(primitive), scratchpad, chosen);
    const int64_t primitive_scratchpad = AlignedSize(primitive_.scratchpad_bytes());
    for (Staged& staged : staged_) {
      staged.buffer_offset += primitive_scratchpad;
      staged.reorder_scratchpad_offset += primitive_scratchpad;
    }
    workspace_bytes_ += primitive_scratchpad;
  }
  bool built() const { return primitive_.built(); }
  bool reorders() const { return !staged_.empty(); }

  void Run(CpuDeviceContext& device, std::initializer_list<std::pair<int, const void*>> data) {
    char* workspace = static_cast<char*>(device.Scratch(workspace_bytes_));
    std::vector<std::pair<int, const void*>> primitive_data(data);
    for (Staged& staged : staged_) {
      void* buffer = workspace + staged.buffer_offset;
      void* reorder_scratchpad = workspace + staged.reorder_scratchpad_offset;
      for (auto& entry : primitive_data) {
        if (entry.first != staged.id) { continue; }
        const void* user = entry.second;
        entry.second = buffer;
        if (staged.is_input) {
          staged.reorder.Run(reorder_scratchpad, {{DNNL_ARG_FROM, user}, {DNNL_ARG_TO, buffer}});
        } else {
          staged.user_output = user;
        }
      }
    }
    primitive_.Run(workspace, primitive_data);
    for (Staged& staged : staged_) {
      if (!staged.is_input) {
        staged.reorder.Run(workspace + staged.reorder_scratchpad_offset,
                           {{DNNL_ARG_FROM, workspace + staged.buffer_offset},
                            {DNNL_ARG_TO, staged.user_output}});
      }
    }
  }

 private:
  struct Staged {
    int id;
    bool is_input;
    int64_t buffer_offset = 0;  // the argument in the chosen layout, in the scratch buffer
    int64_t reorder_scratchpad_offset = 0;
    OneDnnPrimitive reorder;
    const void* user_output = nullptr;
  };
  OneDnnPrimitive primitive_;
  std::vector<Staged> staged_;
  int64_t workspace_bytes_ = 0;  // of the scratch buffer one Run uses
};

// oneDNN reports unsupported cases by throwing dnnl::error; say which op and case.
[[noreturn]] inline void ThrowOneDnnError(const std::string& what, const dnnl::error& error) {
  throw Error(ErrorKind::kRuntime) << what << ": oneDNN failed (" << error.what()
                                   << ", status " << static_cast<int>(error.status) << ")";
}

}  // namespace oneflow
