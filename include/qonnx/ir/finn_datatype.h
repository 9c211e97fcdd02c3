// qonnx's integer DataType names (finn_datatype annotations) and the values they allow.
#pragma once

#include <optional>
#include <string>

namespace qonnx::ir {

struct IntegerRange {
  double min;
  double max;
  bool excludes_zero;  // BIPOLAR: -1 and +1 only
};

// BINARY, BIPOLAR, TERNARY, INTk, UINTk (k in 1..64); nullopt for float/scaled/unknown types.
std::optional<IntegerRange> integer_datatype_range(const std::string& datatype);

}  // namespace qonnx::ir
