#include "oneflow/compiler/pass.h"

namespace oneflow {

JobBuildContext RewriteInputs(const JobBuildContext& job, const InputRewrite& rewrite) {
  JobBuildContext rewritten(job.job().job_conf(), job.resource());
  for (const OperatorConf& original : job.job().op()) {
    if (rewritten.HasOp(original.name())) { continue; }  // the rewrite needed it early
    OperatorConf op = original;
    for (auto& entry : *op.mutable_input()) {
      auto& lbns = *entry.second.mutable_value();
      for (int index = 0; index < lbns.size(); ++index) {
        lbns[index] = rewrite(original, entry.first, index, lbns[index], rewritten);
      }
    }
    rewritten.AddOp(std::move(op));
  }
  for (const auto& entry : job.job().blob_to_diff()) {
    rewritten.SetBlobDiff(entry.first, entry.second);
  }
  for (const auto& entry : job.job().diff_watch()) {
    rewritten.AddDiffWatch(entry.second, entry.first);
  }
  return rewritten;
}

}  // namespace oneflow
