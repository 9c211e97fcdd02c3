#include "passes/quant_annotation.h"

namespace qonnx::passes {
namespace {

constexpr const char* kNarrowKey = "qonnx_cc.narrow";
constexpr const char* kRoundingKey = "qonnx_cc.rounding_mode";

}  // namespace

void annotate_folded_quantizer(ir::Graph& g, const std::string& tensor, bool narrow, const std::string& rounding_mode) {
  g.set_annotation(tensor, kNarrowKey, narrow ? "1" : "0");
  g.set_annotation(tensor, kRoundingKey, rounding_mode);
}

FoldedQuantizer folded_quantizer(const ir::Graph& g, const std::string& tensor) {
  FoldedQuantizer out;
  const std::string narrow = g.annotation(tensor, kNarrowKey);
  if (!narrow.empty()) out.narrow = narrow == "1";
  out.rounding_mode = g.annotation(tensor, kRoundingKey);
  return out;
}

}  // namespace qonnx::passes
