// What a quantizer folded into integer weights was, kept in the weights' quantization_annotation
// next to their finn_datatype (keys qonnx_cc.narrow and qonnx_cc.rounding_mode): the integer codes
// alone cannot tell a narrow quantizer or its rounding mode, and qcdq-to-qonnx restores both.
#pragma once

#include <optional>
#include <string>

#include "qonnx/ir/model.h"

namespace qonnx::passes {

struct FoldedQuantizer {
  std::optional<bool> narrow;
  std::string rounding_mode;  // "" when not recorded
};

void annotate_folded_quantizer(ir::Graph& g, const std::string& tensor, bool narrow, const std::string& rounding_mode);
FoldedQuantizer folded_quantizer(const ir::Graph& g, const std::string& tensor);

}  // namespace qonnx::passes
