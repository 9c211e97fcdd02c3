// What `info` reports about a model: opsets, op counts, every Quant-family node, initializer bytes.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "qonnx/ir/model.h"

namespace qonnx::analysis {

struct QuantNodeInfo {
  std::string name, op_type, domain;
  std::optional<double> bitwidth;  // nullopt when not constant (for Trunc: out_bitwidth)
  bool is_signed = true;
  bool narrow = false;
  std::string rounding_mode;
  std::string scale;  // "per-tensor", "per-channel (axis A, N channels)", "per-element", "dynamic"
  std::optional<double> scale_value;  // per-tensor constant scale
  std::string zero_point;  // "0", "constant", "per-channel", "dynamic"
  std::string format;      // FloatQuant: "minifloat E4M3"
};

struct ValueSummary {
  std::string name;
  std::string type;  // e.g. "float[1,784]"
};

struct ModelSummary {
  int64_t ir_version = 0;
  std::string producer;
  std::vector<std::pair<std::string, int64_t>> opsets;
  std::map<std::string, int> op_counts;  // "domain::op" (sorted)
  size_t node_count = 0;
  std::vector<ValueSummary> inputs, outputs;
  std::vector<QuantNodeInfo> quant_nodes;
  size_t initializer_count = 0;
  size_t initializer_bytes = 0;                          // as stored (4-bit types packed)
  std::map<std::string, size_t> initializer_type_counts;  // element type name -> initializers (sorted)
  size_t annotation_count = 0;
};

ModelSummary summarize(const ir::Model& model);
std::string format_text(const ModelSummary& s);
std::string format_json(const ModelSummary& s);

}  // namespace qonnx::analysis
