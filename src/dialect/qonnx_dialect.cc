#include "qonnx/dialect/qonnx_dialect.h"

#include <algorithm>

#include "qonnx/ir/model.h"

namespace qonnx::dialect {

const std::vector<std::string>& general_domain_spellings() {
  static const std::vector<std::string> spellings = {kGeneralDomain, "finn.custom_op.general", "finn", "onnx.brevitas"};
  return spellings;
}

bool is_general_domain(const std::string& domain) {
  const auto& s = general_domain_spellings();
  return std::find(s.begin(), s.end(), domain) != s.end();
}

const std::vector<std::string>& general_op_types() {
  static const std::vector<std::string> ops = {kQuantOp, kIntQuantOp, kBipolarQuantOp, kTruncOp, kFloatQuantOp, kMultiThresholdOp, kQuantAvgPool2dOp};
  return ops;
}

namespace {

Op general_op(const std::string& op_type) {
  if (op_type == kQuantOp || op_type == kIntQuantOp) return Op::kQuant;
  if (op_type == kBipolarQuantOp) return Op::kBipolarQuant;
  if (op_type == kTruncOp) return Op::kTrunc;
  if (op_type == kFloatQuantOp) return Op::kFloatQuant;
  if (op_type == kMultiThresholdOp) return Op::kMultiThreshold;
  if (op_type == kQuantAvgPool2dOp) return Op::kQuantAvgPool2d;
  return Op::kNone;
}

}  // namespace

bool allowed_in_default_domain(Op op) { return op == Op::kQuant || op == Op::kBipolarQuant || op == Op::kTrunc; }

Op classify(const std::string& domain, const std::string& op_type) {
  if (is_general_domain(domain)) return general_op(op_type);
  if (ir::is_default_domain(domain)) {
    Op op = general_op(op_type);
    return allowed_in_default_domain(op) ? op : Op::kNone;
  }
  if (domain == kChannelsLastDomain) {
    if (op_type == "Conv") return Op::kChannelsLastConv;
    if (op_type == "MaxPool") return Op::kChannelsLastMaxPool;
    if (op_type == "BatchNormalization") return Op::kChannelsLastBatchNormalization;
  }
  return Op::kNone;
}

Op classify(const ir::Node& node) { return classify(node.domain(), node.op_type()); }

bool is_quantizer(Op op) {
  return op == Op::kQuant || op == Op::kBipolarQuant || op == Op::kTrunc || op == Op::kFloatQuant;
}
bool is_quantizer(const ir::Node& node) { return is_quantizer(classify(node)); }
bool is_integer_quantizer(const ir::Node& node) {
  Op op = classify(node);
  return is_quantizer(op) && op != Op::kFloatQuant;
}

}  // namespace qonnx::dialect
