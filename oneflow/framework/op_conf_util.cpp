#include "oneflow/framework/op_conf_util.h"

#include "oneflow/common/error.h"

namespace oneflow {

std::string MakeLbn(const std::string& op_name, const std::string& argument, int64_t index) {
  return op_name + "/" + ArgumentKey(argument, index);
}

std::string ArgumentKey(const std::string& argument, int64_t index) {
  return argument + "_" + std::to_string(index);
}

void ParseLbn(const std::string& lbn, std::string* op_name, std::string* argument_key) {
  size_t slash = lbn.rfind('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == lbn.size()) {
    throw Error(ErrorKind::kValue) << "malformed logical blob name '" << lbn
                                   << "': expected '<op name>/<argument>_<index>'";
  }
  *op_name = lbn.substr(0, slash);
  *argument_key = lbn.substr(slash + 1);
}

std::string OpNameOfLbn(const std::string& lbn) {
  std::string op_name, key;
  ParseLbn(lbn, &op_name, &key);
  return op_name;
}

std::string SanitizedLbn(const std::string& lbn) {
  std::string name = lbn;
  for (char& c : name) {
    if (c == '/') { c = '-'; }
  }
  return name;
}

namespace {

const std::string& LbnIn(const google::protobuf::Map<std::string, ListString>& map,
                         const OperatorConf& conf, const std::string& argument, int64_t index,
                         const char* what) {
  auto it = map.find(argument);
  if (it == map.end() || index < 0 || index >= it->second.value_size()) {
    throw Error(ErrorKind::kInternal) << "internal error (a bug in oneflow): op '" << conf.name()
                                      << "' (" << conf.op_type() << ") has no " << what << " '"
                                      << argument << "' index " << index;
  }
  return it->second.value(index);
}

}  // namespace

const std::string& InputLbn(const OperatorConf& conf, const std::string& argument,
                            int64_t index) {
  return LbnIn(conf.input(), conf, argument, index, "input");
}

const std::string& OutputLbn(const OperatorConf& conf, const std::string& argument,
                             int64_t index) {
  return LbnIn(conf.output(), conf, argument, index, "output");
}

int64_t InputCount(const OperatorConf& conf, const std::string& argument) {
  auto it = conf.input().find(argument);
  return it == conf.input().end() ? 0 : it->second.value_size();
}

OpConfBuilder::OpConfBuilder(const std::string& op_type, const std::string& name) {
  conf_.set_op_type(op_type);
  conf_.set_name(name);
}

OpConfBuilder& OpConfBuilder::Input(const std::string& argument, const std::string& lbn) {
  (*conf_.mutable_input())[argument].add_value(lbn);
  return *this;
}

OpConfBuilder& OpConfBuilder::ControlInput(const std::string& op_name) {
  conf_.add_control_input(op_name);
  return *this;
}

OpConfBuilder& OpConfBuilder::Placement(const ParallelConf& placement) {
  *conf_.mutable_placement() = placement;
  return *this;
}

}  // namespace oneflow
