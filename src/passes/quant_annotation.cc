#include "passes/quant_annotation.h"

#include <onnx/onnx_pb.h>

namespace qonnx::passes {
namespace {

constexpr const char* kNarrowKey = "qonnx_cc.narrow";
constexpr const char* kRoundingKey = "qonnx_cc.rounding_mode";

void set_entry(onnx::TensorAnnotation& a, const std::string& key, const std::string& value) {
  for (auto& kv : *a.mutable_quant_parameter_tensor_names())
    if (kv.key() == key) {
      kv.set_value(value);
      return;
    }
  auto* kv = a.add_quant_parameter_tensor_names();
  kv->set_key(key);
  kv->set_value(value);
}

}  // namespace

void annotate_folded_quantizer(ir::Graph& g, const std::string& tensor, bool narrow, const std::string& rounding_mode) {
  onnx::TensorAnnotation* entry = nullptr;
  for (auto& a : *g.mutable_rest().mutable_quantization_annotation())
    if (a.tensor_name() == tensor) entry = &a;
  if (!entry) {
    entry = g.mutable_rest().add_quantization_annotation();
    entry->set_tensor_name(tensor);
  }
  set_entry(*entry, kNarrowKey, narrow ? "1" : "0");
  set_entry(*entry, kRoundingKey, rounding_mode);
}

FoldedQuantizer folded_quantizer(const ir::Graph& g, const std::string& tensor) {
  FoldedQuantizer out;
  for (const auto& a : g.rest().quantization_annotation()) {
    if (a.tensor_name() != tensor) continue;
    for (const auto& kv : a.quant_parameter_tensor_names()) {
      if (kv.key() == kNarrowKey) out.narrow = kv.value() == "1";
      if (kv.key() == kRoundingKey) out.rounding_mode = kv.value();
    }
  }
  return out;
}

}  // namespace qonnx::passes
