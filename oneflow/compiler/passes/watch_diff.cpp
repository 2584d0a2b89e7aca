// Pass "watch_diff": for each blob whose gradient Python watches (flow.watch_diff), adds a watch
// op on that gradient. The watched gradient is the unscaled one (before 1/loss-size scaling).
#include "oneflow/compiler/pipeline.h"
#include "oneflow/framework/op_conf_util.h"
#include "oneflow/job/placement.h"

namespace oneflow {
namespace {

class WatchDiffPass final : public Pass {
 public:
  std::string name() const override { return "watch_diff"; }

  void Apply(JobBuildContext& job) const override {
    const Job& current = job.job();
    if (current.diff_watch().empty()) { return; }
    if (!current.job_conf().is_train()) {
      throw Error(ErrorKind::kValue) << "flow.watch_diff is only valid in a train job; job '"
                                     << job.job_name() << "' is a predict job";
    }
    // handler id -> watched blob, in handler order.
    std::map<int64_t, std::string> watches(current.diff_watch().begin(),
                                           current.diff_watch().end());
    for (const auto& [handler_id, lbn] : watches) {
      auto diff = job.job().blob_to_diff().find(lbn);
      if (diff == job.job().blob_to_diff().end()) {
        throw Error(ErrorKind::kValue)
            << "flow.watch_diff: blob '" << lbn << "' gets no gradient; only blobs on a "
            << "path from a trainable variable to the loss have one";
      }
      std::string name = "System-WatchDiff-" + std::to_string(handler_id);
      const OperatorConf& producer = job.Op(OpNameOfLbn(diff->second));
      std::string watched = diff->second;
      // The gradient of a blob whose shape differs per device (a mirrored dynamic one) is
      // watched on each device (flow.watch_diff registered a handler per device).
      const bool per_device = producer.mirrored() && job.LogicalBlobDesc(lbn).is_dynamic;
      if (producer.mirrored() && !per_device) {
        // One value per device: stacked into one consistent blob for the handler.
        OperatorConf stack = OpConfBuilder("cast_from_mirrored", name + "-stack")
                                 .Input("in", watched)
                                 .Attr("mode", "stack")
                                 .Attr("parts", ParallelNum(producer.placement()))
                                 .Placement(producer.placement())
                                 .Build();
        stack.set_created_by_pass("watch_diff");
        watched = OutputLbn(job.AddOp(std::move(stack)), "out");
      }
      OperatorConf watch = OpConfBuilder("watch", name)
                               .Input("in", watched)
                               .Attr("handler_id", handler_id)
                               .Build();
      // A watch hands the whole blob to Python from one device.
      *watch.mutable_placement() =
          per_device ? producer.placement() : FirstDevicePlacement(producer.placement());
      watch.set_created_by_pass("watch_diff");
      job.AddOp(std::move(watch));
    }
  }
};

}  // namespace

std::unique_ptr<Pass> MakeWatchDiffPass() { return std::make_unique<WatchDiffPass>(); }

}  // namespace oneflow
