#pragma once
// The one op registry. Each op is declared once, in one file under oneflow/ops/:
//
//   REGISTER_OP("matmul")
//       .Input("a").Input("b").Output("out")
//       .Attr<bool>("transpose_a", false).Attr<bool>("transpose_b", false)
//       .SetInferFn(InferMatmul)      // shapes and dtypes of outputs from inputs and attrs
//       .SetSbpFn(GetMatmulSbp)       // candidate SBP signatures
//       .SetGradFn(GenerateMatmulGrad);  // emits backward ops into the Job
//
// Kernels are registered separately per (op, device, dtype); see kernel_registry.h.

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "oneflow/common/error.h"
#include "oneflow/common/shape.h"
#include "oneflow/framework/attr.h"
#include "oneflow/framework/op_conf_util.h"
#include "proto/op_conf.pb.h"
#include "proto/placement.pb.h"
#include "proto/sbp.pb.h"

namespace oneflow {

class InferContext;
class SbpContext;
class GradContext;

using InferFn = std::function<void(InferContext&)>;
using SbpFn = std::function<void(SbpContext&)>;
using GradFn = std::function<void(GradContext&)>;

struct ArgumentDef {
  std::string name;
  bool optional = false;
  bool variadic = false;  // one or more blobs
  // A variadic output: as many blobs as the op has of this input argument, or as the list
  // attribute of this name has entries.
  std::string count_from;
};

struct AttrDef {
  std::string name;
  AttrValue default_value;  // also fixes the attribute's type
  bool required = false;    // no default: the caller must set it
};

struct OpDef {
  std::string op_type;
  std::vector<ArgumentDef> inputs;
  std::vector<ArgumentDef> outputs;
  std::vector<AttrDef> attrs;
  InferFn infer;
  SbpFn sbp;
  GradFn grad;
  // True for ops through which no gradient flows (labels, constants, ticks, updates).
  bool non_differentiable = false;
  // Inputs the kernel writes in place (an optimizer's model and its state).
  std::set<std::string> mutable_inputs;
  // Inputs that never receive a gradient (e.g. integer labels).
  std::set<std::string> no_grad_inputs;
  // Argument whose dtype selects the kernel; empty: the first output, else the first input.
  std::string kernel_data_type_argument;
  // The infer function sets its outputs' is_dynamic itself. Otherwise an output is dynamic when
  // an input is (its shape at run time follows theirs).
  bool infers_dynamic = false;

  const AttrDef* FindAttr(const std::string& name) const;
  const ArgumentDef* FindInput(const std::string& name) const;
  const ArgumentDef* FindOutput(const std::string& name) const;
};

// Read-only registry of all ops, filled by static registration at library load time.
class OpRegistry {
 public:
  static OpRegistry& Instance();
  void Register(OpDef def);
  // Throws NotImplementedError naming the op type when it is not registered.
  const OpDef& Get(const std::string& op_type) const;
  const OpDef* Find(const std::string& op_type) const;
  std::vector<std::string> OpTypes() const;

 private:
  std::map<std::string, OpDef> defs_;
};

class OpDefBuilder {
 public:
  explicit OpDefBuilder(const std::string& op_type);
  OpDefBuilder& Input(const std::string& name);
  OpDefBuilder& OptionalInput(const std::string& name);
  OpDefBuilder& VariadicInput(const std::string& name, bool optional = false);
  OpDefBuilder& Output(const std::string& name);
  OpDefBuilder& OptionalOutput(const std::string& name);
  // An output of as many blobs as the op is given for input `count_from` (e.g. split_like), or
  // as list attribute `count_from` has entries.
  OpDefBuilder& VariadicOutput(const std::string& name, const std::string& count_from);
  template <typename T>
  OpDefBuilder& Attr(const std::string& name, const T& default_value) {
    def_.attrs.push_back(AttrDef{name, ToAttrValue<T>(default_value), false});
    return *this;
  }
  // An attribute without default; T fixes its type.
  template <typename T>
  OpDefBuilder& RequiredAttr(const std::string& name) {
    def_.attrs.push_back(AttrDef{name, ToAttrValue<T>(T()), true});
    return *this;
  }
  OpDefBuilder& SetInferFn(InferFn fn);
  OpDefBuilder& SetSbpFn(SbpFn fn);
  OpDefBuilder& SetGradFn(GradFn fn);
  OpDefBuilder& NonDifferentiable();
  OpDefBuilder& MutableInput(const std::string& name);
  OpDefBuilder& NoGradInput(const std::string& name);
  OpDefBuilder& KernelDataTypeFrom(const std::string& argument);
  OpDefBuilder& InfersDynamic();
  const OpDef& def() const { return def_; }

 private:
  OpDef def_;
};

struct OpRegistrar {
  OpRegistrar(const OpDefBuilder& builder);  // NOLINT: implicit by design of REGISTER_OP
};

#define OF_CONCAT_IMPL(a, b) a##b
#define OF_CONCAT(a, b) OF_CONCAT_IMPL(a, b)
#define REGISTER_OP(op_type)                                                       \
  static ::oneflow::OpRegistrar OF_CONCAT(g_op_registrar_, __COUNTER__) =          \
      ::oneflow::OpDefBuilder(op_type)

// Shape and dtype inference of one op. Infer functions throw ValueError/TypeError stating the
// rule broken; the caller adds the op name and input descriptions to the message.
class InferContext {
 public:
  InferContext(const OperatorConf& conf, std::map<std::string, BlobDesc> inputs,
               ParallelContext parallel_context);

  const OperatorConf& conf() const { return conf_; }
  const std::string& op_name() const { return conf_.name(); }
  bool HasInput(const std::string& argument) const { return InputCount(argument) > 0; }
  int64_t InputCount(const std::string& argument) const;
  const BlobDesc& Input(const std::string& argument, int64_t index = 0) const;
  // The output's description, to be filled by the infer function.
  BlobDesc& Output(const std::string& argument, int64_t index = 0);
  bool HasOutput(const std::string& argument) const;
  template <typename T>
  T Attr(const std::string& name) const {
    return FromAttrValue<T>(AttrValueOf(name));
  }
  const ParallelContext& parallel_context() const { return parallel_context_; }
  const std::map<std::string, BlobDesc>& outputs() const { return outputs_; }
  // Whether an input's shape depends on the data (for ops that set InfersDynamic).
  bool AnyInputDynamic() const;
  // False while the compiler infers blobs' (upper-bound) shapes; true when the runtime infers
  // the shapes of one run, the dynamic inputs' shapes being that run's (compute_actor.cpp).
  bool in_run() const { return in_run_; }
  void set_in_run(bool in_run) { in_run_ = in_run; }

 private:
  const AttrValue& AttrValueOf(const std::string& name) const;

  const OperatorConf& conf_;
  std::map<std::string, BlobDesc> inputs_;  // keyed by ArgumentKey
  std::map<std::string, BlobDesc> outputs_;
  ParallelContext parallel_context_;
  bool in_run_ = false;
};

// Collects the candidate SBP signatures of one op:
//   ctx.NewSignature().Split("a", 0).Broadcast("b").Split("out", 0).Build();
// Argument names cover every blob of a variadic argument. "All inputs/outputs" helpers:
//   .SplitAllInputs(axis), .SplitAllOutputs(axis), .BroadcastAll(), ...
class SbpContext {
 public:
  class SignatureBuilder {
   public:
    SignatureBuilder(SbpContext* context) : context_(context) {}
    SignatureBuilder& Split(const std::string& argument, int64_t axis);
    SignatureBuilder& Broadcast(const std::string& argument);
    SignatureBuilder& PartialSum(const std::string& argument);
    SignatureBuilder& SplitAllInputs(int64_t axis);
    SignatureBuilder& SplitAllOutputs(int64_t axis);
    SignatureBuilder& BroadcastAllInputs();
    SignatureBuilder& BroadcastAllOutputs();
    SignatureBuilder& PartialSumAllOutputs();
    void Build();

   private:
    void Set(const std::string& argument, const SbpParallel& sbp);
    SbpContext* context_;
    SbpSignature signature_;
  };

  SbpContext(const OperatorConf& conf, std::map<std::string, BlobDesc> logical_inputs,
             int64_t parallel_num);
  SignatureBuilder NewSignature() { return SignatureBuilder(this); }
  const BlobDesc& LogicalInput(const std::string& argument, int64_t index = 0) const;
  int64_t InputCount(const std::string& argument) const;
  int64_t parallel_num() const { return parallel_num_; }
  const OperatorConf& conf() const { return conf_; }
  template <typename T>
  T Attr(const std::string& name) const {
    return FromAttrValue<T>(conf_.attr().at(name));
  }
  const std::vector<SbpSignature>& signatures() const { return signatures_; }

 private:
  friend class SignatureBuilder;
  std::vector<std::string> KeysOf(const std::string& argument) const;

  const OperatorConf& conf_;
  std::map<std::string, BlobDesc> logical_inputs_;
  int64_t parallel_num_;
  std::vector<SbpSignature> signatures_;
};

// What a gradient rule sees of its forward op, and how it emits backward ops. Implemented by
// the autograd pass. Each emitted op is inferred at once and placed like the forward op.
class GradContext {
 public:
  virtual ~GradContext() = default;
  virtual const OperatorConf& op() const = 0;
  const std::string& op_name() const { return op().name(); }
  std::string Input(const std::string& argument, int64_t index = 0) const {
    return InputLbn(op(), argument, index);
  }
  std::string Output(const std::string& argument, int64_t index = 0) const {
    return OutputLbn(op(), argument, index);
  }
  int64_t InputCount(const std::string& argument) const {
    return ::oneflow::InputCount(op(), argument);
  }
  template <typename T>
  T Attr(const std::string& name) const {
    return FromAttrValue<T>(op().attr().at(name));
  }
  virtual const BlobDesc& Desc(const std::string& lbn) const = 0;
  // Whether the gradient of this input is needed (it leads back to a trainable variable).
  virtual bool NeedInputGrad(const std::string& argument, int64_t index = 0) const = 0;
  // The gradient flowing into the output (zeros if none flows there).
  virtual std::string OutputGrad(const std::string& argument, int64_t index = 0) = 0;
  // Adds a backward op named "<forward op>-<suffix>"; returns the lbn of its output `out_argument`.
  virtual std::string AddOp(const std::string& suffix, OpConfBuilder builder,
                            const std::string& out_argument = "out") = 0;
  virtual void SetInputGrad(const std::string& argument, int64_t index,
                            const std::string& grad_lbn) = 0;
  void SetInputGrad(const std::string& argument, const std::string& grad_lbn) {
    SetInputGrad(argument, 0, grad_lbn);
  }
};

}  // namespace oneflow
