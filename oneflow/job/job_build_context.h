#pragma once
// Builds one Job op by op. Every op added (from Python or by a compiler pass) is checked and
// inferred at once: default attributes filled, output names assigned, shapes and dtypes
// inferred, an SBP signature chosen and a kernel looked up. A violation throws an Error naming
// the op, its inputs and the rule broken, so Python reports it at the line that added the op.

#include <map>
#include <string>
#include <vector>

#include "oneflow/common/shape.h"
#include "oneflow/job/placement.h"
#include "oneflow/sbp/sbp_inference.h"
#include "proto/job.pb.h"

namespace oneflow {

struct OpDef;

class JobBuildContext {
 public:
  explicit JobBuildContext(const JobConf& job_conf, DeviceResource resource = DeviceResource());

  const Job& job() const { return job_; }
  const std::string& job_name() const { return job_.job_conf().job_name(); }
  JobConf& mutable_job_conf() { return *job_.mutable_job_conf(); }
  // The devices the session has (passes ask it where an op will run: device_resolution.h).
  const DeviceResource& resource() const { return resource_; }

  // Adds `conf` to the job and returns the op as stored (with outputs, attrs and SBP filled).
  const OperatorConf& AddOp(OperatorConf conf);
  bool HasOp(const std::string& op_name) const { return op_index_.count(op_name) > 0; }
  const OperatorConf& Op(const std::string& op_name) const;
  // For passes that add control inputs to an existing op.
  OperatorConf& MutableOp(const std::string& op_name);
  const BlobDesc& LogicalBlobDesc(const std::string& lbn) const;
  bool HasBlob(const std::string& lbn) const { return blob_descs_.count(lbn) > 0; }

  // The SBP signatures op `op_name` declares that fit its placement (what the op could have
  // chosen), for tests that run an op under each of them.
  std::vector<SbpSignature> ValidSbpSignatures(const std::string& op_name) const;

  void SetBlobDiff(const std::string& lbn, const std::string& diff_lbn);
  void AddDiffWatch(const std::string& lbn, int64_t handler_id);

 private:
  void CheckAndFillArguments(OperatorConf& conf) const;
  // Whether the op is in the mirrored view: as its inputs are (they must agree), as the caller
  // said for an op without inputs; the two casts convert. Checks mirrored inputs stay on their
  // placement.
  void InferMirrored(OperatorConf& conf) const;
  SbpSelection MakeSbpSelection(const OpDef& def, const OperatorConf& conf,
                                const std::map<std::string, BlobDesc>& inputs,
                                const std::map<std::string, BlobDesc>& descs,
                                int64_t parallel_num) const;
  SbpSignature ChooseSbpSignature(const OpDef& def, const OperatorConf& conf,
                                  const std::map<std::string, BlobDesc>& inputs,
                                  const std::map<std::string, BlobDesc>& descs,
                                  int64_t parallel_num) const;
  void FillAttributes(OperatorConf& conf) const;
  // Marks the outputs whose shape depends on the data (OpDef::infers_dynamic).
  void InferDynamic(const OpDef& def, const OperatorConf& conf,
                    const std::map<std::string, BlobDesc>& inputs,
                    std::map<std::string, BlobDesc>* descs) const;
  // On several devices a dynamic blob is broadcast (MakeSbpSelection requires it); throws if a
  // hint laid one out otherwise.
  void CheckDynamicOutputsWhole(const OperatorConf& conf,
                                const std::map<std::string, BlobDesc>& descs) const;
  // The device type the op's kernel runs on ("cpu" for gpu placements without a GPU).
  std::string ResolvedDeviceTag(const OperatorConf& op) const;
  // A blob of data-dependent shape is read only where it was made (no boxing, no copies).
  // A "gpu" op that reads a dynamic blob made on the host devices of its GPUs (by an op
  // without a GPU kernel) runs on those host devices as well: no copy carries a run's shape
  // between host and GPU, so the chain of ops that depends on the data stays on the host until
  // its blobs are static again, and then goes on on the GPUs.
  void KeepOnHostAfterDynamicHostInputs(OperatorConf* conf,
                                        const std::map<std::string, BlobDesc>& inputs) const;
  void CheckDynamicInputsStay(const OperatorConf& conf,
                              const std::map<std::string, BlobDesc>& inputs,
                              const std::string& device_tag) const;
  std::string DescribeInputs(const OperatorConf& conf) const;

  Job job_;
  DeviceResource resource_;
  std::map<std::string, int64_t> op_index_;
  std::map<std::string, BlobDesc> blob_descs_;
};

}  // namespace oneflow
