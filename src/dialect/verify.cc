// The QONNX verifier: every QONNX node's arity for its version and its attributes (names, types,
// values), checked when a model is loaded, so that no path through the tool (a pass that never runs
// the node, a fold, a lowering) can accept a malformed node. The attribute sets follow qonnx's own
// custom op definitions (qonnx/custom_op/general, channels_last).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <onnx/onnx_pb.h>

#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/ir/finn_datatype.h"
#include "qonnx/ir/model.h"

namespace qonnx::dialect {
namespace {

using AttrType = onnx::AttributeProto::AttributeType;

enum class Rule { kAny, kBool, kRoundingMode, kFinite, kDataLayout, kPoolLayout, kFinnDatatype };

struct AttrSpec {
  const char* name;
  AttrType type;
  Rule rule;
};

// Every QONNX op takes exactly its inputs, all required, and has one output.
struct OpSpec {
  std::vector<const char*> inputs;
  std::vector<AttrSpec> attrs;
};

const AttrSpec kSigned{"signed", onnx::AttributeProto::INT, Rule::kBool};
const AttrSpec kNarrow{"narrow", onnx::AttributeProto::INT, Rule::kBool};
const AttrSpec kRounding{"rounding_mode", onnx::AttributeProto::STRING, Rule::kRoundingMode};

// The op's inputs and attributes at `version`; nullptr for ops checked elsewhere (channels_last ops
// carry ONNX attributes and are checked by ONNX's schema of the standard op).
const OpSpec* spec_of(Op op, int64_t version) {
  static const OpSpec quant{{"X", "scale", "zeropt", "bitwidth"}, {kSigned, kNarrow, kRounding}};
  static const OpSpec bipolar{{"X", "scale"}, {}};
  // Trunc v1 exports often carry v2's signed/narrow; qonnx's v1 ignores them.
  static const OpSpec trunc_v1{{"X", "scale", "zeropt", "in_bitwidth", "out_bitwidth"}, {kRounding, kSigned, kNarrow}};
  static const OpSpec trunc_v2{{"X", "scale", "zeropt", "in_bitwidth", "out_scale", "out_bitwidth"}, {kRounding, kSigned, kNarrow}};
  static const OpSpec float_quant{{"X", "scale", "exponent_bitwidth", "mantissa_bitwidth", "exponent_bias", "max_val"},
                                  {kRounding,
                                   {"has_inf", onnx::AttributeProto::INT, Rule::kBool},
                                   {"has_nan", onnx::AttributeProto::INT, Rule::kBool},
                                   {"has_subnormal", onnx::AttributeProto::INT, Rule::kBool},
                                   {"saturation", onnx::AttributeProto::INT, Rule::kBool},
                                   {"signed", onnx::AttributeProto::INT, Rule::kBool}}};
  static const OpSpec multi_threshold{{"v", "thresholds"},
                                      {{"out_dtype", onnx::AttributeProto::STRING, Rule::kFinnDatatype},
                                       {"out_scale", onnx::AttributeProto::FLOAT, Rule::kFinite},
                                       {"out_bias", onnx::AttributeProto::FLOAT, Rule::kFinite},
                                       {"data_layout", onnx::AttributeProto::STRING, Rule::kDataLayout}}};
  // Value ranges (kernel >= 1, ...) are checked where the attributes are read (quant/avg_pool.h).
  static const OpSpec quant_avg_pool{{"x"},
                                     {{"kernel", onnx::AttributeProto::INT, Rule::kAny},
                                      {"stride", onnx::AttributeProto::INT, Rule::kAny},
                                      {"ibits", onnx::AttributeProto::INT, Rule::kAny},
                                      {"obits", onnx::AttributeProto::INT, Rule::kAny},
                                      kSigned,
                                      {"data_layout", onnx::AttributeProto::STRING, Rule::kPoolLayout}}};
  switch (op) {
    case Op::kQuant: return &quant;
    case Op::kBipolarQuant: return &bipolar;
    case Op::kTrunc: return version >= 2 ? &trunc_v2 : &trunc_v1;
    case Op::kFloatQuant: return &float_quant;
    case Op::kMultiThreshold: return &multi_threshold;
    case Op::kQuantAvgPool2d: return &quant_avg_pool;
    default: return nullptr;
  }
}

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

const char* type_name(AttrType t) {
  switch (t) {
    case onnx::AttributeProto::INT: return "an int";
    case onnx::AttributeProto::FLOAT: return "a float";
    case onnx::AttributeProto::STRING: return "a string";
    case onnx::AttributeProto::INTS: return "a list of ints";
    case onnx::AttributeProto::FLOATS: return "a list of floats";
    case onnx::AttributeProto::STRINGS: return "a list of strings";
    case onnx::AttributeProto::TENSOR: return "a tensor";
    case onnx::AttributeProto::GRAPH: return "a graph";
    default: return "an attribute of another kind";
  }
}

// The attribute's kind: its declared type, or (old exporters leave `type` unset) the field it fills.
AttrType kind_of(const onnx::AttributeProto& a) {
  if (a.type() != onnx::AttributeProto::UNDEFINED) return a.type();
  if (a.has_i()) return onnx::AttributeProto::INT;
  if (a.has_f()) return onnx::AttributeProto::FLOAT;
  if (a.has_s()) return onnx::AttributeProto::STRING;
  if (a.has_t()) return onnx::AttributeProto::TENSOR;
  if (a.has_g()) return onnx::AttributeProto::GRAPH;
  if (a.ints_size() > 0) return onnx::AttributeProto::INTS;
  if (a.floats_size() > 0) return onnx::AttributeProto::FLOATS;
  if (a.strings_size() > 0) return onnx::AttributeProto::STRINGS;
  return onnx::AttributeProto::UNDEFINED;
}

// qonnx DataType names: the integer types, the float types and the parameterized ones.
bool is_finn_datatype(const std::string& name) {
  if (ir::integer_datatype_range(name)) return true;
  if (name == "FLOAT32" || name == "FLOAT16" || name == "BFLOAT16") return true;
  for (const char* prefix : {"FIXED<", "SCALEDINT<", "FLOAT<"}) {
    const std::string p(prefix);
    if (name.size() > p.size() + 1 && name.compare(0, p.size(), p) == 0 && name.back() == '>' &&
        std::all_of(name.begin() + static_cast<long>(p.size()), name.end() - 1,
                    [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == ',' || c == ' ' || c == '-'; }))
      return true;
  }
  return false;
}

Status attr_error(Code code, const onnx::AttributeProto& a, const std::string& what) {
  return Status(code, fmt::format("attribute '{}': {}", a.name(), what));
}

Status check_value(const onnx::AttributeProto& a, const AttrSpec& spec) {
  switch (spec.rule) {
    case Rule::kAny: return Status::ok();
    case Rule::kBool:
      if (a.i() != 0 && a.i() != 1) return attr_error(Code::kInvalidModel, a, fmt::format("must be 0 or 1, got {}", a.i()));
      return Status::ok();
    case Rule::kRoundingMode:
      if (!is_rounding_mode(a.s()))
        return attr_error(Code::kUnsupported, a, fmt::format("unknown rounding_mode '{}'; accepted: {}", a.s(),
                                                             fmt::join(rounding_mode_names(), ", ")));
      return Status::ok();
    case Rule::kFinite:
      if (!std::isfinite(a.f())) return attr_error(Code::kInvalidModel, a, fmt::format("must be finite, got {}", a.f()));
      return Status::ok();
    case Rule::kDataLayout: {
      // qonnx reads the layout as channels-last when it ends in C, channels-first (axis 1) otherwise.
      const std::string& s = a.s();
      const bool letters = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return std::isupper(static_cast<unsigned char>(c)); });
      const size_t c = s.find('C');
      if (!letters || s[0] != 'N' || c == std::string::npos || (c != 1 && c != s.size() - 1))
        return attr_error(Code::kInvalidModel, a, fmt::format("'{}' is not a data layout (NCHW, NHWC, NC, NCW, NWC, ...)", s));
      return Status::ok();
    }
    case Rule::kPoolLayout:
      if (a.s() != "NCHW" && a.s() != "NHWC")
        return attr_error(Code::kInvalidModel, a, fmt::format("must be NCHW or NHWC, got '{}'", a.s()));
      return Status::ok();
    case Rule::kFinnDatatype:
      if (!is_finn_datatype(a.s()))
        return attr_error(Code::kInvalidModel, a,
                          fmt::format("'{}' is not a qonnx DataType (INT4, UINT8, BIPOLAR, BINARY, TERNARY, FLOAT32, ...)", a.s()));
      return Status::ok();
  }
  return Status::ok();
}

// The version a QONNX node runs at: its domain's opset_import (1 when missing); always 1 in the
// default domain, which carries only the 2021 quantizers (as the kernels are registered).
int64_t op_version(const ir::Model& model, const ir::Node& node) {
  if (ir::is_default_domain(node.domain())) return 1;
  return model.op_version(node.domain());
}

}  // namespace

const std::vector<std::string>& rounding_mode_names() {
  static const std::vector<std::string> names = {"ROUND", "HALF_EVEN", "CEIL", "FLOOR", "UP", "DOWN", "HALF_UP", "HALF_DOWN"};
  return names;
}

bool is_rounding_mode(const std::string& text) {
  const auto& names = rounding_mode_names();
  return std::find(names.begin(), names.end(), upper(text)) != names.end();
}

Status verify_node(const ir::Node& node, int64_t version) {
  const Op op = classify(node);
  const OpSpec* spec = spec_of(op, version);
  if (!spec) return Status::ok();
  const std::string& name = node.op_type();
  const size_t given = node.inputs().size();
  const size_t need = spec->inputs.size();
  if (given != need) {
    std::string text = fmt::format("{} version {} takes {} inputs, got {} (inputs: {})", name, version, need, given,
                                   fmt::join(spec->inputs, ", "));
    if (op == Op::kTrunc)
      text += fmt::format(" (Trunc v1 has 5 inputs, v2 adds out_scale; the version is the model's opset_import of '{}', "
                          "and the default domain always means v1)", node.domain());
    return Status(Code::kInvalidModel, text);
  }
  for (size_t i = 0; i < given; ++i)
    if (!node.input(i))
      return Status(Code::kInvalidModel, fmt::format("input #{} ({}) is required but empty", i, spec->inputs[i]));
  if (node.outputs().size() != 1 || !node.output(0))
    return Status(Code::kInvalidModel, fmt::format("{} has one output, Y; the node lists {}", name, node.outputs().size()));

  std::vector<std::string> seen;
  for (const auto& a : node.rest().attribute()) {
    if (std::find(seen.begin(), seen.end(), a.name()) != seen.end())
      return attr_error(Code::kInvalidModel, a, "is given twice");
    seen.push_back(a.name());
    auto it = std::find_if(spec->attrs.begin(), spec->attrs.end(), [&](const AttrSpec& s) { return a.name() == s.name; });
    if (it == spec->attrs.end()) {
      std::vector<const char*> known;
      for (const auto& s : spec->attrs) known.push_back(s.name);
      return attr_error(Code::kInvalidModel, a,
                        known.empty() ? fmt::format("{} takes no attributes", name)
                                      : fmt::format("{} has no such attribute (it takes {})", name, fmt::join(known, ", ")));
    }
    const AttrType kind = kind_of(a);
    if (kind != it->type)
      return attr_error(Code::kInvalidModel, a, fmt::format("must be {}, got {}", type_name(it->type), type_name(kind)));
    QONNX_RETURN_IF_ERROR(check_value(a, *it));
  }
  if (op == Op::kMultiThreshold && std::find(seen.begin(), seen.end(), "out_dtype") == seen.end())
    return Status(Code::kInvalidModel, "MultiThreshold needs the attribute out_dtype (e.g. \"UINT4\")");
  return Status::ok();
}

Status verify_model(const ir::Model& model) {
  Status status = Status::ok();
  model.graph().visit_graphs([&](const ir::Graph& g) {
    for (const auto& node : g.nodes()) {
      if (!status.is_ok()) return;
      status = verify_node(*node, op_version(model, *node));
      if (!status.is_ok()) status.with_context(node->describe());
    }
  });
  return status;
}

}  // namespace qonnx::dialect
