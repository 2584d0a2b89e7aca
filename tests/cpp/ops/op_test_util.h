#pragma once
// Helpers for op tests: build an OperatorConf for a registered op with its default attributes,
// run its infer and SBP functions directly, and check an error's kind and message.

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "oneflow/common/error.h"
#include "oneflow/framework/op_registry.h"

namespace oneflow {
namespace test {

// An OperatorConf named "test-<op_type>" with one blob per input ("producer/<argument>_<i>"),
// every declared output (a variadic one as many times as its count_from input), and every attribute
// that has a default; `attrs` override them.
inline OperatorConf MakeOpConf(const std::string& op_type,
                               const std::map<std::string, int64_t>& input_counts,
                               const std::map<std::string, AttrValue>& attrs = {}) {
  const OpDef& def = OpRegistry::Instance().Get(op_type);
  OpConfBuilder builder(op_type, "test-" + op_type);
  for (const auto& entry : input_counts) {
    for (int64_t index = 0; index < entry.second; ++index) {
      builder.Input(entry.first, MakeLbn("producer", entry.first, index));
    }
  }
  OperatorConf conf = builder.Build();
  for (const ArgumentDef& output : def.outputs) {
    const int64_t count = output.count_from.empty() ? 1 : InputCount(conf, output.count_from);
    for (int64_t index = 0; index < count; ++index) {
      (*conf.mutable_output())[output.name].add_value(MakeLbn(conf.name(), output.name, index));
    }
  }
  for (const AttrDef& attr : def.attrs) {
    if (!attr.required) { (*conf.mutable_attr())[attr.name] = attr.default_value; }
  }
  for (const auto& entry : attrs) { (*conf.mutable_attr())[entry.first] = entry.second; }
  return conf;
}

template <typename T>
std::pair<std::string, AttrValue> MakeAttr(const std::string& name, const T& value) {
  return {name, ToAttrValue<T>(value)};
}

// Blob descriptions keyed by argument key ("x_0").
using DescMap = std::map<std::string, BlobDesc>;

inline DescMap Infer(const OperatorConf& conf, const DescMap& inputs) {
  InferContext ctx(conf, inputs, ParallelContext());
  OpRegistry::Instance().Get(conf.op_type()).infer(ctx);
  return ctx.outputs();
}

inline std::vector<SbpSignature> Signatures(const OperatorConf& conf, const DescMap& inputs,
                                            int64_t parallel_num = 2) {
  SbpContext ctx(conf, inputs, parallel_num);
  OpRegistry::Instance().Get(conf.op_type()).sbp(ctx);
  return ctx.signatures();
}

// "a_0:S(0) b_0:B out_0:P" for compact comparisons; keys sorted.
inline std::string SignatureToString(const SbpSignature& signature) {
  std::map<std::string, SbpParallel> sorted(signature.argument_to_sbp().begin(),
                                            signature.argument_to_sbp().end());
  std::string text;
  for (const auto& entry : sorted) {
    if (!text.empty()) { text += " "; }
    text += entry.first + ":";
    if (entry.second.has_split_parallel()) {
      text += "S(" + std::to_string(entry.second.split_parallel().axis()) + ")";
    } else if (entry.second.has_broadcast_parallel()) {
      text += "B";
    } else {
      text += "P";
    }
  }
  return text;
}

inline std::vector<std::string> SignatureStrings(const std::vector<SbpSignature>& signatures) {
  std::vector<std::string> texts;
  for (const SbpSignature& signature : signatures) {
    texts.push_back(SignatureToString(signature));
  }
  return texts;
}

inline bool Contains(const std::vector<std::string>& texts, const std::string& text) {
  for (const std::string& item : texts) {
    if (item == text) { return true; }
  }
  return false;
}

// Runs `fn`, expecting an Error of `kind` whose message contains every string of `fragments`.
template <typename Fn>
void ExpectError(Fn&& fn, ErrorKind kind, const std::vector<std::string>& fragments) {
  try {
    fn();
    ADD_FAILURE() << "expected an error";
  } catch (const Error& error) {
    EXPECT_EQ(static_cast<int>(error.kind()), static_cast<int>(kind)) << error.what();
    for (const std::string& fragment : fragments) {
      EXPECT_NE(error.message().find(fragment), std::string::npos)
          << "message '" << error.message() << "' lacks '" << fragment << "'";
    }
  }
}

// A GradContext for testing gradient rules without the autograd pass: it knows the forward
// op's blob descriptions, infers each added op at once (so a grad rule that builds an invalid
// op fails here) and records the input gradients that were set.
class FakeGradContext final : public GradContext {
 public:
  // `input_descs` and the forward op's inferred outputs give every lbn's description; the
  // gradient of each output is a blob "<op>-out_grad/<argument>_0" of the output's description.
  FakeGradContext(OperatorConf conf, const DescMap& input_descs,
                  std::vector<std::string> need_grad_inputs)
      : conf_(std::move(conf)), need_grad_inputs_(std::move(need_grad_inputs)) {
    for (const auto& entry : conf_.input()) {
      for (int64_t index = 0; index < entry.second.value_size(); ++index) {
        descs_[entry.second.value(index)] = input_descs.at(ArgumentKey(entry.first, index));
      }
    }
    DescMap outputs = Infer(conf_, input_descs);
    for (const auto& entry : conf_.output()) {
      descs_[entry.second.value(0)] = outputs.at(ArgumentKey(entry.first, 0));
    }
  }

  const OperatorConf& op() const override { return conf_; }
  const BlobDesc& Desc(const std::string& lbn) const override { return descs_.at(lbn); }
  bool NeedInputGrad(const std::string& argument, int64_t index = 0) const override {
    for (const std::string& name : need_grad_inputs_) {
      if (name == argument) { return true; }
    }
    return false;
  }
  std::string OutputGrad(const std::string& argument, int64_t index = 0) override {
    std::string lbn = MakeLbn(conf_.name() + "-out_grad", argument, index);
    descs_[lbn] = descs_.at(Output(argument, index));
    return lbn;
  }
  std::string AddOp(const std::string& suffix, OpConfBuilder builder,
                    const std::string& out_argument = "out") override {
    OperatorConf added = builder.Build();
    added.set_name(conf_.name() + "-" + suffix);
    EXPECT_EQ(added_ops_.count(added.name()), 0u) << "duplicate grad op " << added.name();
    const OpDef& def = OpRegistry::Instance().Get(added.op_type());
    for (const AttrDef& attr : def.attrs) {
      if (!attr.required && added.attr().count(attr.name) == 0) {
        (*added.mutable_attr())[attr.name] = attr.default_value;
      }
    }
    for (const ArgumentDef& output : def.outputs) {
      (*added.mutable_output())[output.name].add_value(MakeLbn(added.name(), output.name, 0));
    }
    DescMap inputs;
    for (const auto& entry : added.input()) {
      for (int64_t index = 0; index < entry.second.value_size(); ++index) {
        inputs[ArgumentKey(entry.first, index)] = descs_.at(entry.second.value(index));
      }
    }
    DescMap outputs = Infer(added, inputs);
    for (const auto& entry : outputs) { descs_[added.name() + "/" + entry.first] = entry.second; }
    added_ops_[added.name()] = added;
    return MakeLbn(added.name(), out_argument, 0);
  }
  using GradContext::SetInputGrad;
  void SetInputGrad(const std::string& argument, int64_t index,
                    const std::string& grad_lbn) override {
    input_grads_[ArgumentKey(argument, index)] = grad_lbn;
  }

  const std::map<std::string, OperatorConf>& added_ops() const { return added_ops_; }
  const std::map<std::string, std::string>& input_grads() const { return input_grads_; }
  // The op that produces `lbn`, which must have been added by the grad rule.
  const OperatorConf& ProducerOf(const std::string& lbn) const {
    return added_ops_.at(OpNameOfLbn(lbn));
  }

 private:
  OperatorConf conf_;
  std::vector<std::string> need_grad_inputs_;
  std::map<std::string, BlobDesc> descs_;
  std::map<std::string, OperatorConf> added_ops_;
  std::map<std::string, std::string> input_grads_;
};

// Runs the gradient rule of `conf`'s op with a FakeGradContext.
inline void GenerateGrad(FakeGradContext& ctx) {
  OpRegistry::Instance().Get(ctx.op().op_type()).grad(ctx);
}

}  // namespace test
}  // namespace oneflow
